// Workloads: where requests come from. Every source yields requests in arrival
// order, lazily, so memory stays proportional to requests in flight.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blis/block_hash.hpp"
#include "blis/label.hpp"

namespace blis {

inline constexpr int64_t kNoHorizon = std::numeric_limits<int64_t>::max();
inline constexpr int32_t kMaxTokenId = 128000;

// One generated request, before it enters the simulator. Every queued
// request holds one (in its Request), so the fields are ordered to leave no
// padding and the repeated texts are Labels.
struct WorkloadRequest {
  uint64_t id = 0;              // n of "request_n", in arrival order
  int64_t arrival_us = 0;
  int32_t input_tokens = 0;     // shared prefix included
  int32_t output_tokens = 0;    // the oracle output length the engine will produce
  int32_t max_output_tokens = 0;  // the client's budget (0 = none)
  int32_t slo_class = 0;        // blis_slo_class
  // Past this time (µs) the request is abandoned wherever it waits or runs;
  // 0 = never (spec head §4.1).
  int64_t deadline_us = 0;
  // A closed-loop client's user that sent it (spec head §4.2), -1 for open
  // loop; and its round: 0 for the user's first request, which comes in the
  // workload's arrival order, > 0 for the follow-ups sent on completions.
  int32_t user = -1;
  int32_t round = 0;
  // The multi-turn session it is a round of: the reference's session id
  // ("sess_<id>" in a trace row), -1 for none.
  int64_t session = -1;
  Label tenant_id;
  Label model;
  Label adapter;  // LoRA adapter (engine/lora.hpp); empty = the base model
  // Its client's TTFT target (µs, slo_target_us; 0 = none): the gateway's
  // slo-deadline order reads it before the class's --slo-targets (HEAD).
  // (Beside the labels: every queued request has one, so no padding.)
  int32_t slo_target_us = 0;
  // Chained content hashes (block_hash.hpp) of every complete block of the
  // sequence input ++ output: (input_tokens + output_tokens) / block_size
  // entries. The first input_tokens / block_size cover the prompt only.
  std::vector<uint64_t> block_hashes;
  // Lazy content: when nonzero, block_hashes may stop after the shareable
  // blocks; the rest of the sequence's blocks are own_block_hash() chains
  // seeded by this value (unique to the request), made when needed
  // (complete_content()). The generator then only advances its random
  // stream past the own tokens, and a queued request holds no own hashes.
  uint64_t own_content = 0;
  // How many leading block_hashes other requests may also have (a shared
  // prefix); the blocks past them hold this request's own random tokens,
  // which only this request can ever look up again (after a preemption).
  // The KV cache keeps those out of its prefix index (docs/design/
  // performance.md "Own blocks"). All of them unless the generator knows.
  int32_t shareable_blocks = kAllShareable;
  static constexpr int32_t kAllShareable = INT32_MAX;
  // Which of the workload's clients sent it (WorkloadSource::source_info), -1 = unknown.
  int32_t source = -1;
  // Its prompt's image, audio and video tokens (of input_tokens; the encode
  // deciders read them, cluster/epd.hpp); all 0 for a text request.
  int32_t image_tokens = 0;
  int32_t audio_tokens = 0;
  int32_t video_tokens = 0;
  // Made by WorkloadSource::follow_up when an earlier request completed (a
  // closed-loop user's next request), not drawn from the source's chain;
  // the cluster's arrivals set it.
  bool follow_up = false;
};

// It carries image, audio or video tokens (the encode decider multimodal's test).
inline bool multimodal(const WorkloadRequest& r) { return r.image_tokens > 0 || r.audio_tokens > 0 || r.video_tokens > 0; }

// Blocks of the request's whole sequence (input ++ output).
inline int64_t content_blocks(const WorkloadRequest& r, int32_t block_size) {
  return (static_cast<int64_t>(r.input_tokens) + r.output_tokens) / block_size;
}

// Makes `out`, which holds the first out.size() block hashes of r's content
// (at least r.shareable_blocks of them when the content is lazy), hold the
// first `blocks` of them (no more than content_blocks()). Does nothing for
// content that is complete already.
inline void extend_content(const WorkloadRequest& r, std::vector<uint64_t>& out, int64_t blocks) {
  if (r.own_content == 0) return;
  auto k = static_cast<int64_t>(out.size());
  if (k >= blocks) return;
  out.reserve(static_cast<size_t>(blocks));
  uint64_t prev = k == 0 ? kEmptyPrefixHash : out.back();
  for (; k < blocks; ++k) {
    prev = own_block_hash(prev, r.own_content, k);
    out.push_back(prev);
  }
}

class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  // Fills `out` with the next request; false once the workload is exhausted.
  virtual bool next(WorkloadRequest& out) = 0;
  // Closed-loop clients (spec head §4.2): `done`, a request of a user
  // (done.user >= 0), completed at `t`. Fills `out` (a fresh request) with
  // the user's next one, arriving at or after t, and returns true; false when
  // the user stops. Only completions are reported: a user whose request was
  // rejected, dropped or timed out stops.
  virtual bool follow_up(const WorkloadRequest& /*done*/, int64_t /*t*/, WorkloadRequest& /*out*/) { return false; }
  // What a request's `source` says of its client, for --trace-output; null
  // when the source does not know.
  struct SourceInfo {
    std::string client_id, prefix_group;
    int64_t prefix_length = 0;  // its group's shared prefix, in tokens
    bool streaming = false;
  };
  virtual const SourceInfo* source_info(int32_t /*source*/) const { return nullptr; }
  // A scenario's per-tenant `rate` event: whether a client has that
  // tenant_id, and from source time `now` on (no earlier than the arrival
  // already handed out), that tenant's arrivals come `factor` times as often.
  // Returns the tenant's accumulated factor, 0 when no client has it.
  virtual bool has_tenant(const std::string& /*tenant*/) const { return false; }
  virtual double change_tenant_rate(const std::string& /*tenant*/, double /*factor*/, double /*now*/) {
    return 0;
  }
  // The session a request belongs to as a trace row names it ("sess_<id>",
  // "concurrency_<client>_user_<n>"), "" for none.
  virtual std::string session_name(const WorkloadRequest& r) const {
    return r.session >= 0 ? "sess_" + std::to_string(r.session) : std::string();
  }
};

