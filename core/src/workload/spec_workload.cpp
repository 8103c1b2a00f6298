// Generation from a workload spec (spec workload §6): seed partitioning,
// prefix groups, one lazy stream per client (workload/request_streams.hpp)
// and a k-way merge by (arrival, client index). Only the next request of
// each client (and the pending rounds of session clients) is ever held.
#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "blis/errors.hpp"
#include "blis/go_rand.hpp"
#include "blis/workload.hpp"
#include "workload/content.hpp"
#include "workload/request_streams.hpp"
#include "workload/spec_internal.hpp"

namespace blis {

namespace {

using workload::RequestStream;
using workload::SharedPrefix;

constexpr int64_t kDefaultPrefixLength = 50;  // spec workload §6.4

class SpecWorkload final : public WorkloadSource {
 public:
  // `spec` is expanded, upgraded and validated.
  // `sessions`: per stream, the ids of the closed-loop sessions whose
  // round 0 is sent (a probe's session_ids()); null for the probe itself.
  SpecWorkload(WorkloadSpec spec, int64_t horizon, int64_t max_requests, int32_t block_size,
               const std::vector<std::vector<int64_t>>* sessions)
      : spec_(std::move(spec)), max_requests_(max_requests), probing_(sessions == nullptr) {
    const std::vector<workload::ClientEntry> clients = workload::all_clients(spec_, members_);
    // spec workload §7.3: stream W draws the prefix vectors, then one seed per client.
    GoRand w(derive_seed(spec_.seed, "workload-gen"));
    const std::unordered_map<std::string, size_t> group_index = make_prefixes(clients, w, block_size);

    // spec workload §6.3: rate_i = (aggregate × (fraction_i / F)) / 1e6, req/µs.
    double fraction_sum = 0;
    for (const auto& entry : clients) fraction_sum += entry.client->rate_fraction;
    // §6.5: a client generates at most 2 × max_requests (only session
    // clients can reach it before the merge's truncation).
    int64_t cap = 0;
    if (max_requests > 0 && __builtin_mul_overflow(max_requests, int64_t{2}, &cap))
      cap = std::numeric_limits<int64_t>::max();
    // spec head §4.2: one stream for every concurrency client's users.
    GoRand users(spec_.seed + 10007);
    int64_t users_left = max_requests;  // the first requests count toward the cap
    // Closed-loop streams are made at once (they draw their users in client
    // order); open-loop ones once every client's seed is known, which says
    // whose content is its own (workload::own_streams). Null: open-loop.
    std::vector<std::unique_ptr<RequestStream>> made;
    std::vector<workload::StreamSetup> setups;
    for (const auto& entry : clients) {
      const ClientSpec& client = *entry.client;
      workload::StreamSetup setup;
      setup.client = &client;
      setup.where = entry.where;
      if (!client.prefix_group.empty()) setup.prefix = prefixes_[group_index.at(client.prefix_group)].get();
      setup.horizon = horizon;
      setup.block_size = block_size;
      SourceInfo info{client.id, client.prefix_group, setup.prefix ? setup.prefix->size() : 0, client.streaming};
      if (client.concurrency > 0) {
        if (max_requests > 0 && users_left <= 0) continue;
        add_closed_client(setup, users, users_left, made);
        sources_.push_back(std::move(info));
        tenants_.push_back(client.tenant_id);
        continue;
      }
      double rate = fraction_sum == 0 ? 0 : (spec_.aggregate_rate * (client.rate_fraction / fraction_sum)) / 1e6;
      if (rate <= 0) continue;  // no draws (unreachable after validation)
      if (client.own_rate_per_us) rate = *client.own_rate_per_us;
      setup.rate = rate;
      setup.seed = w.int63();
      setup.cap = cap;
      add_open_client(std::move(setup), setups, made);
      sources_.push_back(std::move(info));
      tenants_.push_back(client.tenant_id);
    }
    start_streams(made, setups);
    start_sessions(setups, sessions);
    warps_.resize(streams_.size());
  }

  bool has_tenant(const std::string& tenant) const override {
    return std::find(tenants_.begin(), tenants_.end(), tenant) != tenants_.end();
  }

