// One inference instance: wait queue, vLLM-style continuous batching with
// chunked prefill, KV cache, recompute preemption and a latency model
// (spec engine §2-§3, §7). The kernel calls it through on_event(); it
// announces what happens to its requests as lifecycle signals
// (engine/lifecycle.hpp) and keeps no metrics itself.
#pragma once

#include "engine/due_scan.hpp"
#include "engine/kv_cache.hpp"
#include "engine/kv_offload.hpp"
#include "engine/lora.hpp"
#include "engine/request.hpp"
#include "engine/wait_queue.hpp"
#include "workload/slo_class.hpp"

#include <blis/kernel.hpp>
#include <blis/policies.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace blis {

struct RequestSignals;

struct EngineConfig {
  int64_t total_kv_blocks = 1000000;
  int32_t block_size = 16;
  int64_t max_running = 256;          // S, --max-num-running-reqs
  int64_t max_scheduled_tokens = 2048;  // T, --max-num-scheduled-tokens
  int64_t long_prefill_threshold = 0;   // C, chunked prefill when > 0
  int64_t max_model_len = 0;            // M, 0 = unlimited
  QueueOrder order = QueueOrder::Fcfs;
  bool priority_preemption = false;     // --preemption-policy priority (spec head §7.3)
  workload::SloPriorities slo_priorities;  // its victim's order (--slo-priorities)
  bool restart_preemption = false;      // --preemption-mode restart: the victim's output starts over
  CpuTierConfig cpu_tier;
  std::shared_ptr<const OffloadChainConfig> offload;  // --kv-offload-config, else none
  SimTime horizon = kForever;
  // LoRA adapters (engine/lora.hpp): null, or inactive, leaves the engine as it was.
  std::shared_ptr<const LoraConfig> lora;
};

class Instance {
 public:
  // `signals` outlives the instance.
  Instance(int32_t index, const EngineConfig& cfg, std::unique_ptr<LatencyModel> model,
           RequestPool& pool, Kernel& kernel, RequestSignals& signals);

  int32_t index() const { return index_; }
  // The request reaches the instance at time t (its ArrivalEvent).
  void inject(uint32_t slot, SimTime t);
  void on_event(const Event& e);
  // When the run stops: running requests' step state goes back to them, and
  // the instance announces its end (InstanceEnd).
  void finalize();

  // Steps without events of their own (docs/design/performance.md,
  // "Stretches of plain steps"). A plain step changes nothing but its
  // instance's clocks, counters and own blocks, and announces itself
  // (RequestSignals::step): every member decodes one implicit token, none
  // is due and nothing waits. When nobody else reads the instance's state
  // during the run, its plain steps are priced ahead and run when something
  // next touches the instance; their order among other instances' steps is
  // then not kept, which only the collector's per-instance step records see.
  // The cluster allows it (no policy, probe or scenario reads an instance
  // during the run); the instance takes it up when its model prices decode
  // aggregates and it has no adapters, offload chain or CPU tier.
  void allow_lazy_steps();
  // Runs the steps a stretch stands for that start at or before `t` (the
  // horizon, once the kernel has stopped).
  void run_lazy_through(SimTime t);
  // How many steps ran without an event of their own.
  uint64_t lazy_steps() const { return lazy_steps_; }

