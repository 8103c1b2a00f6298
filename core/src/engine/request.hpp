// A request inside the simulator, and the pool it lives in. Requests are
// created at arrival and released when they leave, so memory is proportional
// to requests in flight.
#pragma once

#include "engine/kv_cache.hpp"
#include "metrics/request_timing.hpp"
#include "workload/slo_class.hpp"

#include <blis/plugin.h>
#include <blis/workload.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blis {

// Where a request is. A slot of the pool not holding a request is Free.
enum class RequestState : uint8_t {
  Free,
  Pipeline,   // arrived at the cluster, admission and routing not done yet
  Routed,     // on its way to its instance's wait queue (spec engine §2.2)
  Queued,     // in the wait queue (again after a preemption)
  Running,    // in the running batch
  Completed,
  Transfer,   // P/D: its KV on the wire from the prefill to the decode instance
};

// Where a request is in prefill/decode disaggregation (spec head §5.2).
enum class PdStage : uint8_t {
  None,     // served by one instance (always, without P/D)
  Prefill,  // on a prefill instance, which computes its prompt's KV and no token
  Decode,   // handed to its decode instance (in transfer, then queued there)
};

// P/D roles of an instance (bits): a prefill-decode instance has both.
inline constexpr uint8_t kPdPrefill = 1, kPdDecode = 2;

// What every step of the running batch reads and writes of a request. While
// the request runs, this lives in its instance's batch (Instance::Running),
// densely in batch order; otherwise beside the Request (Request::step()),
// from its first admission to a batch until it leaves. The order of the
// fields puts what a step reads first into the first 64 bytes.
struct StepState {
  // What the latency model sees (spec engine §1.3, with recompute preemption
  // done as vLLM does it): input_tokens, progress π (tokens with KV computed),
  // prefill_target (tokens to prefill before decoding), cached_tokens (prefix
  // hits reused by this step's first chunk), new_tokens (scheduled this
  // step), phase (kept in step with π and the target).
  blis_batch_entry entry{};
  int32_t emitted = 0;        // output tokens delivered so far
  int32_t output_tokens = 0;  // spec.output_tokens

  // Token timing: ITL values are "standard" (the step's Δ + α_o) while a
  // request emits in consecutive steps; other gaps are kept individually.
  uint64_t last_token_step = 0;
  uint64_t run_end = 0, run_begin = 0;  // current run of standard ITLs: steps [begin, end)
  int64_t last_token_end = 0;

  RequestBlocks kv;  // its content: spec.block_hashes

  int64_t pi() const { return entry.progress; }
  int64_t prefill_target() const { return entry.prefill_target; }
  void set_progress(int64_t pi, int64_t prefill_target) {
    entry.progress = pi;
    entry.prefill_target = prefill_target;
    entry.phase = pi < prefill_target ? BLIS_PHASE_PREFILL : BLIS_PHASE_DECODE;
  }
};

// Every request in flight has one, queued ones too (most of them, in a
// saturated run): the fields are ordered to leave no padding, and what only
// a scheduled request needs is made when it is (its StepState,
// RequestTiming::Detail).
struct Request {
  WorkloadRequest spec;  // id, arrival, lengths, content hashes, metadata
  RequestState state = RequestState::Free;
  bool length_capped = false;
  PdStage pd = PdStage::None;
  // P/D: whether the PD block counted it as split already (a re-routed
  // request counts once).
  bool pd_split = false;
  // LoRA: it holds a pin on its adapter's slot (engine/lora.hpp).
  bool adapter_pinned = false;
  RequestMarks marks;  // the metrics' flags: the engine never reads them
  int32_t instance = -1;
  uint32_t slot = 0;  // its place in the pool
  // How many requests the slot held before this one: an event scheduled for
  // a request (its timeout) names slot and incarnation, and finds it gone
  // when they no longer match.
  uint32_t incarnation = 0;
  // (P/D routes are kept beside the pool: ClusterSimulation::PdRoute.)

  RequestTiming timing;  // the metrics' slot: the engine never reads it

  // Its step state, for readers: a request never admitted to a batch has
  // none and reads as a fresh one (nothing emitted, no KV).
  const StepState& step() const { return step_ ? *step_ : kNoStep; }
  bool has_step() const { return step_ != nullptr; }
  // For the engine: its step state, which must have been made.
  StepState& step_mut() { return *step_; }
  // Made when it is first admitted (or its KV is first reserved), fresh
  // (RequestPool::make_step); it stays until the request leaves or is
  // routed anew (drop_step()).
  void drop_step() { step_.reset(); }

 private:
  friend class RequestPool;
  static inline const StepState kNoStep{};
  // A queued request, most of them in a saturated run, holds a null pointer
  // instead of 120 bytes (docs/design/performance.md "Memory").
  std::unique_ptr<StepState> step_;
};
// A saturated run holds one per request it has seen arrive: 168 bytes (304
// before the step state and the metrics' detail were made on admission and
// the labels became numbers; docs/design/performance.md "Memory").
static_assert(sizeof(void*) != 8 || (sizeof(WorkloadRequest) == 128 && sizeof(Request) == 168),
              "a queued request's size: reorder the new field into padding, or update the figures");

