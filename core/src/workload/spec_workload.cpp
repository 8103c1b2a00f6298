// Generation from a workload spec (spec workload §6): seed partitioning,
// prefix groups, one lazy stream per client and a k-way merge by
// (arrival, client index). Only the next request of each client is ever held.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>

#include "blis/errors.hpp"
#include "blis/go_rand.hpp"
#include "blis/workload.hpp"
#include "workload/content.hpp"
#include "workload/samplers.hpp"
#include "workload/slo_class.hpp"

namespace blis {

namespace {

using workload::ArrivalSampler;
using workload::ContentHasher;
using workload::LengthSampler;
using workload::SharedPrefix;

constexpr int64_t kDefaultPrefixLength = 50;  // spec workload §6.4

// Schema v1 names of two SLO classes, mapped when the version is "" or "1"
// (spec workload §5.1 step 4).
bool is_legacy_version(const std::string& version) { return version.empty() || version == "1"; }

std::string upgraded_slo_class(const std::string& version, const std::string& slo) {
  if (is_legacy_version(version)) {
    if (slo == "realtime") return "critical";
    if (slo == "interactive") return "standard";
  }
  return slo;
}

bool is_valid_dist_type(const std::string& type) {
  return type == "gaussian" || type == "exponential" || type == "pareto_lognormal" ||
         type == "constant" || type == "empirical";
}

void validate_dist(const DistSpec& dist, const std::string& where) {
  if (!is_valid_dist_type(dist.type)) {
    throw InputError(where + ".type",
                     "unknown distribution type '" + dist.type +
                         "' (expected gaussian, exponential, pareto_lognormal, constant or "
                         "empirical)");
  }
  for (const auto& [name, value] : dist.params) {
    if (!std::isfinite(value)) throw InputError(where + ".params." + name, "must be finite");
  }
}

std::string fmt_double(double v) { return fmt::format("{}", v); }

// One client's request stream (spec workload §6.6), generated one request at a
// time; the draws are those of the reference's loop, in the same order.
class ClientStream {
 public:
  ClientStream(size_t index, const ClientSpec& client, double rate, int64_t seed,
               const SharedPrefix* prefix, int64_t horizon, int32_t block_size)
      : where_("clients[" + std::to_string(index) + "]"),
        rng_(seed),
        arrival_(client.arrival, rate, where_),
        input_(client.input_distribution, where_ + ".input_distribution"),
        output_(client.output_distribution, where_ + ".output_distribution"),
        prefix_(prefix),
        horizon_(horizon),
        block_size_(block_size),
        slo_class_(*workload::slo_class_from_name(client.slo_class)),
        tenant_id_(client.tenant_id),
        model_(client.model) {}

  int64_t pending_arrival() const { return pending_.arrival_us; }

  // Generates the next request into the pending slot; false once the client's
  // next arrival would reach the horizon.
  bool advance() {
    const int64_t iat = arrival_.next(rng_);
    if (iat >= horizon_ - t_) return false;  // t + iat >= horizon, without overflow
    t_ += iat;
    const int64_t in_len = checked_length(input_.sample(rng_), ".input_distribution");
    const int64_t out_len = checked_length(output_.sample(rng_), ".output_distribution");
    const int64_t prefix_len = prefix_ ? prefix_->size() : 0;
    const int64_t total_in = prefix_len + in_len;
    if (total_in > std::numeric_limits<int32_t>::max()) {
      throw InputError(where_, "input of " + std::to_string(total_in) + " tokens is too long");
    }
    pending_.arrival_us = t_;
    pending_.input_tokens = static_cast<int32_t>(total_in);
    pending_.output_tokens = static_cast<int32_t>(out_len);
    pending_.max_output_tokens = static_cast<int32_t>(out_len);  // spec workload §1.3

    auto& hashes = pending_.block_hashes;
    hashes.clear();
    hashes.reserve(static_cast<size_t>((total_in + out_len) / block_size_));
    ContentHasher hasher(hashes, block_size_);
    if (prefix_) prefix_->begin(hashes, hasher, prefix_len);
    hasher.draw(rng_, in_len);   // the client's own prompt tokens
    hasher.draw(rng_, out_len);  // the pre-determined response
    return true;
  }