  // Scenario events (cluster/scenario_events.hpp). `evict` takes every queued
  // and running request off the instance, their KV released and their step
  // state reset to "not started" except for tokens already delivered, and
  // appends their slots (batch order, then queue order); the instance is left
  // empty. `set_slowdown` multiplies every later step's duration.
  void evict(std::vector<uint32_t>& out);
  // Takes the wait queue's requests out (running ones stay), appending their slots to `out`.
  void evict_waiting(std::vector<uint32_t>& out);
  void set_slowdown(double factor) { slowdown_ = factor; }
  // Scenario `tier` events (docs/kv-offload.md): its offload chain, if any
  // (the CPU tier and secondary tiers of --kv-offload-config, or HEAD's
  // mirror tier); whether it has the older --kv-cpu-blocks tier; from now on
  // the transfers of tier 0 (the CPU tier) or k (the k-th secondary tier)
  // take `factor` times as long.
  const OffloadChain* offload() const { return offload_.get(); }
  bool has_cpu_tier() const { return kv_.has_cpu_tier(); }
  void set_tier_slowdown(int32_t tier, double factor) {
    if (offload_)
      offload_->set_tier_slowdown(tier, factor);
    else if (tier == 0)
      kv_.set_cpu_transfer_factor(factor);
  }
  // The gateway's in-flight eviction (cluster/gateway.cpp): the request in
  // `slot`, if queued or running here, leaves with its KV freed, announced
  // only as departed (it counts as nothing of this instance). False when it
  // is not (on its way here, or gone).
  bool evict_one(uint32_t slot);

  // P/D (spec head §5.2): the decode instance reserves KV for a request's
  // whole prompt (false: it can never hold it, or not now), releases it if
  // the transfer is abandoned, and queues the request once its KV is in.
  bool reserve_transfer(Request& r, SimTime now);
  void release_transfer(Request& r);
  void enqueue_transferred(uint32_t slot, SimTime now);

  // Counts the calls that may have changed what the router's snapshot of
  // the instance shows (queue, batch, KV): equal counts, equal snapshots.
  uint64_t changes() const {
    check_settled();
    return changes_;
  }
  int32_t queue_depth() const {
    check_settled();
    return static_cast<int32_t>(waiting_.size());
  }
  int32_t batch_size() const {
    check_settled();
    return static_cast<int32_t>(batch_.size());
  }
  const KVCache& kv() const {
    check_settled();
    return kv_;
  }
  // LoRA: the resident adapters (null without adapters).
  const LoraSlots* lora() const { return lora_.get(); }
  // The router's cache queries (spec head §7.2): live, or a copy to query later.
  int64_t cached_prefix_length(const uint64_t* hashes, int64_t n) { return kv_.cached_prefix_length(hashes, n); }
  void copy_prefix_index(PrefixIndexCopy& out) { kv_.copy_prefix_index(out); }

 private:
  // A request of the running batch: its step state and the request. These
  // live in a slab (slab_) at stable places; the batch's order is batch_.
  struct alignas(64) Running {
    StepState s;
    Request* req = nullptr;
  };
  static_assert(sizeof(Running) == 128 && std::is_trivially_copyable_v<Running>);

  // A member of the batch, in batch order (see "Token-implicit decode" in
  // docs/design/performance.md). An explicit member (due == 0) is handled
  // member by member at every step. An implicit member is a request that
  // decodes one token per step and whose next step with anything else to
  // do (a block filling or needed, its last token, its length cap) is step
  // `due`: until then a step adds one to its progress, its KV tokens, its
  // tokens delivered and its run of standard ITLs, and none of that is
  // written until the member is handled again (catch_up()). Its progress at
  // the formation of step S is key + S - 1.
  // The member's due step is kept apart, in dues_ (same position), so that
  // the scan for due members reads a dense array.
  struct Member {
    int64_t key = 0;
    int64_t input = 0;  // implicit: its input tokens (for the decode sums)
    // Implicit: the first step with more to do than take an own block (its
    // last token, its length cap); a due step before it is a block only
    // (renew_block()). Not past its due when the member's blocks are not
    // all own ones.
    uint64_t event = 0;
    uint32_t slot = 0;  // its Running in slab_
    // Implicit, its own blocks counted by phase (phase_count_): how many
    // steps before its event lies its first step needing a block since it
    // was counted (then one every block_size steps until the event), or 0.
    // Its blocks are taken for it by the steps' bulk allocations and added
    // to its count when it is brought up. (Relative, to keep a member in 32
    // bytes: the batch moves members when some leave.)
    uint32_t before_event = 0;
    uint64_t boundary() const { return event - before_event; }
    bool counted() const { return before_event != 0; }
  };
  static_assert(sizeof(Member) == 32);
  static constexpr uint32_t kGone = UINT32_MAX;  // Member::slot of one that left during execute()