// ---- Workload spec (the reference's "v2" schema; spec workload.md §5-§6) ----
// Absent keys keep the reference's zero values; std::optional marks the
// blocks whose mere presence changes behaviour.

struct DistSpec {
  std::string type;                      // gaussian, exponential, pareto_lognormal, constant, empirical
  std::map<std::string, double> params;  // sorted keys: deterministic
  // The YAML's `file` key is reserved by the reference and never read.
};

struct ArrivalSpec {
  std::string process = "poisson";       // constant, poisson, gamma, weibull
  std::optional<double> cv;
};

// Half-open [start_us, end_us) (spec workload §5.6).
struct LifecycleWindow {
  int64_t start_us = 0;
  int64_t end_us = 0;
};

// Parsed and kept; the reference applies it to nothing in `run` (§5.9).
struct NetworkSpec {
  double rtt_ms = 0;
  double bandwidth_mbps = 0;
};

// §5.8: a modality counts when its distributions have a type.
struct MultimodalSpec {
  DistSpec text_distribution;
  DistSpec image_distribution, image_count_distribution;
  DistSpec audio_distribution, audio_count_distribution;
  DistSpec video_distribution, video_count_distribution;
};

struct MultiTurnSpec {
  int64_t max_rounds = 0;
  int64_t think_time_us = 0;
  std::string context_growth;  // "accumulate" or anything else (independent rounds)
  bool single_session = false;
};

// §5.7; without multi_turn it has no effect.
struct ReasoningSpec {
  DistSpec reason_ratio_distribution;
  std::optional<MultiTurnSpec> multi_turn;
};

