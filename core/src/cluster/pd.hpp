// Prefill/decode disaggregation (spec head §5): the decider, the size of a
// request's KV cache on the wire, and the link that carries it from the
// prefill instance to the decode instance. Pure bookkeeping: the cluster
// (cluster/pd_flow.cpp) schedules the events these return.
#pragma once

#include "cluster/epd.hpp"

#include <blis/kernel.hpp>
#include <blis/policies.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blis {

// Whether a request is split into a prefill on the prefill pool and a decode
// on the decode pool (spec head §5.2 step 2).
enum class PdDecider : uint8_t { Never, Always, PrefixThreshold };

// "never", "always", "prefix-threshold"; false for anything else.
bool parse_pd_decider(const std::string& name, PdDecider& out);

// `cached_blocks`: leading input blocks the chosen decode instance holds, or
// < 0 when unknown (no cache query). prefix-threshold disaggregates when the
// tokens the decode instance would have to compute exceed the threshold.
bool pd_disaggregate(PdDecider decider, int64_t threshold, int64_t input_tokens, int64_t cached_blocks,
                     int64_t block_size);

// Bytes of KV cache per token of a dense-attention model, split over TP
// ranks of the prefill instance (spec head §5.3): L · 2 · head_dim · K · b / TP,
// head_dim = d / H, K = the KV heads (H without GQA).
double pd_kv_bytes_per_token(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads,
                             double bytes_per_param, int64_t tp);

// A run's P/D settings, resolved (run/simulate.cpp).
struct PdConfig {
  std::vector<uint8_t> roles;  // per instance: kPdPrefill | kPdDecode, or kPdEncode; empty = off
  PdDecider decider = PdDecider::Never;
  // cluster/epd.hpp: whether a request goes through the encode pool; null
  // without an encode pool (none does).
  std::shared_ptr<EncodeDecider> encode_decider;
  int64_t prefix_threshold = 16;
  double bytes_per_us = 25000;   // --pd-transfer-bandwidth GB/s · 1000
  double base_latency_us = 50;   // --pd-transfer-base-latency ms · 1000
  bool contention = false;
  double kv_bytes_per_token = 0;  // of the prefill instances' TP
  bool enabled() const { return !roles.empty(); }
};

// The link between the pools. Without contention every transfer gets the
// whole bandwidth: duration = ceil(base + bytes / bandwidth), at least 1 µs.
// With contention the active transfers share the bandwidth equally, and the
// share is recomputed whenever a transfer starts or its bytes are through
// (processor sharing; the reference fixes each share at its start, see
// docs/differences.md). A transfer's bytes flow first; its base latency
// follows them.
class KvTransferLink {
 public:
  struct Done {
    uint64_t id;  // the caller's tag
    SimTime at;   // when the transfer completes
  };

  // `bytes_per_us` > 0; `base_us` >= 0.
  KvTransferLink(double bytes_per_us, double base_us, bool contention);

  // A transfer of `bytes` starts at `now`. Transfers that complete (their
  // completion time known by now) are appended to `done`.
  void start(uint64_t id, double bytes, SimTime now, std::vector<Done>& done);
  // With contention: settles the shares up to `now` and appends the
  // transfers whose bytes are through by then. Call at next_check().
  void advance(SimTime now, std::vector<Done>& done);
  // The transfer `id` is abandoned at `now` (its source or destination
  // failed): with contention the others share its bandwidth from now on.
  // Transfers through by `now` are appended to `done` first. Without
  // contention, nothing to do: the caller ignores its completion.
  void cancel(uint64_t id, SimTime now, std::vector<Done>& done);
  // The first time at which a shared transfer's bytes may be through
  // (kForever when none is active); it changes with start() and advance().
  SimTime next_check() const;

  int64_t active() const { return static_cast<int64_t>(active_.size()); }
  int64_t peak() const { return peak_; }
  // Mean of the active transfers (itself included) seen by each start.
  double mean_depth() const { return starts_ == 0 ? 0.0 : static_cast<double>(depth_sum_) / static_cast<double>(starts_); }

 private:
  struct Active {
    uint64_t id;
    SimTime start;
    double remaining;  // bytes
  };
  void settle(double t);  // every active transfer's bytes up to time t (µs)
  void finish_through(double t, std::vector<Done>& done);

  double bw_, base_;
  bool contention_;
  std::vector<Active> active_;  // in start order
  double last_ = 0;             // time the remaining bytes are settled to
  int64_t peak_ = 0, depth_sum_ = 0, starts_ = 0;
};

}  // namespace blis