  void on_arrival(uint32_t slot);
  void on_queued(uint32_t slot);
  void on_step();
  void on_timeout(uint64_t payload);
  // Takes the queued or running request `r` off the instance, its KV freed
  // and its step state back in it (a timeout, an eviction).
  void take_off(Request& r);

  void form_batch(SimTime now);
  // What form_batch()'s phases share: the token budget left, whether a
  // preemption moved members, and whether the decode sums may price the step.
  struct Forming {
    int64_t budget = 0;
    bool preempted_any = false;
    bool valid = true;
  };
  // form_batch()'s phases, in order (spec engine §3.2), kept in the
  // translation unit and inlined: the running members, the implicit
  // members' decode sums, then the admissions from the wait queue.
  [[gnu::always_inline]] inline void schedule_running(SimTime now, Forming& f);
  [[gnu::always_inline]] inline void add_implicit_sums();
  [[gnu::always_inline]] inline void admit_waiting(SimTime now, Forming& f);
  // The first batch position from `i` on whose member is due at step S
  // (implicit members not due take their token without being handled).
  [[gnu::always_inline]] inline size_t next_due(size_t i, uint64_t S) const;
  // The budget ran out: the members from batch position `i` on stall.
  [[gnu::noinline]] void stall_from(size_t i, uint64_t S, SimTime now);
  // An implicit member due at step S, brought up to date: true when it was
  // due for its new block only and got it here (it stays implicit, its token
  // taken from the budget), else it is explicit again.
  [[gnu::always_inline]] inline bool renew_implicit(size_t pos, uint64_t S, SimTime now, int64_t& budget);
  // Implicit members needing own blocks at steps s with s % block_size ==
  // p, counted by p; taken at once per step (bulk_blocks()).
  std::vector<int64_t> phase_count_;
  // How many of the steps boundary, boundary + block_size, ... are <= done.
  int64_t boundaries_by(uint64_t boundary, uint64_t done) const {
    return done >= boundary
               ? static_cast<int64_t>((done - boundary) / static_cast<uint64_t>(cfg_.block_size)) + 1
               : 0;
  }
  // `boundary` < mb.event, and less than 2^32 steps before it (its event
  // is its last token or length cap, within int32 output tokens).
  void count_phase(Member& mb, uint64_t boundary) {
    mb.before_event = static_cast<uint32_t>(mb.event - boundary);
    ++phase_count_[boundary % static_cast<uint64_t>(cfg_.block_size)];
  }
  void uncount_phase(Member& mb) {
    --phase_count_[mb.boundary() % static_cast<uint64_t>(cfg_.block_size)];
    mb.before_event = 0;
  }
  // Step S's own blocks of the counted members, before the batch is walked:
  // the listed due members leave the count first. When the step could
  // stall or fail an allocation, or the blocks are not all in runs at the
  // free list's head, every counted member goes back to being due at its
  // next block (settle_phases()) instead; false then (the due list changed).
  [[gnu::noinline]] bool bulk_blocks(uint64_t S, size_t listed, int64_t budget, SimTime now);
  // Whether the step's wanted tokens fit the budget and its blocks
  // (`blocks` besides those of the listed members) are free, in runs.
  bool bulk_fits(size_t listed, int64_t budget, int64_t blocks) const;
  void settle_phases(uint64_t S, SimTime now);
  // The tokens a running member would compute this step with no budget limit.
  [[gnu::always_inline]] inline int64_t wanted_tokens(const StepState& r) const;
  // renew_implicit() for a member due for an own block only, without
  // bringing it up: false when that is not the case, or the block is not free.
  [[gnu::always_inline]] inline bool renew_block(size_t pos, uint64_t S, int64_t& budget);
  // Schedules the explicit member at batch position `pos` (which a
  // preemption may move): false when its tokens could not be reserved.
  [[gnu::always_inline]] inline bool schedule_member(size_t& pos, Forming& f);
  // The tokens a running member computes this step within `budget`; one
  // decode token counts in the decode sums.
  [[gnu::always_inline]] inline int64_t member_tokens(const StepState& r, int64_t budget);
  // The queue's head with KV transferred by a prefill instance (P/D).
  enum class Transferred { Joined, Stop, Prefill };
  [[gnu::noinline]] Transferred admit_transferred(uint32_t slot, SimTime now, int64_t& budget);
  // The queue's head for its prompt's prefill: false when admission stops.
  [[gnu::always_inline]] inline bool admit_prefill(uint32_t slot, SimTime now, int64_t& budget);
  // --kv-offload-config with secondary tiers: admissions that may pass over
  // queued requests waiting for a fetch (engine/kv_offload.hpp).
  [[gnu::noinline]] void admit_waiting_deferring(SimTime now, Forming& f);
  // After batch formation: the offload chain stores the batch's blocks.
  [[gnu::noinline]] void mirror_to_offload(SimTime now, Forming& f);
  // The request leaves the wait queue from wherever it is.
  void leave_queue(const Request& q);
  // The queue's head, its entry set, leaves the queue and joins the batch.
  [[gnu::always_inline]] inline void join_batch(Request& q, SimTime now);
  // May preempt requests ahead of batch_pos, which then moves with its request.
  [[gnu::noinline]] bool reserve(size_t& batch_pos, int64_t n, bool& preempted_any);
  // Moves a request out of the batch's tail, its step state back home.
  Request& pop_running();
  // The position of the request to preempt (spec head §7.3) and its removal.
  size_t preemption_victim() const;
  // A request's vLLM priority less a constant (HEAD's InvertForVLLM: the
  // highest SLO priority minus its class's; lower is more urgent): the wait
  // queue's rank under --priority-policy slo-class, the preemption victim's.
  int64_t queue_rank(const Request& r) const { return -cfg_.slo_priorities.priority(r.spec.slo_class); }
  Request& take_running(size_t pos);
  void preempt(Request& r);
  void execute(SimTime now, int64_t dt);
  // Handles the member at `pos` after the step's tokens; false if it left.
  bool execute_member(size_t pos, SimTime end, uint64_t step);
  // Makes the member at `pos` explicit again; implicit, it gets the updates
  // of the steps up to `done` (the last one run), which ended at `end`.
  void catch_up(size_t pos, uint64_t done, SimTime end);
  // catch_up()'s update of the step state alone: the member stays implicit.
  void bring_up(const Member& mb, uint64_t done, SimTime end);
  // Every member becomes explicit, in its state of this step's formation:
  // those ahead of batch position `formed` have been through it.
  [[gnu::noinline]] void make_all_explicit(size_t formed, SimTime now);
  // Between steps: every member explicit, as of the last step.
  void make_all_explicit();
  // With its state as of the end of step S: implicit from then on when it
  // qualifies.
  void anchor(size_t pos, uint64_t S);
  // Steps from the state's last step to the member's next due one.
  [[gnu::always_inline]] inline int64_t steps_to_due(const StepState& r) const;
  // Steps to its last token or its length cap.
  [[gnu::always_inline]] inline int64_t events_ahead(const StepState& r) const;
  // Whether its coming blocks are own blocks whose filling registers nothing.
  [[gnu::always_inline]] inline bool own_blocks_ahead(const StepState& r) const;
  uint32_t slab_add(Request& q);
  void slab_free(uint32_t slot);
  // The batch as the latency model reads it (entries in batch order).
  blis_step_batch gathered_batch(SimTime now);
  void emit_token(Running& r, SimTime end, uint64_t step);
  [[gnu::noinline]] void emit_token_slow(Running& r, SimTime end, uint64_t step);
  // `r.step()` must hold its step state.
  void complete(Request& r, bool capped, SimTime end);
  void drop(uint32_t slot);
  bool reclaim_queued_kv(uint32_t head);
  static void init_queued(StepState& st, const Request& r);
  // A queued request's step state, made at its first admission.
  StepState& queued_step(Request& r);
  void release_queued(Request& q);
  // Passes the enqueue guards of spec engine §2.7 on this instance.
  bool servable(const Request& r) const;
  // `r` holds its step state and no KV; it leaves the instance.
  void time_out(Request& r);
  // LoRA (engine/lora.hpp), only with lora_: the wait queue's head starts
  // its adapter's load; whether the head waits for its adapter; a request
  // joins the batch or leaves the instance; the step's overhead.
  [[gnu::noinline]] void lora_start_load(SimTime now);
  bool lora_gated(const Request& q) const {
    return !q.spec.adapter.empty() && !lora_->resident(q.spec.adapter);
  }
  [[gnu::noinline]] void lora_joined(Request& q);
  void lora_release(Request& r) {
    if (lora_ && r.adapter_pinned) {
      lora_->unpin(r.spec.adapter);
      r.adapter_pinned = false;
    }
  }
  [[gnu::noinline]] int64_t lora_step_time(int64_t dt) const;
  void on_adapter_load();