  // Hands the pending request over; the hash buffers are swapped and the
  // strings assigned, so a caller reusing `out` causes no allocation.
  void take(WorkloadRequest& out) {
    out.arrival_us = pending_.arrival_us;
    out.input_tokens = pending_.input_tokens;
    out.output_tokens = pending_.output_tokens;
    out.max_output_tokens = pending_.max_output_tokens;
    out.slo_class = slo_class_;
    out.tenant_id = tenant_id_;
    out.model = model_;
    std::swap(out.block_hashes, pending_.block_hashes);
  }

 private:
  int64_t checked_length(int64_t n, const char* dist) const {
    if (n < 0 || n > std::numeric_limits<int32_t>::max()) {
      throw InputError(where_ + dist, "sampled length " + std::to_string(n) + " is out of range");
    }
    return n;
  }

  std::string where_;
  GoRand rng_;
  ArrivalSampler arrival_;
  LengthSampler input_;
  LengthSampler output_;
  const SharedPrefix* prefix_;
  int64_t horizon_;
  int32_t block_size_;
  int32_t slo_class_;
  std::string tenant_id_;
  std::string model_;
  int64_t t_ = 0;
  WorkloadRequest pending_;  // only arrival, lengths and hashes are used
};

class SpecWorkload final : public WorkloadSource {
 public:
  SpecWorkload(const WorkloadSpec& spec, int64_t horizon, int64_t max_requests, int32_t block_size)
      : max_requests_(max_requests) {
    // spec workload §7.3: stream W draws the prefix vectors, then one seed per client.
    GoRand w(derive_seed(spec.seed, "workload-gen"));
    std::unordered_map<std::string, size_t> group_index;
    for (const auto& client : spec.clients) {
      if (client.prefix_group.empty() || group_index.count(client.prefix_group)) continue;
      // The first client mentioning the group fixes its length (§6.4).
      const int64_t length = client.prefix_length > 0 ? client.prefix_length : kDefaultPrefixLength;
      prefixes_.push_back(std::make_unique<SharedPrefix>(block_size));
      prefixes_.back()->extend(w, length);
      group_index.emplace(client.prefix_group, prefixes_.size() - 1);
    }

    // spec workload §6.3: rate_i = (aggregate × (fraction_i / F)) / 1e6, req/µs.
    double fraction_sum = 0;
    for (const auto& client : spec.clients) fraction_sum += client.rate_fraction;
    clients_.reserve(spec.clients.size());
    for (size_t i = 0; i < spec.clients.size(); ++i) {
      const ClientSpec& client = spec.clients[i];
      const double rate = fraction_sum == 0
                              ? 0
                              : (spec.aggregate_rate * (client.rate_fraction / fraction_sum)) / 1e6;
      if (rate <= 0) continue;  // no draws (unreachable after validation)
      const int64_t client_seed = w.int63();
      const SharedPrefix* prefix = nullptr;
      if (!client.prefix_group.empty()) {
        prefix = prefixes_[group_index.at(client.prefix_group)].get();
      }
      clients_.emplace_back(i, client, rate, client_seed, prefix, horizon, block_size);
    }
    for (size_t k = 0; k < clients_.size(); ++k) {
      if (clients_[k].advance()) heap_.emplace(clients_[k].pending_arrival(), k);
    }
  }

  bool next(WorkloadRequest& out) override {
    if (max_requests_ > 0 && emitted_ >= static_cast<uint64_t>(max_requests_)) return false;
    if (heap_.empty()) return false;
    // Ties in arrival go to the earlier client (spec workload §6.9); the
    // heap key carries the position in clients_, which follows client order.
    const size_t k = heap_.top().second;
    heap_.pop();
    ClientStream& stream = clients_[k];
    stream.take(out);
    out.id = emitted_++;
    if (stream.advance()) heap_.emplace(stream.pending_arrival(), k);
    return true;
  }