  // Re-anchors each of the tenant's streams at `now`: its source time then
  // (through its earlier warp) maps to now, later gaps are divided by the
  // accumulated factor. The heap is keyed again by the new times.
  double change_tenant_rate(const std::string& tenant, double factor, double now) override {
    double acc = 0;
    for (size_t k = 0; k < warps_.size(); ++k) {
      if (tenants_[k] != tenant) continue;
      Warp& w = warps_[k];
      const double src = w.on ? w.src + (now - w.dst) * w.factor : now;
      w = Warp{src, now, w.factor * factor, true};
      acc = w.factor;
    }
    if (acc == 0) return 0;
    any_warp_ = true;
    std::vector<Entry> entries;
    for (; !heap_.empty(); heap_.pop()) entries.push_back(heap_.top());
    for (const Entry& e : entries)
      heap_.emplace(warped(e.second, streams_[e.second]->pending_arrival()), e.second);
    return acc;
  }

  // The probe: every request generated, per stream the ids of the
  // closed-loop sessions whose round 0 is sent, in the order sent.
  std::vector<std::vector<int64_t>> session_ids() {
    probe_ids_.assign(streams_.size(), {});
    WorkloadRequest r;
    while (next(r)) {
    }
    return std::move(probe_ids_);
  }

  // spec head §4.2: the user's next request, counted toward the cap; a
  // closed-loop session's next round, not counted (HEAD: session.go OnComplete).
  bool follow_up(const WorkloadRequest& done, int64_t t, WorkloadRequest& out) override {
    const auto [k, u] = user_stream_[static_cast<size_t>(done.user)];
    if (!closed_[k]) {
      if (!session_follow_up(static_cast<size_t>(u), done, t, out)) return false;
    } else {
      if (max_requests_ > 0 && taken_ >= static_cast<uint64_t>(max_requests_)) return false;
      try {
        if (!closed_[k]->follow_up(u, t, out)) return false;
      } catch (const InputError& e) {
        workload::rethrow_located(spec_.source, e);
      }
      ++taken_;
    }
    out.id = emitted_++;
    out.source = static_cast<int32_t>(k);
    out.user = done.user;
    out.round = done.round + 1;
    out.deadline_us = timeouts_[k] > 0 ? out.arrival_us + timeouts_[k] : 0;
    out.slo_target_us = slo_targets_[k];
    return true;
  }

  // A concurrency client's user is its session (HEAD: generator.go names it
  // by the client and the user's number there).
  std::string session_name(const WorkloadRequest& r) const override {
    if (r.session < 0 && r.user >= 0 && static_cast<size_t>(r.user) < user_stream_.size()) {
      const auto [k, u] = user_stream_[static_cast<size_t>(r.user)];
      if (closed_[k] != nullptr) return fmt::format("concurrency_{}_user_{}", sources_[k].client_id, u);
    }
    return WorkloadSource::session_name(r);
  }

  const SourceInfo* source_info(int32_t k) const override {
    return k >= 0 && static_cast<size_t>(k) < sources_.size() ? &sources_[static_cast<size_t>(k)] : nullptr;
  }

  bool next(WorkloadRequest& out) override {
    for (;;) {
      if (max_requests_ > 0 && taken_ >= static_cast<uint64_t>(max_requests_)) return false;
      if (heap_.empty()) return false;
      // Ties in arrival go to the earlier client (spec workload §6.9); the
      // heap key carries the position in streams_, which follows client order.
      const size_t k = heap_.top().second;
      heap_.pop();
      RequestStream& stream = *streams_[k];
      // A closed-loop session's later rounds are generated in the arrival
      // order (they count against the cap there, as in HEAD) but sent only
      // when the previous round completes (follow_up). A later round whose
      // round 0 fell outside the lifecycle windows has no session to follow:
      // HEAD sends it on its schedule.
      const workload::SessionContext* session =
          any_sessions_ && closed_session_[k] ? stream.pending_session() : nullptr;
      const bool later_round = session && stream.pending_round() > 0 && session->round0_kept;
      stream.take(out);
      if (any_warp_) out.arrival_us = warped(k, out.arrival_us);
      out.source = static_cast<int32_t>(k);
      ++taken_;
      if (!later_round) {
        out.id = emitted_++;
        out.deadline_us = timeouts_[k] > 0 ? out.arrival_us + timeouts_[k] : 0;
        out.slo_target_us = slo_targets_[k];
        if (out.user >= 0) out.user += user_base_[k];  // the stream's user number, made global
        if (session && stream.pending_round() == 0) start_session(k, *session, out);
      }
      // Samplers of multimodal and reasoning blocks are built at a client's
      // first request, so their errors surface here.
      try {
        if (stream.advance())
          heap_.emplace(any_warp_ ? warped(k, stream.pending_arrival()) : stream.pending_arrival(), k);
      } catch (const InputError& e) {
        workload::rethrow_located(spec_.source, e);
      }
      if (!later_round) return true;
    }
  }