  // Lazy steps (allow_lazy_steps()): the durations of the plain steps from
  // step_index_ + 1 on, priced ahead, of which those from `next` on have
  // not run; step `next` starts at `start`. The step event waits where the
  // last one ends.
  struct Stretch {
    std::vector<int64_t> dt;
    size_t next = 0;
    SimTime start = 0;
    bool left = false;  // next < dt.size(), kept at hand for every event's look
    bool pending() const { return left; }
    void clear() {
      dt.clear();
      next = 0;
      left = false;
    }
  };
  // How many plain steps a stretch prices ahead at most, and how many of
  // them may start after the instance's next enqueue as its last two
  // foretell it (a stretch is cut short at an enqueue, and its unrun steps
  // were priced for nothing; in the 128-instance trial of the tutorial plan
  // these bounds leave 4 % of the priced steps unrun, 7 % with Poisson
  // arrivals, against 45 % for up to 1024 steps ahead without the foretold
  // enqueue).
  static constexpr size_t kLookahead = 128, kPastEnqueue = 4;
  // After a step, the next of which starts at `t`: prices the plain steps
  // from there on (none when the next step is not plain), and returns when
  // the first step after them starts.
  SimTime plan_stretch(SimTime t);
  // Runs the stretch's steps that start before `t` (and at `t` when `at_t`).
  void run_plain(SimTime t, bool at_t);
  // An event of the instance other than its step: the stretch's steps
  // before it run; one that may change the batch drops the rest, and the
  // step event moves to the first of them.
  void interrupt(const Event& e);
  void check_settled() const {
    if (stretch_.pending()) unsettled_read();
  }
  [[noreturn, gnu::noinline]] static void unsettled_read();