// What a client and a cohort both describe: one source of traffic.
struct TrafficSource {
  std::string id;
  std::string tenant_id;
  std::string slo_class;
  std::string model;
  std::string adapter;  // LoRA adapter id (docs/lora.md); "" = the base model
  double rate_fraction = 0;
  ArrivalSpec arrival;
  DistSpec input_distribution;
  DistSpec output_distribution;
  std::string prefix_group;
  bool streaming = false;
  // Each request's deadline is its arrival plus this (µs); 0 = none; not
  // given: none, 300 s for a concurrency client (spec head §4.1: --timeout
  // sets it for every client).
  std::optional<int64_t> timeout_us;
  // slo_target_us: each request's TTFT target for the gateway's slo-deadline
  // dispatch (µs; 0 = none: its class's --slo-targets).
  int64_t slo_target_us = 0;
};

// The default timeout of a concurrency client (spec head §4.1).
inline constexpr int64_t kDefaultClosedLoopTimeoutUs = 300'000'000;

// A closed-loop user's think time drawn per follow-up (blis observe
// --think-time-dist, HEAD's): lognormal (mu and sigma in log-space of
// seconds, rounded to whole µs, clamped to [min_us, max_us] where > 0) or
// constant (value_us); never below 1 µs.
struct ThinkTimeDist {
  bool lognormal = false;
  double mu = 0, sigma = 0;  // lognormal, mu already in log-space of µs
  int64_t min_us = 0, max_us = 0;
  int64_t value_us = 0;      // constant
};

struct ClientSpec : TrafficSource {
  int64_t prefix_length = 0;
  // > 0: a closed-loop client of this many users, each sending its next
  // request think_time_us after its previous one completed (spec head §4.2);
  // it has no rate_fraction and no arrival process.
  int64_t concurrency = 0;
  int64_t think_time_us = 0;
  // Not a YAML key: set by blis observe --think-time-dist; present, each
  // follow-up's think time is drawn from it instead of think_time_us.
  std::optional<ThinkTimeDist> think_time_dist;
  std::optional<NetworkSpec> network;
  std::optional<std::vector<LifecycleWindow>> lifecycle;  // present: arrivals outside every window are dropped
  std::optional<MultimodalSpec> multimodal;
  std::optional<ReasoningSpec> reasoning;
  // Not a YAML key: set by the inference_perf expansion of a multi-stage
  // spec under closed-loop sessions (HEAD). The client's own Poisson rate
  // (requests per µs), used instead of its share of the aggregate rate; its
  // stream draws one seed (which nothing reads) before its first arrival.
  std::optional<double> own_rate_per_us;
};

// A population of identical clients (spec workload §5.10).
struct DiurnalSpec {
  int64_t peak_hour = 0;
  double peak_to_trough_ratio = 0;
};
struct SpikeSpec {
  int64_t start_time_us = 0;
  int64_t duration_us = 0;
};
struct DrainSpec {
  int64_t start_time_us = 0;
  int64_t ramp_duration_us = 0;
};
// Its rate_fraction is the whole cohort's share, split evenly among members.
struct CohortSpec : TrafficSource {
  int64_t population = 0;
  std::optional<DiurnalSpec> diurnal;
  std::optional<SpikeSpec> spike;
  std::optional<DrainSpec> drain;
};

// The inference-perf shorthand (spec workload §5.12).
struct InferencePerfStage {
  double rate = 0;       // req/s
  int64_t duration = 0;  // seconds
};
struct SharedPrefixSpec {
  int64_t num_unique_system_prompts = 0;
  int64_t num_users_per_system_prompt = 0;
  int64_t system_prompt_len = 0;
  int64_t question_len = 0;
  int64_t output_len = 0;
  bool enable_multi_turn_chat = false;
};
struct InferencePerfSpec {
  std::vector<InferencePerfStage> stages;
  std::optional<SharedPrefixSpec> shared_prefix;
};