 private:
  // spec workload §6.4: one shared prefix per prefix group, drawn from `w`
  // in client order; the first client mentioning a group fixes its length.
  // The groups' places in prefixes_.
  std::unordered_map<std::string, size_t> make_prefixes(const std::vector<workload::ClientEntry>& clients, GoRand& w,
                                                        int32_t block_size) {
    std::unordered_map<std::string, size_t> group_index;
    for (const auto& entry : clients) {
      const ClientSpec& client = *entry.client;
      if (client.prefix_group.empty() || group_index.count(client.prefix_group)) continue;
      const int64_t length = client.prefix_length > 0 ? client.prefix_length : kDefaultPrefixLength;
      prefixes_.push_back(std::make_unique<SharedPrefix>(block_size));
      prefixes_.back()->extend(w, length);
      group_index.emplace(client.prefix_group, prefixes_.size() - 1);
    }
    return group_index;
  }

  // A concurrency client: its stream is made now, its users drawn from
  // `users` and counted against users_left.
  void add_closed_client(const workload::StreamSetup& setup, GoRand& users, int64_t& users_left,
                         std::vector<std::unique_ptr<RequestStream>>& made) {
    auto stream = std::make_unique<workload::ConcurrencyStream>(setup, users, max_requests_ > 0 ? users_left : 0);
    users_left -= stream->users();
    for (int32_t u = 0; u < stream->users(); ++u) user_stream_.push_back({made.size(), u});
    user_base_.push_back(static_cast<int32_t>(user_stream_.size()) - stream->users());
    closed_.push_back(stream.get());
    closed_session_.push_back(false);
    made.push_back(std::move(stream));
    timeouts_.push_back(setup.client->timeout_us.value_or(kDefaultClosedLoopTimeoutUs));
    slo_targets_.push_back(static_cast<int32_t>(setup.client->slo_target_us));
  }

  // An open-loop client: its setup is kept, its stream made by start_streams().
  void add_open_client(workload::StreamSetup setup, std::vector<workload::StreamSetup>& setups,
                       std::vector<std::unique_ptr<RequestStream>>& made) {
    const ClientSpec& client = *setup.client;
    const bool closed_session = spec_.closed_loop_sessions && client.reasoning && client.reasoning->multi_turn;
    setup.track_sessions = closed_session;
    any_sessions_ = any_sessions_ || closed_session;
    setups.push_back(std::move(setup));
    made.push_back(nullptr);
    user_base_.push_back(-1);
    closed_.push_back(nullptr);
    closed_session_.push_back(closed_session);
    // Session clients' requests have HEAD's 300 s default deadline.
    timeouts_.push_back(client.timeout_us.value_or(closed_session ? kDefaultClosedLoopTimeoutUs : 0));
    slo_targets_.push_back(static_cast<int32_t>(client.slo_target_us));
  }

  // The streams in client order: the closed-loop ones made, the open-loop
  // ones made now that every seed says whose content is its own.
  void start_streams(std::vector<std::unique_ptr<RequestStream>>& made, std::vector<workload::StreamSetup>& setups) {
    std::vector<int64_t> seeds;
    seeds.reserve(setups.size());
    for (const auto& setup : setups) seeds.push_back(setup.seed);
    const std::vector<bool> own = workload::own_streams(seeds, derive_seed(spec_.seed, "workload-gen"));
    streams_.reserve(made.size());
    size_t open = 0;
    for (auto& stream : made) {
      if (stream) {
        streams_.push_back(std::move(stream));
        continue;
      }
      setups[open].own_stream = own[open];
      streams_.push_back(workload::make_request_stream(setups[open]));
      ++open;
    }
  }