 public:
  // A scenario event's `adapter` action (docs/lora.md): starts loading
  // adapter `id` now, or drops it from its slot; what happened, for the
  // event report. Requires lora() (the driver checks it).
  std::string lora_preload(const Label& id, SimTime now);
  std::string lora_unload(const Label& id);

 private:
  int32_t index_;
  EngineConfig cfg_;
  std::unique_ptr<LatencyModel> model_;
  RequestPool& pool_;
  Kernel& kernel_;
  RequestSignals& signals_;
  uint32_t step_lane_;  // the kernel's lane of this instance's steps (at most one is pending)
  KVCache kv_;

  WaitQueue waiting_;
  std::vector<Running> slab_;  // the running requests' step states, at stable places
  std::vector<uint32_t> slab_free_;
  std::vector<Member> batch_;  // batch order
  std::vector<uint64_t> dues_;  // the members' due steps (Member), in batch order
  // No member is due before this step: every due written lowers it, and a
  // scan that finds none due raises it to the least due, so that steps
  // before that need no scan.
  uint64_t due_floor_ = 0;
  void set_due(size_t pos, uint64_t step) {
    dues_[pos] = step;
    due_floor_ = std::min(due_floor_, step);
  }
  // Lists the positions due at step S in due_list_ (sized); how many.
  // In a batch of at most kFloorBatchSize members, a scan that finds none
  // raises due_floor_ to the least due (in a larger one members fall due
  // every step or two, and finding the least would cost more than the scans
  // it saves).
  static constexpr size_t kFloorBatchSize = 32;
  size_t collect_due(uint64_t S);
  uint64_t least_due() const {
    uint64_t least = UINT64_MAX;
    for (const uint64_t d : dues_) least = std::min(least, d);
    return least;
  }
  due_scan::CollectDueFn collect_due_ = due_scan::best().collect_due;
  std::vector<uint32_t> due_list_;  // schedule_running()'s due positions
  // Removes the members at the positions in gone_ (ascending).
  void compact_batch();
  std::vector<uint32_t> gone_;  // execute()'s positions of members that left
  // Removes the member at batch position `pos`.
  void erase_member(size_t pos);
  // The step's members handled member by member (positions in batch_, in
  // batch order), or every member when all_active_.
  std::vector<uint32_t> active_;
  bool all_active_ = false;
  std::vector<blis_batch_entry> gathered_;  // gathered_batch()'s entries
  bool step_pending_ = false;
  uint64_t step_index_ = 0;
  SimTime last_step_end_ = 0;  // when the last step run ends
  SimTime last_time_ = 0;  // latest instance event or departure time
  int64_t kv_allocation_failures_ = 0;
  uint64_t changes_ = 0;  // see changes()
  int64_t member_steps_ = 0, member_updates_ = 0;  // InstanceEnd's
  double slowdown_ = 1.0;  // straggler factor on step time (scenario `slow` events)
  std::unique_ptr<LoraSlots> lora_;  // with active adapters only
  mutable std::vector<Label> lora_seen_;  // lora_step_time()'s scratch