// The requests in flight, in slots that keep their addresses. Slots come in
// chunks (one allocation per kChunk requests, no per-slot overhead) and are
// reused once released, last released first. Once no new arrival can come
// (drain()), a chunk whose requests have all left is given back, so that a
// saturated run's backlog does not keep its peak memory while the metrics
// grow; a slot of a chunk given back reads as a Free request that no event
// can match, and is made again if acquired.
class RequestPool {
 public:
  uint32_t acquire() {
    draining_ = false;  // arrivals after all: chunks made again stay
    uint32_t slot = 0;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
      auto& chunk = chunks_[slot / kChunk];
      if (!chunk.requests) {
        chunk.requests = std::make_unique<Request[]>(kChunk);
        for (size_t k = 0; k < kChunk; ++k) chunk.requests[k].incarnation = chunk.incarnation;
      }
    } else {
      if (size_ % kChunk == 0) chunks_.push_back(Chunk{std::make_unique<Request[]>(kChunk)});
      slot = static_cast<uint32_t>(size_++);
    }
    ++chunks_[slot / kChunk].live;
    Request& r = (*this)[slot];
    r.slot = slot;
    r.state = RequestState::Pipeline;
    return slot;
  }

  // The slot starts clean but keeps the capacity of its content hashes, so
  // a steady stream of requests allocates little. Lazy content (made when
  // scheduled) goes to a few spare buffers instead: a slot keeping it would
  // give its next request, perhaps one that waits for long, memory it does
  // not need yet.
  void release(uint32_t slot) {
    Request& r = (*this)[slot];
    if (r.step_ && spare_steps_.size() < kMaxSpares) spare_steps_.push_back(std::move(r.step_));
    std::vector<uint64_t> hashes = std::move(r.spec.block_hashes);
    const bool lazy = r.spec.own_content != 0;
    const uint32_t incarnation = r.incarnation + 1;
    r = Request();
    hashes.clear();
    if (!lazy) {
      r.spec.block_hashes = std::move(hashes);
    } else if (spares_.size() < kMaxSpares && hashes.capacity() > 0) {
      spares_.push_back(std::move(hashes));
    }
    r.incarnation = incarnation;
    free_.push_back(slot);
    Chunk& chunk = chunks_[slot / kChunk];
    if (--chunk.live == 0 && draining_) give_back(chunk);
  }

  // No arrival will follow unless a request asks for one (a closed-loop
  // user's next request): chunks may go as they empty, until the next
  // acquire().
  void drain() {
    draining_ = true;
    for (Chunk& chunk : chunks_)
      if (chunk.live == 0 && chunk.requests) give_back(chunk);
  }

  // r's step state, made fresh if it has none (from a released request's
  // when one is spare: a request in flight allocates nothing for it).
  StepState& make_step(Request& r) {
    if (!r.step_) {
      if (spare_steps_.empty()) {
        r.step_ = std::make_unique<StepState>();
      } else {
        r.step_ = std::move(spare_steps_.back());
        spare_steps_.pop_back();
        *r.step_ = StepState{};
      }
    }
    return *r.step_;
  }

  // Makes the request's content complete (spec.block_hashes holds every
  // block of its sequence), in a spare buffer if it has none; the hashes
  // stay until the request leaves. For the engine, when it first schedules
  // the request.
  void complete_content(Request& r, int32_t block_size) {
    WorkloadRequest& s = r.spec;
    const int64_t blocks = content_blocks(s, block_size);
    if (s.own_content == 0 || static_cast<int64_t>(s.block_hashes.size()) >= blocks) return;
    if (s.block_hashes.capacity() < static_cast<size_t>(blocks) && !spares_.empty()) {
      std::vector<uint64_t> buffer = std::move(spares_.back());
      spares_.pop_back();
      buffer.assign(s.block_hashes.begin(), s.block_hashes.end());
      s.block_hashes.swap(buffer);
    }
    // Its input blocks, made for its views on the way in (input_hashes),
    // are usually still in a scratch: copied, not chained again.
    if (const Scratch* x = find_scratch(s.own_content);
        x != nullptr && x->hashes.size() > s.block_hashes.size()) {
      const auto have = static_cast<std::ptrdiff_t>(s.block_hashes.size());
      const auto upto =
          static_cast<std::ptrdiff_t>(std::min<size_t>(x->hashes.size(), static_cast<size_t>(blocks)));
      s.block_hashes.reserve(static_cast<size_t>(blocks));
      s.block_hashes.insert(s.block_hashes.end(), x->hashes.begin() + have, x->hashes.begin() + upto);
    }
    extend_content(s, s.block_hashes, blocks);
  }

  // The first n block hashes of r's content: its own, or, for lazy content
  // not made yet, made in one of a few scratch buffers that keep the last
  // requests' (admission, routing and the instance's arrival ask in turn;
  // the engine copies them when it schedules the request, usually within a
  // step of its arrival). Valid until r's scratch is given to a later
  // request, or extended for r.
  const uint64_t* input_hashes(const Request& r, int64_t n) {
    const WorkloadRequest& s = r.spec;
    if (s.own_content == 0 || static_cast<int64_t>(s.block_hashes.size()) >= n) return s.block_hashes.data();
    Scratch* x = find_scratch(s.own_content);
    if (x == nullptr) {
      x = &scratch_[scratch_next_];
      scratch_next_ = (scratch_next_ + 1) % kScratches;
      x->seed = s.own_content;
      x->hashes.assign(s.block_hashes.begin(), s.block_hashes.end());
    }
    if (static_cast<int64_t>(x->hashes.size()) < n) extend_content(s, x->hashes, n);
    return x->hashes.data();
  }

  Request& operator[](uint32_t slot) {
    Request* requests = chunks_[slot / kChunk].requests.get();
    return requests != nullptr ? requests[slot % kChunk] : gone_;
  }
  const Request& operator[](uint32_t slot) const {
    const Request* requests = chunks_[slot / kChunk].requests.get();
    return requests != nullptr ? requests[slot % kChunk] : gone_;
  }
  size_t capacity() const { return size_; }
  size_t in_use() const { return size_ - free_.size(); }
  // Chunks of slots allocated now (memory: about kChunk * sizeof(Request) each).
  size_t chunks_held() const {
    return static_cast<size_t>(std::count_if(chunks_.begin(), chunks_.end(), [](const Chunk& c) { return c.requests != nullptr; }));
  }

 private:
  static constexpr size_t kChunk = 1024;
  static constexpr size_t kMaxSpares = 256;
  std::vector<std::unique_ptr<StepState>> spare_steps_;  // step states of released requests
  struct Chunk {
    std::unique_ptr<Request[]> requests;  // null once given back
    uint32_t live = 0;                    // slots holding a request
    // Given back: every incarnation its slots had is below this, so an event
    // left for one of its requests matches no later one.
    uint32_t incarnation = 0;
  };
  void give_back(Chunk& chunk) {
    for (size_t k = 0; k < kChunk; ++k) chunk.incarnation = std::max(chunk.incarnation, chunk.requests[k].incarnation);
    chunk.requests.reset();
  }
  std::vector<Chunk> chunks_;
  size_t size_ = 0;  // slots handed out: [0, size_)
  bool draining_ = false;
  // What a slot of a chunk given back reads as: no request, and an
  // incarnation no event names (callers only read it).
  Request gone_ = [] {
    Request r;
    r.incarnation = UINT32_MAX;
    return r;
  }();
  std::vector<uint32_t> free_;
  std::vector<std::vector<uint64_t>> spares_;  // content buffers of released lazy requests
  // input_hashes() of the last requests that asked, by their content seed
  // (0: none; lazy content's seed is never 0).
  struct Scratch {
    uint64_t seed = 0;
    std::vector<uint64_t> hashes;
  };
  static constexpr size_t kScratches = 8;
  std::array<Scratch, kScratches> scratch_;
  size_t scratch_next_ = 0;
  Scratch* find_scratch(uint64_t seed) {
    for (Scratch& x : scratch_)
      if (x.seed == seed) return &x;
    return nullptr;
  }
};