// Clients loaded from a ServeGen directory (§5.11), used when `clients` is empty.
struct ServeGenDataSpec {
  std::string path;
  int64_t span_start = 0;
  int64_t span_end = 0;
};

// Where the fields of a spec read from a file were written, so that errors
// found later (validation, generation) point into the file.
struct SpecSource {
  std::string file;
  // Field path ("clients[0].arrival.cv") -> "file:line:col".
  std::map<std::string, std::string> positions;
};

struct WorkloadSpec {
  std::string version = "2";
  int64_t seed = 0;
  std::string category;
  double aggregate_rate = 0;
  int64_t num_requests = 0;
  int64_t horizon = 0;
  std::vector<ClientSpec> clients;
  std::vector<CohortSpec> cohorts;
  std::optional<ServeGenDataSpec> servegen_data;
  std::optional<InferencePerfSpec> inference_perf;
  SpecSource source;  // empty for specs built in code
  // Not a YAML key: --session-mode closed-loop (HEAD's sessions). Each
  // single-session multi-turn client sends only its first round in the
  // workload's arrival order; each later round arrives its think time after
  // the previous one completes (docs/workloads.md, "Multi-turn sessions").
  bool closed_loop_sessions = false;
  // Not a YAML key: --timeout (µs, 0 = none) for the clients the
  // inference_perf and servegen_data shorthands expand into.
  std::optional<int64_t> expanded_timeout_us;
};

// Reads a workload-spec YAML file strictly (spec workload §5.1-§5.12):
// unknown or repeated keys and wrong types are ConfigError with file:line:col
// and the field path. Validation (§5.13) is left to the generator, as in the
// reference; its errors carry the same positions.
WorkloadSpec load_workload_spec(const std::string& path);

// The most tokens one request may draw (a prompt, a shared prefix, an
// output; spec workload sets no bound). Each token costs a random draw and
// its blocks a hash, so a length like 2^31 would take minutes and gigabytes
// before the run starts; 10 million is beyond any model's context.
inline constexpr int64_t kMaxRequestTokens = 10'000'000;

// Parameters of the default distribution workload (CLI flags; spec workload.md §2-§3).
struct DistributionWorkload {
  double rate = 1.0;
  int64_t concurrency = 0;    // > 0: closed-loop users instead of a rate (spec head §4.2)
  int64_t think_time_us = 0;
  int64_t num_requests = 100;
  ArrivalSpec arrival{"constant", std::nullopt};  // the reference's spacing unless told
  int64_t prefix_tokens = 0;
  int64_t prompt_mean = 512, prompt_stdev = 256, prompt_min = 2, prompt_max = 7000;
  int64_t output_mean = 512, output_stdev = 256, output_min = 2, output_max = 7000;
};

// Synthesises the one-client spec of the distribution workload (and presets).
WorkloadSpec synthesize_distribution_spec(const DistributionWorkload& w, int64_t seed);

// Validates a spec (spec workload §5.13): throws InputError naming the field,
// or ConfigError at the field's file position for a spec read from a file.
void validate_workload_spec(const WorkloadSpec& spec);

// Generator over a spec: inference-perf and cohort expansion, the v1 upgrade,
// validation, seed partitioning, per-client streams (lifecycle windows,
// multimodal and multi-turn clients) and the merge of spec workload.md §6-§7.
// `max_requests` 0 = unlimited; `horizon` bounds arrival times (exclusive).
std::unique_ptr<WorkloadSource> make_spec_workload(const WorkloadSpec& spec, int64_t horizon,
                                                   int64_t max_requests, int32_t block_size);

// Exact trace replay: CSV with header arrival_time_us,input_tokens,output_tokens
// and optional prefix_group, prefix_tokens, slo_class, tenant_id columns.
std::unique_ptr<WorkloadSource> make_trace_workload(const std::string& path, int64_t horizon,
                                                    int64_t max_requests, int32_t block_size,
                                                    int64_t seed);

}  // namespace blis
