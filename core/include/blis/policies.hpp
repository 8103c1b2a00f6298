// The internal C++ interfaces of the plugin kinds. Shared-library
// plugins, Lua scripts and built-ins are all adapted to these.
#pragma once

#include <blis/plugin.h>

#include <cstdint>
#include <string>

namespace blis {

class LatencyModel {
 public:
  virtual ~LatencyModel() = default;
  // Validated times in microseconds (never negative).
  virtual int64_t step_time(const blis_step_batch& batch) = 0;
  virtual int64_t queueing_time(const blis_request_view& request) = 0;
  virtual int64_t output_token_time() = 0;
  virtual int64_t post_decode_overhead() = 0;
  // A decode-only step priced from its aggregates (ABI 1.5, optional): true
  // with `out` set to exactly what step_time would return for any batch the
  // aggregates stand for; false when the model has no such entry or declines
  // (the caller then builds the batch and calls step_time).
  virtual bool prices_decode_aggregates() const { return false; }
  virtual bool decode_step_time(const blis_decode_batch& batch, int64_t& out) {
    (void)batch, (void)out;
    return false;
  }
};

class RoutingScorer {
 public:
  virtual ~RoutingScorer() = default;
  // Writes input.count scores; the caller clamps them into [0, 1].
  virtual void score(const blis_route_input& input, double* scores) = 0;
  virtual bool observes() const { return false; }
  virtual void observe(const blis_route_input& input, int64_t chosen) { (void)input, (void)chosen; }
};

class AdmissionPolicy {
 public:
  virtual ~AdmissionPolicy() = default;
  // True to admit; on rejection `reason` may say why.
  virtual bool admit(const blis_route_input& input, std::string& reason) = 0;
};

// A scaling rule (docs/autoscaling.md): one scaling group's load at a tick
// of the autoscaler loop in, how many instances to add to or remove from
// which pool out (delta 0: nothing).
class Autoscaler {
 public:
  virtual ~Autoscaler() = default;
  virtual blis_scaling_decision decide(const blis_scaling_input& input) = 0;
};

// The gate of the gateway's flow control (docs/gateway.md): how saturated
// the instances that take traffic are (input.request is null), a finite
// number >= 0 compared with the priority bands' ceilings.
class SaturationDetector {
 public:
  virtual ~SaturationDetector() = default;
  virtual double saturation(const blis_route_input& input) = 0;
};

// Which queued request of the gateway leaves next (docs/gateway.md): a key
// per request, given once at its enqueue (never NaN); lower leaves first,
// ties in enqueue order.
class DispatchOrder {
 public:
  virtual ~DispatchOrder() = default;
  // BLIS_DISPATCH_ACROSS_BANDS: the lowest key of every band allowed to
  // send; else the most urgent band's, from the flow the fairness policy picks.
  virtual bool across_bands() const = 0;
  virtual double key(const blis_dispatch_input& input) = 0;
};

// With an encode pool (docs/epd.md): whether a request goes through it.
class EncodeDecider {
 public:
  virtual ~EncodeDecider() = default;
  virtual bool encode(const blis_encode_input& input) = 0;
};

// In a band of the gateway queue, which tenant flow sends next
// (docs/gateway.md): an index into input.flows.
class FairnessPolicy {
 public:
  virtual ~FairnessPolicy() = default;
  virtual size_t pick(const blis_fairness_input& input) = 0;
};

// With --queue-shedding, the queued request shed for one that finds the
// gateway queue full (docs/gateway.md): an index into input.queued, or -1
// (none: the arriving request is rejected).
class SheddingPolicy {
 public:
  virtual ~SheddingPolicy() = default;
  virtual int64_t victim(const blis_shedding_input& input) = 0;
};

// With LoRA adapter slots (docs/lora.md), the resident adapter evicted when
// an instance's slots are full and an adapter must load: an index into
// input.candidates (least recently used first).
class AdapterEviction {
 public:
  virtual ~AdapterEviction() = default;
  virtual size_t choose(const blis_adapter_eviction_input& input) = 0;
};

// With a KV offload CPU tier (docs/kv-offload.md), the block a full tier
// evicts: an index into input.candidates (least recently used first).
class OffloadEviction {
 public:
  virtual ~OffloadEviction() = default;
  virtual size_t choose(const blis_offload_eviction_input& input) = 0;
};

}  // namespace blis