  std::vector<int32_t> hits_;  // scratch, reused at every admission
  std::unique_ptr<OffloadChain> offload_;  // --kv-offload-config
  bool deferred_now_ = false;  // admit_prefill() set its request aside for a fetch
  std::vector<uint32_t> queue_scratch_;

  // Set by form_batch: the sums of progress and input lengths of the
  // members that decode one token this step, and (others_) a copy of every
  // other member's entry in batch order, so the model may price the step
  // from those (valid: no preemption moved members while the batch formed).
  struct DecodeSums {
    bool valid = false;
    int64_t progress = 0, progress_max = 0, input_tokens = 0;
  };
  DecodeSums decode_sums_;
  // The implicit members' count and sums of keys and input tokens, and their
  // largest key (recomputed when the member holding it may have left).
  struct ImplicitSums {
    int64_t count = 0, key_sum = 0, input_sum = 0, key_max = 0;
    bool max_stale = false;
  };
  ImplicitSums implicit_;
  int64_t implicit_key_max();
  std::vector<blis_batch_entry> others_;
  bool prices_sums_ = false;  // the model has the aggregate entry

  Stretch stretch_;
  bool lazy_ok_ = false;  // allow_lazy_steps()
  uint64_t lazy_steps_ = 0;
  SimTime last_enqueue_ = -1, enqueue_gap_ = 0;  // its last enqueue, and the gap before it
  uint64_t step_priority_;  // its step events' place among events of their time
};

}  // namespace blis