// What policies may see of a request (never its output length), without its
// input blocks (block_hashes null, num_blocks 0): for the lists of requests
// the gateway's policies see at once. Points into `r`.
inline blis_request_view request_view_without_blocks(const Request& r, int32_t block_size) {
  blis_request_view v{};
  v.struct_size = sizeof(blis_request_view);
  v.block_size = static_cast<uint32_t>(block_size);
  v.id = r.spec.id;
  v.arrival_time_us = r.spec.arrival_us;
  v.input_tokens = r.spec.input_tokens;
  v.max_output_tokens = r.spec.max_output_tokens;
  v.slo_class = r.spec.slo_class;
  v.slo_class_name = workload::slo_class_name(r.spec.slo_class);
  v.tenant_id = r.spec.tenant_id.c_str();
  v.adapter = r.spec.adapter.c_str();
  return v;
}

// What policies may see of a request (never its output length). The view
// points into `r`, or into the pool's scratch for the input blocks of lazy
// content (WorkloadRequest::own_content) not made yet: valid while r is
// unchanged and until the next view of another request.
inline blis_request_view request_view(const Request& r, int32_t block_size, RequestPool& pool) {
  blis_request_view v = request_view_without_blocks(r, block_size);
  v.num_blocks = r.spec.input_tokens / block_size;
  v.block_hashes = pool.input_hashes(r, v.num_blocks);
  return v;
}

}  // namespace blis