 private:
  using Entry = std::pair<int64_t, size_t>;  // (arrival, position in clients_)
  int64_t max_requests_;
  uint64_t emitted_ = 0;
  std::vector<std::unique_ptr<SharedPrefix>> prefixes_;
  std::vector<ClientStream> clients_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
};

class EmptyWorkload final : public WorkloadSource {
 public:
  bool next(WorkloadRequest&) override { return false; }
};

}  // namespace

WorkloadSpec synthesize_distribution_spec(const DistributionWorkload& w, int64_t seed) {
  // spec workload §2: the one-client spec behind the distribution mode and presets.
  WorkloadSpec spec;
  spec.version = "2";
  spec.category = "language";
  spec.aggregate_rate = w.rate;
  spec.num_requests = w.num_requests;
  spec.seed = seed;
  ClientSpec client;
  client.id = "distribution";
  client.rate_fraction = 1.0;
  client.arrival.process = "constant";
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

void validate_workload_spec(const WorkloadSpec& spec) {
  // spec workload §5.13, in order; the first failure wins.
  if (!spec.category.empty() && spec.category != "language" && spec.category != "multimodal" &&
      spec.category != "reasoning") {
    throw InputError("category", "unknown category '" + spec.category +
                                     "' (expected language, multimodal, reasoning or empty)");
  }
  if (!std::isfinite(spec.aggregate_rate) || spec.aggregate_rate <= 0) {
    throw InputError("aggregate_rate",
                     "must be a finite number > 0, got " + fmt_double(spec.aggregate_rate));
  }
  if (spec.clients.empty()) throw InputError("clients", "the workload has no clients");
  for (size_t i = 0; i < spec.clients.size(); ++i) {
    const ClientSpec& c = spec.clients[i];
    const std::string where = "clients[" + std::to_string(i) + "]";
    const std::string slo = upgraded_slo_class(spec.version, c.slo_class);
    if (!workload::slo_class_from_name(slo)) {
      throw InputError(where + ".slo_class", "unknown SLO class '" + c.slo_class + "' (expected " +
                                                 workload::kSloClassChoices + ")");
    }
    if (!std::isfinite(c.rate_fraction) || c.rate_fraction <= 0) {
      throw InputError(where + ".rate_fraction",
                       "must be a finite number > 0, got " + fmt_double(c.rate_fraction));
    }
    const std::string& process = c.arrival.process;
    if (process != "poisson" && process != "gamma" && process != "weibull" &&
        process != "constant") {
      throw InputError(where + ".arrival.process",
                       "unknown arrival process '" + process +
                           "' (expected poisson, gamma, weibull or constant)");
    }
    if (c.arrival.cv) {
      const double cv = *c.arrival.cv;
      if (process == "weibull" && (cv < 0.01 || cv > 10.4)) {
        throw InputError(where + ".arrival.cv",
                         "weibull cv must lie in [0.01, 10.4], got " + fmt_double(cv));
      }
      if (!std::isfinite(cv) || cv <= 0) {
        throw InputError(where + ".arrival.cv",
                         "must be a finite number > 0, got " + fmt_double(cv));
      }
    }
    if (c.prefix_length < 0) {
      throw InputError(where + ".prefix_length",
                       "must be >= 0, got " + std::to_string(c.prefix_length));
    }
    validate_dist(c.input_distribution, where + ".input_distribution");
    validate_dist(c.output_distribution, where + ".output_distribution");
  }
}

std::unique_ptr<WorkloadSource> make_spec_workload(const WorkloadSpec& spec_in, int64_t horizon,
                                                   int64_t max_requests, int32_t block_size) {
  // spec workload §6.1 preamble, in order.
  if (horizon <= 0) return std::make_unique<EmptyWorkload>();
  if (max_requests < 0) {
    throw InputError("num_requests", "must be >= 0, got " + std::to_string(max_requests));
  }
  if (block_size <= 0) {
    throw InputError("block_size", "must be > 0, got " + std::to_string(block_size));
  }
  WorkloadSpec spec = spec_in;
  if (is_legacy_version(spec.version)) {
    for (size_t i = 0; i < spec.clients.size(); ++i) {
      std::string& slo = spec.clients[i].slo_class;
      const std::string mapped = upgraded_slo_class(spec.version, slo);
      if (mapped != slo) {
        spdlog::warn("clients[{}].slo_class: '{}' is deprecated, use '{}'", i, slo, mapped);
        slo = mapped;
      }
    }
    spec.version = "2";
  }
  validate_workload_spec(spec);
  return std::make_unique<SpecWorkload>(spec, horizon, max_requests, block_size);
}

}  // namespace blis