  // Each stream's first arrival. Closed-loop sessions (HEAD: generator.go
  // GenerateWorkload): per client in client order, its sessions whose round
  // 0 is sent sorted by the text of their id ("sess_<id>"), and
  // rand.New(seed + 7919) draws one seed for each in that order.
  void start_sessions(const std::vector<workload::StreamSetup>& setups,
                      const std::vector<std::vector<int64_t>>* sessions) {
    GoRand session_seeds(spec_.seed + 7919);
    shapes_.resize(streams_.size());
    seeds_.resize(streams_.size());
    size_t open_k = 0;
    for (size_t k = 0; k < streams_.size(); ++k) {
      if (streams_[k]->advance()) heap_.emplace(streams_[k]->pending_arrival(), k);
      if (closed_[k] != nullptr) continue;
      if (closed_session_[k] && !probing_) {
        shapes_[k] = std::make_unique<workload::SessionShape>(setups[open_k]);
        std::vector<std::pair<std::string, int64_t>> ids;
        for (const int64_t id : (*sessions)[k]) ids.emplace_back(std::to_string(id), id);
        std::sort(ids.begin(), ids.end());
        for (const auto& entry : ids) seeds_[k].emplace(entry.second, session_seeds.int63());
      }
      ++open_k;
    }
  }

  // Round 0 of a closed-loop session is sent: the session gets a user
  // number, and its later rounds wait for completions.
  void start_session(size_t k, const workload::SessionContext& session, WorkloadRequest& out) {
    if (probing_) {
      probe_ids_[k].push_back(session.id);
      return;
    }
    const auto seed = seeds_[k].find(session.id);
    rounds_.push_back(std::make_unique<workload::SessionRounds>(*shapes_[k], seed == seeds_[k].end() ? 0 : seed->second,
                                                                out, session));
    out.user = static_cast<int32_t>(user_stream_.size());
    user_stream_.push_back({k, static_cast<int32_t>(rounds_.size() - 1)});
  }

  // The next round of session `u` after `done` completed at t.
  bool session_follow_up(size_t u, const WorkloadRequest& done, int64_t t, WorkloadRequest& out) {
    std::unique_ptr<workload::SessionRounds>& rounds = rounds_[u];
    try {
      if (rounds && rounds->follow_up(done.round, t, out)) {
        out.slo_class = done.slo_class;
        out.tenant_id = done.tenant_id;
        out.model = done.model;
        out.image_tokens = out.audio_tokens = out.video_tokens = 0;  // HEAD's sessions ignore a multimodal block
        out.adapter = done.adapter;
        out.session = done.session;
        return true;
      }
    } catch (const InputError& e) {
      workload::rethrow_located(spec_.source, e);
    }
    rounds.reset();  // the session has ended
    return false;
  }

  // A stream's arrival times after its tenant's rate events: source time s
  // arrives at dst + (s - src) / factor.
  struct Warp {
    double src = 0, dst = 0, factor = 1;
    bool on = false;
  };
  int64_t warped(size_t k, int64_t s) const {
    const Warp& w = warps_[k];
    return w.on ? static_cast<int64_t>(std::llround(w.dst + (static_cast<double>(s) - w.src) / w.factor)) : s;
  }

