// Expansion of the spec's shorthands into clients: cohorts (spec workload
// §5.10) and the inference-perf block (§5.12). Neither draws randomness.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>

#include "workload/samplers.hpp"
#include "workload/spec_internal.hpp"

namespace blis::workload {

namespace {

constexpr int64_t kUsPerHour = 3600000000;
constexpr int64_t kUsPerSecond = 1000000;

DistSpec constant_dist(int64_t value) { return {"constant", {{"value", static_cast<double>(value)}}}; }

// spec workload §5.12 validation, in the reference's order.
void validate_inference_perf(const InferencePerfSpec& ip) {
  if (ip.stages.empty()) throw InputError("inference_perf.stages", "at least one stage is required");
  for (size_t i = 0; i < ip.stages.size(); ++i) {
    const auto& st = ip.stages[i];
    const std::string where = "inference_perf.stages[" + std::to_string(i) + "]";
    if (st.duration <= 0)
      throw InputError(where + ".duration", fmt::format("must be > 0 seconds, got {}", st.duration));
    if (!std::isfinite(st.rate) || st.rate <= 0)
      throw InputError(where + ".rate", fmt::format("must be a finite number > 0, got {}", st.rate));
  }
  if (!ip.shared_prefix) throw InputError("inference_perf.shared_prefix", "is required");
  const SharedPrefixSpec& sp = *ip.shared_prefix;
  const auto positive = [](const char* key, int64_t v) {
    if (v <= 0) throw InputError(std::string("inference_perf.shared_prefix.") + key, fmt::format("must be > 0, got {}", v));
  };
  const auto non_negative = [](const char* key, int64_t v) {
    if (v < 0) throw InputError(std::string("inference_perf.shared_prefix.") + key, fmt::format("must be >= 0, got {}", v));
  };
  positive("num_unique_system_prompts", sp.num_unique_system_prompts);
  positive("num_users_per_system_prompt", sp.num_users_per_system_prompt);
  non_negative("system_prompt_len", sp.system_prompt_len);
  non_negative("question_len", sp.question_len);
  non_negative("output_len", sp.output_len);
}

// What the clients of one stage of inference_perf share.
struct StageShape {
  const SharedPrefixSpec& sp;
  const InferencePerfStage& stage;
  size_t index;       // the stage's
  int64_t per_stage;  // clients per stage
  bool multi_stage, closed_loop;
  int64_t window_start, window_end;
  std::optional<ReasoningSpec> reasoning;
  int64_t requests;  // closed-loop sessions: the stage's requests (else 0)
};

// Closed-loop sessions (HEAD): the stage's rate x duration requests,
// truncated, split evenly over its sessions (the first `extra` one more).
int64_t closed_stage_requests(const InferencePerfStage& stage, size_t s) {
  const int64_t requests = go_trunc(stage.rate * static_cast<double>(stage.duration));
  if (requests < 1)
    throw InputError("inference_perf.stages[" + std::to_string(s) + "]",
                     fmt::format("rate {} x duration {} s makes no request; raise the rate or the duration",
                                 stage.rate, stage.duration));
  return requests;
}

// Each session spreads its stage's requests over the stage: rounds
// = ceil(rate x duration / sessions), spaced sessions / rate seconds.
ReasoningSpec multi_turn_reasoning(const InferencePerfStage& stage, int64_t per_stage) {
  MultiTurnSpec mt;
  mt.max_rounds = static_cast<int64_t>(
      std::ceil(stage.rate * static_cast<double>(stage.duration) / static_cast<double>(per_stage)));
  mt.think_time_us = go_trunc(static_cast<double>(per_stage) / stage.rate * 1e6);
  mt.single_session = true;
  // A constant 0 samples as 1, i.e. a reason ratio of 0.01 (reference quirk).
  return ReasoningSpec{constant_dist(0), mt};
}

// User u of system prompt p, the stage's client_index-th client.
ClientSpec stage_client(const StageShape& st, int64_t p, int64_t u, int64_t client_index) {
  const SharedPrefixSpec& sp = st.sp;
  ClientSpec c;
  c.id = st.multi_stage ? fmt::format("stage-{}-prompt-{}-user-{}", st.index, p, u)
                        : fmt::format("prompt-{}-user-{}", p, u);
  c.tenant_id = fmt::format("prompt-{}", p);
  c.slo_class = st.closed_loop ? "standard" : "batch";
  c.rate_fraction = st.multi_stage ? st.stage.rate / static_cast<double>(st.per_stage)
                                   : 1.0 / static_cast<double>(st.per_stage);
  if (st.closed_loop && st.multi_stage) {
    c.rate_fraction = 1.0;  // a placeholder: the client's own rate below is used
    c.own_rate_per_us = st.stage.rate / static_cast<double>(st.per_stage) / 1e6;
  }
  c.arrival.process = "poisson";
  c.input_distribution = constant_dist(sp.question_len);
  c.output_distribution = constant_dist(sp.output_len);
  c.prefix_group = c.tenant_id;
  c.prefix_length = sp.system_prompt_len;  // 0 still means the 50-token default
  if (st.multi_stage) c.lifecycle = std::vector<LifecycleWindow>{{st.window_start, st.window_end}};
  c.reasoning = st.reasoning;
  if (st.reasoning && st.closed_loop)
    c.reasoning->multi_turn->max_rounds =
        st.requests / st.per_stage + (client_index < st.requests % st.per_stage ? 1 : 0);
  return c;
}

}  // namespace

void expand_inference_perf(WorkloadSpec& spec) {
  const InferencePerfSpec& ip = *spec.inference_perf;
  validate_inference_perf(ip);
  const SharedPrefixSpec& sp = *ip.shared_prefix;
  const int64_t n_prompts = sp.num_unique_system_prompts;
  const int64_t n_users = sp.num_users_per_system_prompt;
  if (n_prompts > 1000000 / n_users)
    throw InputError("inference_perf.shared_prefix",
                     fmt::format("{} x {} clients per stage is too many (at most 1000000)", n_prompts, n_users));
  const int64_t per_stage = n_prompts * n_users;
  const bool multi_stage = ip.stages.size() > 1;
  const bool closed_loop = spec.closed_loop_sessions;

  double aggregate = 0;
  std::vector<ClientSpec> clients;
  int64_t window_start = 0;
  for (size_t s = 0; s < ip.stages.size(); ++s) {
    const InferencePerfStage& stage = ip.stages[s];
    const int64_t window_end = wrapping_add(window_start, wrapping_mul(stage.duration, kUsPerSecond));
    aggregate += stage.rate;
    const int64_t requests = sp.enable_multi_turn_chat && closed_loop ? closed_stage_requests(stage, s) : 0;
    std::optional<ReasoningSpec> reasoning;
    if (sp.enable_multi_turn_chat) reasoning = multi_turn_reasoning(stage, per_stage);
    const StageShape shape{sp, stage, s, per_stage, multi_stage, closed_loop, window_start, window_end, reasoning, requests};
    int64_t client_index = 0;
    for (int64_t p = 0; p < n_prompts; ++p)
      for (int64_t u = 0; u < n_users; ++u, ++client_index) clients.push_back(stage_client(shape, p, u, client_index));
    window_start = window_end;
  }
  if (spec.category.empty()) spec.category = sp.enable_multi_turn_chat ? "reasoning" : "language";
  if (spec.aggregate_rate != 0 && spec.aggregate_rate != aggregate)
    spdlog::warn("inference_perf: aggregate_rate {} replaced by the stages' total rate {}", spec.aggregate_rate,
                 aggregate);
  spec.aggregate_rate = aggregate;
  spec.clients = std::move(clients);
}

std::vector<LifecycleWindow> diurnal_windows(const DiurnalSpec& d) {
  // One window per hour of the first day, active for a fraction of the hour
  // that follows a cosine from 1 (peak hour) down to 1/R.
  const double r = d.peak_to_trough_ratio;
  std::vector<LifecycleWindow> out;
  for (int64_t h = 0; h < 24; ++h) {
    const double angle = 2.0 * M_PI * static_cast<double>(h - d.peak_hour) / 24.0;
    const double m = (1.0 + std::cos(angle)) / 2.0 * (1.0 - 1.0 / r) + 1.0 / r;
    int64_t dur = go_trunc(static_cast<double>(kUsPerHour) * m);
    if (dur > kUsPerHour) dur = kUsPerHour;
    if (dur < 1) dur = 1;
    out.push_back({h * kUsPerHour, h * kUsPerHour + dur});
  }
  return out;
}

std::vector<LifecycleWindow> drain_windows(const DrainSpec& d) {
  // Full rate until the drain starts, then ten segments active for 10/10,
  // 9/10, ... 1/10 of their length.
  constexpr int64_t kSegments = 10;
  const int64_t seg = std::max<int64_t>(1, d.ramp_duration_us / kSegments);
  std::vector<LifecycleWindow> out;
  if (d.start_time_us > 0) out.push_back({0, d.start_time_us});
  for (int64_t i = 0; i < kSegments; ++i) {
    const double fraction = static_cast<double>(kSegments - i) / static_cast<double>(kSegments);
    const int64_t start = wrapping_add(d.start_time_us, i * seg);
    const int64_t active = std::max<int64_t>(1, go_trunc(static_cast<double>(seg) * fraction));
    out.push_back({start, wrapping_add(start, active)});
  }
  return out;
}

std::vector<ClientEntry> all_clients(const WorkloadSpec& spec, std::deque<ClientSpec>& members) {
  std::vector<ClientEntry> out;
  for (size_t i = 0; i < spec.clients.size(); ++i)
    out.push_back({&spec.clients[i], "clients[" + std::to_string(i) + "]"});
  for (size_t i = 0; i < spec.cohorts.size(); ++i) {
    const CohortSpec& c = spec.cohorts[i];
    if (c.population <= 0) continue;
    // Every member is the same client but for its id ("<id>-<j>"), which
    // nothing downstream reads: one shared description serves them all.
    ClientSpec& m = members.emplace_back();
    static_cast<TrafficSource&>(m) = c;
    m.rate_fraction = c.rate_fraction / static_cast<double>(c.population);  // the cohort's share, split
    std::vector<LifecycleWindow> windows;
    if (c.diurnal) windows = diurnal_windows(*c.diurnal);
    if (c.spike) windows.push_back({c.spike->start_time_us, wrapping_add(c.spike->start_time_us, c.spike->duration_us)});
    if (c.drain) {
      const auto drain = drain_windows(*c.drain);
      windows.insert(windows.end(), drain.begin(), drain.end());
    }
    if (!windows.empty()) m.lifecycle = std::move(windows);
    const std::string where = "cohorts[" + std::to_string(i) + "]";
    for (int64_t j = 0; j < c.population; ++j) out.push_back({&m, where});
  }
  return out;
}

}  // namespace blis::workload