  using Entry = std::pair<int64_t, size_t>;  // (arrival, position in streams_)
  WorkloadSpec spec_;                         // the clients the streams read
  std::vector<SourceInfo> sources_;            // by stream
  std::vector<std::string> tenants_;           // by stream, its client's tenant_id
  std::vector<Warp> warps_;                    // by stream
  bool any_warp_ = false;
  std::deque<ClientSpec> members_;            // cohort members' shared descriptions
  int64_t max_requests_;
  uint64_t emitted_ = 0;  // ids given
  uint64_t taken_ = 0;    // requests generated, counted against max_requests_
  std::vector<std::unique_ptr<SharedPrefix>> prefixes_;
  std::vector<std::unique_ptr<RequestStream>> streams_;
  std::vector<int64_t> timeouts_;  // per stream, its client's timeout (µs, 0 = none)
  std::vector<int32_t> slo_targets_;  // per stream, its client's slo_target_us (0 = none)
  // Closed-loop users: per stream its concurrency stream (null for the
  // others) and its first user's global number; per global user its stream
  // and its number there.
  std::vector<workload::ConcurrencyStream*> closed_;
  std::vector<int32_t> user_base_;
  std::vector<std::pair<size_t, int32_t>> user_stream_;
  // Closed-loop sessions: whether a stream's client has them; per such
  // stream the shape of their rounds and each session's seed by its id; per
  // session sent its later rounds (null once it ended); the probe's ids.
  std::vector<bool> closed_session_;
  bool any_sessions_ = false;
  std::vector<std::unique_ptr<workload::SessionShape>> shapes_;
  std::vector<std::unordered_map<int64_t, int64_t>> seeds_;
  std::vector<std::unique_ptr<workload::SessionRounds>> rounds_;
  bool probing_;
  std::vector<std::vector<int64_t>> probe_ids_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
};

class EmptyWorkload final : public WorkloadSource {
 public:
  bool next(WorkloadRequest&) override { return false; }
};

}  // namespace

WorkloadSpec synthesize_distribution_spec(const DistributionWorkload& w, int64_t seed) {
  // spec workload §2: the one-client spec behind the distribution mode and presets.
  if (w.prefix_tokens > kMaxRequestTokens)
    throw InputError("prefix_tokens", "a shared prefix of " + std::to_string(w.prefix_tokens) +
                                          " tokens is more than one request may hold (" +
                                          std::to_string(kMaxRequestTokens) + "); give a smaller prefix");
  WorkloadSpec spec;
  spec.version = "2";
  spec.category = "language";
  spec.aggregate_rate = w.rate;
  spec.num_requests = w.num_requests;
  spec.seed = seed;
  ClientSpec client;
  client.id = "distribution";
  if (w.concurrency > 0) {  // spec head §4.2: one closed-loop client
    client.concurrency = w.concurrency;
    client.think_time_us = w.think_time_us;
    spec.aggregate_rate = 0;
    client.arrival.process = "constant";
  } else {
    client.rate_fraction = 1.0;
    client.arrival = w.arrival;
  }
  client.input_distribution.type = "gaussian";
  client.input_distribution.params = {{"mean", static_cast<double>(w.prompt_mean)},
                                      {"std_dev", static_cast<double>(w.prompt_stdev)},
                                      {"min", static_cast<double>(w.prompt_min)},
                                      {"max", static_cast<double>(w.prompt_max)}};
  client.output_distribution.type = "gaussian";
  client.output_distribution.params = {{"mean", static_cast<double>(w.output_mean)},
                                       {"std_dev", static_cast<double>(w.output_stdev)},
                                       {"min", static_cast<double>(w.output_min)},
                                       {"max", static_cast<double>(w.output_max)}};
  if (w.prefix_tokens > 0) {
    client.prefix_group = "shared";
    client.prefix_length = w.prefix_tokens;
  }
  spec.clients.push_back(std::move(client));
  return spec;
}

std::unique_ptr<WorkloadSource> make_spec_workload(const WorkloadSpec& spec_in, int64_t horizon,
                                                   int64_t max_requests, int32_t block_size) {
  // spec workload §6.1 preamble, in order.
  if (horizon <= 0) return std::make_unique<EmptyWorkload>();
  if (block_size <= 0) {
    throw InputError("block_size", "must be > 0, got " + std::to_string(block_size));
  }
  WorkloadSpec spec = spec_in;
  try {
    if (max_requests < 0) {
      throw InputError("num_requests", "must be >= 0, got " + std::to_string(max_requests));
    }
    // Clients made from a shorthand are placed, in errors, at the shorthand.
    const auto expanded_from = [&](const char* key) {
      if (const auto it = spec.source.positions.find(key); it != spec.source.positions.end())
        spec.source.positions["clients"] = it->second;
    };
    if (spec.inference_perf && spec.clients.empty()) {
      workload::expand_inference_perf(spec);
      expanded_from("inference_perf");
    }
    if (spec.servegen_data && spec.clients.empty()) {
      spec.clients = workload::load_servegen_clients(*spec.servegen_data);
      expanded_from("servegen_data");
    }
    if (spec.expanded_timeout_us)  // --timeout reaches the expanded clients too (as HEAD)
      for (auto& c : spec.clients) c.timeout_us = *spec.expanded_timeout_us;
    workload::upgrade_legacy_version(spec);
    validate_workload_spec(spec);
  } catch (const InputError& e) {
    workload::rethrow_located(spec.source, e);
  }
  // Building the streams may fail too (a distribution missing a parameter).
  const SpecSource source = spec.source;
  try {
    // Closed-loop sessions draw their seeds in an order only the whole
    // workload tells: a probe generates it first (HEAD generates eagerly).
    const bool sessions = spec.closed_loop_sessions &&
                          std::any_of(spec.clients.begin(), spec.clients.end(), [](const ClientSpec& c) {
                            return c.reasoning && c.reasoning->multi_turn;
                          });
    std::vector<std::vector<int64_t>> ids;
    if (sessions) ids = SpecWorkload(spec, horizon, max_requests, block_size, nullptr).session_ids();
    return std::make_unique<SpecWorkload>(std::move(spec), horizon, max_requests, block_size, &ids);
  } catch (const InputError& e) {
    workload::rethrow_located(source, e);
  }
}

}  // namespace blis
