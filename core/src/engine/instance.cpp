#include "engine/instance.hpp"

#include "cluster/request_signals.hpp"
#include "kernel/events.hpp"

#include <blis/errors.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace blis {

Instance::Instance(int32_t index, const EngineConfig& cfg, std::unique_ptr<LatencyModel> model,
                   RequestPool& pool, Kernel& kernel, RequestSignals& signals)
    : index_(index),
      cfg_(cfg),
      model_(std::move(model)),
      pool_(pool),
      kernel_(kernel),
      signals_(signals),
      step_lane_(kernel.queue().add_lane()),
      kv_(cfg.total_kv_blocks, cfg.block_size),
      waiting_(cfg.order) {
  if (cfg.max_model_len > 0 &&
      (cfg.max_model_len + cfg.block_size - 1) / cfg.block_size > cfg.total_kv_blocks)
    throw InputError("--max-model-len",
                     "KV cache too small for max-model-len " + std::to_string(cfg.max_model_len) +
                         " (" + std::to_string(cfg.total_kv_blocks) + " blocks of " +
                         std::to_string(cfg.block_size) +
                         " tokens); lower --max-model-len or raise --total-kv-blocks");
  kv_.enable_cpu_tier(cfg.cpu_tier);
  if (cfg.offload) offload_ = std::make_unique<OffloadChain>(kv_, *cfg.offload);
  prices_sums_ = model_->prices_decode_aggregates();
  step_priority_ = event_priority(EventKind::Step, index_);
  phase_count_.assign(static_cast<size_t>(std::max<int32_t>(cfg.block_size, 1)), 0);
  if (cfg.lora && cfg.lora->active()) {
    lora_ = std::make_unique<LoraSlots>(cfg.lora, index_);
    // The step's overhead reads every scheduled member's adapter: no implicit members.
    prices_sums_ = false;
  }
}

void Instance::inject(uint32_t slot, SimTime t) {
  Request& r = pool_[slot];
  r.instance = index_;
  r.state = RequestState::Routed;
  schedule(kernel_, t, EventKind::InstanceArrival, index_, slot);
}

void Instance::on_event(const Event& e) {
  // An arrival reads nothing of the instance (its enqueue comes later).
  if (stretch_.pending() && kind_of(e) != EventKind::Step && kind_of(e) != EventKind::InstanceArrival)
    interrupt(e);
  ++changes_;
  // A timeout of a request that already left is no event of the instance: it
  // leaves the instance's clock alone (spec head §4.1).
  if (kind_of(e) == EventKind::Timeout) {
    on_timeout(e.payload);
    return;
  }
  last_time_ = std::max(last_time_, e.time);
  switch (kind_of(e)) {
    case EventKind::InstanceArrival: on_arrival(static_cast<uint32_t>(e.payload)); break;
    case EventKind::Queued: on_queued(static_cast<uint32_t>(e.payload)); break;
    case EventKind::Step: on_step(); break;
    case EventKind::AdapterLoad: on_adapter_load(); break;
    default: throw RuntimeError("internal error: not an instance event");
  }
}

// spec engine §2.2: the request is enqueued after the model's queueing time.
void Instance::on_arrival(uint32_t slot) {
  blis_request_view v = request_view(pool_[slot], cfg_.block_size, pool_);
  int64_t delay = model_->queueing_time(v);
  schedule(kernel_, kernel_.now() + delay, EventKind::Queued, index_, slot);
}

// spec engine §2.7: enqueue guards, then the wait queue. A step is scheduled
// only if none is pending (the reference could start a second, duplicate step
// chain here: quirk Q1).
void Instance::on_queued(uint32_t slot) {
  Request& r = pool_[slot];
  const int64_t in = r.spec.input_tokens;
  if (!servable(r)) {
    drop(slot);
    return;
  }
  // spec head §4.1: past its deadline already, it is not enqueued; otherwise
  // its timeout is set, unless the run ends first.
  if (const int64_t deadline = r.spec.deadline_us; deadline > 0) {
    if (deadline <= kernel_.now()) {
      time_out(r);
      return;
    }
    if (deadline <= cfg_.horizon)
      schedule(kernel_, deadline, EventKind::Timeout, index_,
               (static_cast<uint64_t>(r.incarnation) << 32) | slot);
  }
  r.state = RequestState::Queued;
  // A request that never ran gets its step state when first admitted.
  if (r.has_step()) init_queued(r.step_mut(), r);
  waiting_.push_back(slot, r.spec.arrival_us, in, r.spec.id, queue_rank(r));
  if (last_enqueue_ >= 0) enqueue_gap_ = kernel_.now() - last_enqueue_;
  last_enqueue_ = kernel_.now();
  signals_.queued(r, kernel_.now());
  if (!step_pending_) {
    step_pending_ = true;
    schedule_step(kernel_, step_lane_, kernel_.now(), index_);
  }
}

// The step state of a request as it enters the wait queue.
void Instance::init_queued(StepState& st, const Request& r) {
  const int64_t in = r.spec.input_tokens;
  st.entry.input_tokens = in;
  // A P/D prefill computes the prompt's KV and delivers no token (spec head §5.2).
  st.output_tokens = r.pd == PdStage::Prefill ? 0 : r.spec.output_tokens;
  st.kv.shareable = r.spec.shareable_blocks;  // kv.hashes: when first scheduled
  st.set_progress(0, in);
}

StepState& Instance::queued_step(Request& r) {
  if (!r.has_step()) init_queued(pool_.make_step(r), r);
  return r.step_mut();
}

bool Instance::servable(const Request& r) const {
  const int64_t in = r.spec.input_tokens;
  const int64_t m = cfg_.max_model_len;
  int64_t budget = r.spec.max_output_tokens;
  if (budget == 0 && m > 0 && in < m) budget = m - in;
  bool ok = budget >= 0;
  if (ok && m > 0) ok = in < m && !(budget > 0 && in + budget > m);
  if (ok) ok = (in + cfg_.block_size - 1) / cfg_.block_size <= cfg_.total_kv_blocks;
  return ok;
}

// spec head §5.2 step 5: blocks for the whole prompt, reusing what the cache
// holds of it; the rest arrives over the wire.
bool Instance::reserve_transfer(Request& r, SimTime now) {
  ++changes_;
  if (!servable(r)) return false;
  kv_.set_clock(now);
  StepState& st = pool_.make_step(r);
  st = StepState{};
  const int64_t in = r.spec.input_tokens;
  st.entry.input_tokens = in;
  st.output_tokens = r.spec.output_tokens;
  // Its blocks hold its content from now on: lazy content is made here.
  pool_.complete_content(r, cfg_.block_size);
  st.kv.hashes = r.spec.block_hashes.data();
  st.kv.num_hashes = static_cast<int64_t>(r.spec.block_hashes.size());
  st.kv.shareable = r.spec.shareable_blocks;
  const int64_t b = cfg_.block_size;
  const int64_t max_hits = std::min<int64_t>(std::max<int64_t>(in - 1, 0) / b, st.kv.num_hashes);
  const int64_t start = kv_.cached_prefix(st.kv.hashes, max_hits, hits_) * b;
  if (!kv_.allocate(st.kv, hits_, in - start)) return false;
  st.set_progress(in, in);
  return true;
}

void Instance::release_transfer(Request& r) {
  ++changes_;
  kv_.release(r.step_mut().kv);
}

// spec head §5.2 step 6: queued with its KV in place; its first step decodes.
void Instance::enqueue_transferred(uint32_t slot, SimTime now) {
  ++changes_;
  Request& r = pool_[slot];
  r.instance = index_;
  r.state = RequestState::Queued;
  last_time_ = std::max(last_time_, now);
  waiting_.push_back(slot, r.spec.arrival_us, r.spec.input_tokens, r.spec.id, queue_rank(r));
  signals_.queued(r, now);
  if (!step_pending_) {
    step_pending_ = true;
    schedule_step(kernel_, step_lane_, now, index_);
  }
}

void Instance::drop(uint32_t slot) {
  Request& r = pool_[slot];
  spdlog::warn("instance_{}: dropping request_{} (input {} tokens): it can never be served "
               "(max-model-len {}, {} KV blocks of {} tokens)",
               index_, r.spec.id, r.spec.input_tokens, cfg_.max_model_len, cfg_.total_kv_blocks,
               cfg_.block_size);
  signals_.dropped(r, kernel_.now());
  signals_.departed(r, kernel_.now());
  pool_.release(slot);
}

// spec head §4.1: the request leaves the wait queue or the running batch
// with its KV; a step that has nothing left to do is not run.
void Instance::on_timeout(uint64_t payload) {
  Request& r = pool_[static_cast<uint32_t>(payload)];
  if (r.incarnation != static_cast<uint32_t>(payload >> 32)) return;  // completed or dropped before
  // Taken from this instance by a failure and routed again: on its way, or
  // queued or running elsewhere (where its deadline is set again), it is not
  // this instance's to time out.
  if (r.instance != index_ || (r.state != RequestState::Queued && r.state != RequestState::Running)) return;
  last_time_ = std::max(last_time_, kernel_.now());
  take_off(r);
  time_out(r);
  if (!step_pending_ && !waiting_.empty()) {
    step_pending_ = true;
    schedule_step(kernel_, step_lane_, kernel_.now(), index_);
  }
}

void Instance::take_off(Request& r) {
  lora_release(r);
  if (r.state == RequestState::Running) {
    size_t pos = 0;
    while (slab_[batch_[pos].slot].req != &r) ++pos;
    catch_up(pos, step_index_, last_step_end_);
    r.step_mut() = slab_[batch_[pos].slot].s;
    slab_free(batch_[pos].slot);
    erase_member(pos);
    kv_.release(r.step_mut().kv);
  } else {
    waiting_.erase(r.slot, r.spec.arrival_us, r.spec.input_tokens, r.spec.id, queue_rank(r));
    if (offload_) offload_->forget(r.spec.id);
    if (r.step().kv.count > 0) kv_.release(r.step_mut().kv);  // P/D: KV transferred for its decode
  }
}

bool Instance::evict_one(uint32_t slot) {
  Request& r = pool_[slot];
  if (r.instance != index_ || (r.state != RequestState::Queued && r.state != RequestState::Running)) return false;
  const SimTime now = kernel_.now();
  ++changes_;
  last_time_ = std::max(last_time_, now);
  take_off(r);
  signals_.evicted(r, now);
  signals_.departed(r, now);
  pool_.release(r.slot);
  if (!step_pending_ && !waiting_.empty()) {
    step_pending_ = true;
    schedule_step(kernel_, step_lane_, now, index_);
  }
  return true;
}

void Instance::time_out(Request& r) {
  signals_.timed_out(r, kernel_.now());
  signals_.departed(r, kernel_.now());
  pool_.release(r.slot);
}

void Instance::on_step() {
  const SimTime now = kernel_.now();
  if (batch_.empty() && waiting_.empty()) {
    step_pending_ = false;  // timeouts or an eviction emptied the instance since the step was set
    return;
  }
  if (stretch_.pending()) {
    run_plain(now, false);  // every one of them, this step following the last
    stretch_.clear();
  }
  ++step_index_;
  kv_.set_clock(now);
  if (offload_) offload_->set_clock(now);
  form_batch(now);

  // Phase 2: the step's duration from the latency model (spec engine §3.4).
  // A batch is priced from its decode sums when the model can (ABI 1.5),
  // else member by member. CPU-tier transfers triggered by this step's
  // batch formation lengthen it.
  int64_t dt = 0;
  const DecodeSums& sums = decode_sums_;
  const int64_t count = static_cast<int64_t>(batch_.size());
  if (!(prices_sums_ && sums.valid &&
        model_->decode_step_time(
            blis_decode_batch{sizeof(blis_decode_batch), sizeof(blis_batch_entry), now,
                              count - static_cast<int64_t>(others_.size()), sums.progress,
                              sums.progress_max, sums.input_tokens, static_cast<int64_t>(others_.size()),
                              others_.empty() ? nullptr : others_.data()},
            dt)))
    dt = model_->step_time(gathered_batch(now));
  if (lora_) dt = lora_step_time(dt);
  dt += kv_.take_transfer_latency();
  if (offload_) dt += offload_->take_transfer_latency();
  if (slowdown_ != 1.0) dt = static_cast<int64_t>(std::ceil(static_cast<double>(dt) * slowdown_));
  dt = std::max<int64_t>(1, dt);
  signals_.step(StepSample{index_, now, dt, static_cast<int64_t>(waiting_.size()), kv_.used_blocks(), count});

  member_steps_ += count;
  member_updates_ += all_active_ ? count : static_cast<int64_t>(active_.size());
  execute(now, dt);

  // Phase 4: work-conserving: keep stepping while anything waits or runs
  // (LoRA: what waits behind an adapter's load waits for its completion).
  if (!batch_.empty() || (!waiting_.empty() && !(lora_ && lora_->loading()))) {
    // A stretch needs a small batch and nothing waiting (plan_stretch()).
    const bool may_stretch = lazy_ok_ && batch_.size() <= kFloorBatchSize && waiting_.empty();
    schedule_step(kernel_, step_lane_, may_stretch ? plan_stretch(now + dt) : now + dt, index_);
  } else {
    step_pending_ = false;
  }
}

void Instance::allow_lazy_steps() { lazy_ok_ = prices_sums_ && !lora_ && !offload_ && !kv_.has_cpu_tier(); }

void Instance::unsettled_read() {
  throw RuntimeError(
      "internal error: an instance's state was read while steps of it ran without events "
      "(lazy steps need a run in which nobody else reads an instance)");
}

// A plain step S, as on_step() would run it: nothing is due (every member
// implicit, the least due after S) and nothing waits, so the batch forms
// as it was, each member taking one token; its own blocks come in bulk
// (bulk_blocks(), which needs the batch within the token budget and the
// blocks in runs at the free list's head); the model prices it from the
// implicit sums (add_implicit_sums()), with no transfers (no CPU tier or
// offload chain) or adapters; and executing it hands nothing back, its
// tokens being implicit. The model's decode_step_time() is a function of
// its batch (sdk/include/blis/plugin.h), so a step priced ahead and then
// dropped changes nothing; a step it declines or fails to price ends the
// stretch, and is priced (and fails) as any step would be.
SimTime Instance::plan_stretch(SimTime t) {
  stretch_.clear();
  stretch_.start = t;
  const auto count = static_cast<int64_t>(batch_.size());
  if (!waiting_.empty() || implicit_.count != count || count > static_cast<int64_t>(kFloorBatchSize) ||
      count >= cfg_.max_scheduled_tokens)
    return t;
  const uint64_t first = step_index_ + 1;
  if (due_floor_ <= first) {
    due_floor_ = least_due();  // a small batch: found in a few instructions
    if (due_floor_ <= first) return t;
  }
  const uint64_t steps = std::min<uint64_t>(due_floor_ - first, kLookahead);
  const auto b = static_cast<uint64_t>(cfg_.block_size);
  int64_t need = 0;
  for (uint64_t S = first; S < first + steps; ++S) need += phase_count_[S % b];
  const int64_t room = need > 0 ? kv_.own_run_room(need) : 0;
  const int64_t key_max = implicit_key_max();
  const SimTime horizon = kernel_.horizon();
  // The next enqueue, if as far from the last as that from the one before.
  const SimTime enqueue = enqueue_gap_ > 0 ? last_enqueue_ + enqueue_gap_ : kForever;
  int64_t blocks = 0;
  size_t past = 0;
  for (uint64_t S = first; S < first + steps && t <= horizon; ++S) {
    if (t > enqueue && ++past > kPastEnqueue) break;
    blocks += phase_count_[S % b];
    if (blocks > room) break;
    const int64_t at = static_cast<int64_t>(S) - 1;  // an implicit member's progress: key + at
    const blis_decode_batch batch{sizeof(blis_decode_batch),
                                  sizeof(blis_batch_entry),
                                  t,
                                  count,
                                  implicit_.key_sum + count * at,
                                  std::max<int64_t>(0, key_max + at),
                                  implicit_.input_sum,
                                  0,
                                  nullptr};
    int64_t dt = 0;
    bool priced = false;
    try {
      priced = model_->decode_step_time(batch, dt);
    } catch (const std::exception&) {
      priced = false;
    }
    if (!priced) break;
    if (slowdown_ != 1.0) dt = static_cast<int64_t>(std::ceil(static_cast<double>(dt) * slowdown_));
    dt = std::max<int64_t>(1, dt);
    stretch_.dt.push_back(dt);
    t += dt;
  }
  stretch_.left = !stretch_.dt.empty();
  return t;
}

// What on_step() does for a plain step (plan_stretch()), and the instance
// event's own bookkeeping (on_event()).
void Instance::run_plain(SimTime t, bool at_t) {
  const auto count = static_cast<int64_t>(batch_.size());
  const auto b = static_cast<uint64_t>(cfg_.block_size);
  SimTime start = stretch_.start;
  size_t i = stretch_.next;
  for (; i < stretch_.dt.size() && (start < t || (at_t && start == t)); ++i) {
    const int64_t dt = stretch_.dt[i];
    ++changes_;
    last_time_ = std::max(last_time_, start);
    const uint64_t S = ++step_index_;
    kv_.set_clock(start);
    if (const int64_t blocks = phase_count_[S % b]; blocks > 0) kv_.add_own_runs(blocks);
    signals_.step(StepSample{index_, start, dt, 0, kv_.used_blocks(), count});
    member_steps_ += count;
    last_step_end_ = start + dt;
    start += dt;
  }
  lazy_steps_ += i - stretch_.next;
  stretch_.next = i;
  stretch_.start = start;
  stretch_.left = i < stretch_.dt.size();
}

void Instance::interrupt(const Event& e) {
  // At the same time, events of lower priority come before the step.
  run_plain(e.time, step_priority_ < e.priority());
  if (stretch_.pending()) kernel_.retime_lane(step_lane_, stretch_.start);
  stretch_.clear();
}

void Instance::run_lazy_through(SimTime t) {
  if (!stretch_.pending()) return;
  run_plain(t, true);
  stretch_.clear();
}

blis_step_batch Instance::gathered_batch(SimTime now) {
  // An implicit member's entry is its anchored one with this step's
  // progress and its one new token.
  const int64_t progress_at = static_cast<int64_t>(step_index_) - 1;
  gathered_.resize(batch_.size());
  for (size_t i = 0; i < batch_.size(); ++i) {
    const Member& mb = batch_[i];
    blis_batch_entry& e = gathered_[i];
    e = slab_[mb.slot].s.entry;
    if (dues_[i] != 0) {
      e.progress = mb.key + progress_at;
      e.new_tokens = 1;
    }
  }
  return blis_step_batch{sizeof(blis_step_batch), sizeof(blis_batch_entry), now,
                         static_cast<int64_t>(batch_.size()), gathered_.empty() ? nullptr : gathered_.data()};
}

uint32_t Instance::slab_add(Request& q) {
  uint32_t slot = 0;
  if (!slab_free_.empty()) {
    slot = slab_free_.back();
    slab_free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slab_.size());
    slab_.emplace_back();
  }
  slab_[slot] = Running{q.step(), &q};
  return slot;
}

void Instance::slab_free(uint32_t slot) {
  slab_[slot].req = nullptr;
  slab_free_.push_back(slot);
}

int64_t Instance::implicit_key_max() {
  if (implicit_.max_stale) {
    implicit_.key_max = INT64_MIN;
    for (size_t i = 0; i < batch_.size(); ++i)
      if (dues_[i] != 0) implicit_.key_max = std::max(implicit_.key_max, batch_[i].key);
    implicit_.max_stale = false;
  }
  return implicit_.key_max;
}

void Instance::catch_up(size_t pos, uint64_t done, SimTime end) {
  if (dues_[pos] == 0) return;
  const Member& mb = batch_[pos];
  --implicit_.count;
  implicit_.key_sum -= mb.key;
  implicit_.input_sum -= mb.input;
  if (mb.key >= implicit_.key_max) implicit_.max_stale = true;
  set_due(pos, 0);
  bring_up(mb, done, end);
  if (mb.counted()) uncount_phase(batch_[pos]);
}

void Instance::bring_up(const Member& mb, uint64_t done, SimTime end) {
  StepState& r = slab_[mb.slot].s;
  const int64_t k = mb.key + static_cast<int64_t>(done) - r.entry.progress;
  if (k > 0) {
    if (mb.counted()) {
      // The blocks the steps' bulk allocations took for it since it was
      // last brought up (its progress tells when that was).
      const auto last = static_cast<uint64_t>(r.entry.progress - mb.key);
      const int64_t gained = boundaries_by(mb.boundary(), done) - boundaries_by(mb.boundary(), last);
      if (gained > 0) {
        r.kv.count += static_cast<int32_t>(gained);
        r.kv.last_id = -1;
      }
    }
    r.entry.progress += k;
    r.kv.tokens += k;
    r.emitted += static_cast<int32_t>(k);
    r.run_end += static_cast<uint64_t>(k);
    r.last_token_step += static_cast<uint64_t>(k);
    r.last_token_end = end;
  }
}

void Instance::make_all_explicit(size_t formed, SimTime now) {
  for (size_t i = 0; i < batch_.size(); ++i) {
    if (dues_[i] == 0) continue;
    const Member& mb = batch_[i];
    if (i < formed) {
      // It took its token of this step and counts in the sums.
      const int64_t pi = mb.key + static_cast<int64_t>(step_index_) - 1;
      decode_sums_.progress += pi;
      decode_sums_.progress_max = std::max(decode_sums_.progress_max, pi);
      decode_sums_.input_tokens += mb.input;
    }
    catch_up(i, step_index_ - 1, now);
    if (i < formed) {
      // Its token of this step, as form_batch() gives it (its last block has room).
      StepState& r = slab_[mb.slot].s;
      kv_.append_in_place(r.kv, 1);
      r.entry.new_tokens = 1;
    }
  }
  all_active_ = true;
}

void Instance::make_all_explicit() {
  for (size_t i = 0; i < batch_.size(); ++i) catch_up(i, step_index_, last_step_end_);
}

inline int64_t Instance::steps_to_due(const StepState& r) const {
  // The first step that fills its last block or needs a new one, that
  // delivers its last token, or that reaches the length cap. A block
  // filling with the request's own content (not indexed) has nothing to do
  // but count.
  const bool fill_registers = r.kv.count - 1 < std::min<int64_t>(r.kv.num_hashes, r.kv.shareable);
  const int64_t ahead = int64_t{r.kv.count} * cfg_.block_size - r.kv.tokens + (fill_registers ? 0 : 1);
  return std::min(ahead, events_ahead(r));
}

inline int64_t Instance::events_ahead(const StepState& r) const {
  int64_t ahead = r.output_tokens - r.emitted;
  if (cfg_.max_model_len > 0) ahead = std::min<int64_t>(ahead, cfg_.max_model_len - 1 - r.entry.progress);
  return ahead;
}

inline bool Instance::own_blocks_ahead(const StepState& r) const {
  // Its last block fills without registering, and the next is an own block.
  return r.kv.count - 1 >= std::min<int64_t>(r.kv.num_hashes, r.kv.shareable) && kv_.next_is_own(r.kv);
}

void Instance::anchor(size_t pos, uint64_t S) {
  Member& mb = batch_[pos];
  const StepState& r = slab_[mb.slot].s;
  set_due(pos, 0);
  if (!prices_sums_) return;
  // Decoding, its last token delivered by this step as part of a run of
  // standard ITLs, which its next tokens extend.
  if (r.entry.phase != BLIS_PHASE_DECODE || r.output_tokens <= 0 || r.emitted <= 0 ||
      r.last_token_step + 1 != S || r.run_end != S || r.run_end <= r.run_begin)
    return;
  const int64_t ahead = steps_to_due(r);
  if (ahead <= 1) return;
  set_due(pos, S + static_cast<uint64_t>(ahead));
  mb.event = own_blocks_ahead(r) ? S + static_cast<uint64_t>(events_ahead(r)) : dues_[pos];
  if (mb.event > dues_[pos]) {
    // Due for own blocks only until its event: counted by phase instead.
    count_phase(mb, dues_[pos]);
    set_due(pos, mb.event);
  }
  mb.key = r.entry.progress - static_cast<int64_t>(S);
  mb.input = r.entry.input_tokens;
  if (implicit_.count++ == 0) {
    implicit_.key_max = mb.key;
    implicit_.max_stale = false;
  } else if (!implicit_.max_stale) {
    implicit_.key_max = std::max(implicit_.key_max, mb.key);
  }
  implicit_.key_sum += mb.key;
  implicit_.input_sum += mb.input;
}

// spec engine §3.2: running requests first, in batch order, then admissions
// from the head of the wait queue while budget, batch slots and KV allow.
void Instance::form_batch(SimTime now) {
  // The sums of the members that decode one token, the others' entries in
  // batch order: the model may price the step from those (DecodeSums).
  decode_sums_ = DecodeSums{};
  others_.clear();
  active_.clear();
  all_active_ = false;
  Forming f;
  f.budget = cfg_.max_scheduled_tokens;
  if (lora_) lora_start_load(now);
  schedule_running(now, f);
  add_implicit_sums();
  // Preemptions moved members the sums counted: the step is priced member by member.
  if (f.preempted_any) f.valid = false;
  admit_waiting(now, f);
  if (offload_) mirror_to_offload(now, f);
  decode_sums_.valid = f.valid && !batch_.empty();
}

// The batch arrives with new_tokens and cached_tokens at 0 (see execute()).
// Implicit members not due take one token each, and count in the sums
// through implicit_ (once the loop is done: those still implicit then).
void Instance::schedule_running(SimTime now, Forming& f) {
  const uint64_t S = step_index_;
  // The positions of the members due at S, found in one pass over dues_,
  // taken in order. A preemption moves members (and makes every one
  // explicit): from then on, next_due() finds them.
  due_list_.resize(dues_.size());
  size_t listed = collect_due(S);
  if (implicit_.count > 0 && !bulk_blocks(S, listed, f.budget, now)) listed = collect_due(S);
  size_t next = 0;
  size_t i = 0;
  while (i < batch_.size()) {
    size_t j = 0;
    if (!f.preempted_any) {
      j = next < listed ? due_list_[next++] : batch_.size();
    } else {
      j = next_due(i, S);
    }
    const int64_t run = static_cast<int64_t>(j - i);
    if (run > 0) {
      if (run >= f.budget) {
        // The budget runs out in the run, or right after it: the rest stall.
        i += static_cast<size_t>(std::max<int64_t>(f.budget, 0));
        f.budget = 0;
      } else {
        f.budget -= run;
        i = j;
      }
      if (i == batch_.size()) break;
    }
    if (f.budget <= 0) {
      stall_from(i, S, now);
      break;
    }
    if (dues_[i] != 0 && (renew_block(i, S, f.budget) || renew_implicit(i, S, now, f.budget))) {
      ++i;
      continue;
    }
    if (!schedule_member(i, f)) {
      f.valid = false;
      break;
    }
    ++i;
  }
}

size_t Instance::collect_due(uint64_t S) {
  if (S < due_floor_) return 0;  // no member is due yet
  const size_t listed = collect_due_(dues_.data(), dues_.size(), S, due_list_.data());
  // With none due, none is before the least due, which the floor becomes
  // (in a small batch: in a large one members fall due every step or two,
  // and finding the least would cost more than the scans it saves); a
  // listed member may keep its due (an explicit one, 0), so the next step
  // looks again.
  if (listed > 0 || dues_.size() > kFloorBatchSize) {
    due_floor_ = S + 1;
  } else {
    due_floor_ = least_due();
  }
  return listed;
}

size_t Instance::next_due(size_t i, uint64_t S) const {
  while (i < dues_.size() && dues_[i] > S) ++i;
  return i;
}

void Instance::stall_from(size_t i, uint64_t S, SimTime now) {
  for (size_t k = i; k < batch_.size(); ++k) {
    catch_up(k, S - 1, now);
    others_.push_back(slab_[batch_[k].slot].s.entry);
    active_.push_back(static_cast<uint32_t>(k));
  }
}

bool Instance::bulk_blocks(uint64_t S, size_t listed, int64_t budget, SimTime now) {
  for (size_t k = 0; k < listed; ++k) {
    Member& mb = batch_[due_list_[k]];
    if (!mb.counted()) continue;
    bring_up(mb, S - 1, now);  // its blocks through step S - 1
    uncount_phase(mb);
  }
  const int64_t n = phase_count_[S % static_cast<uint64_t>(cfg_.block_size)];
  if (n == 0) return true;
  if (!bulk_fits(listed, budget, n)) {
    settle_phases(S, now);
    return false;
  }
  kv_.add_own_runs(n);
  return true;
}

bool Instance::bulk_fits(size_t listed, int64_t budget, int64_t blocks) const {
  // The members not listed take one token each; a listed implicit member at
  // most one token and one block.
  int64_t tokens = static_cast<int64_t>(batch_.size() - listed);
  for (size_t k = 0; k < listed; ++k) {
    const size_t pos = due_list_[k];
    const StepState& r = slab_[batch_[pos].slot].s;
    const int64_t t = dues_[pos] != 0 ? 1 : wanted_tokens(r);
    tokens += t;
    blocks += dues_[pos] != 0 ? 1 : kv_.blocks_needed(r.kv, t);
  }
  return tokens <= budget && kv_.runs_cover(blocks);
}

inline int64_t Instance::wanted_tokens(const StepState& r) const {
  const int64_t chunk = cfg_.long_prefill_threshold;
  const int64_t m = cfg_.max_model_len;
  const int64_t pi = r.pi();
  if (pi < r.prefill_target()) {
    int64_t n = r.prefill_target() - pi;
    if (chunk > 0 && chunk < n) n = chunk;
    if (m > 0) n = std::min(n, std::max<int64_t>(m - 1 - pi, 0));
    return n;
  }
  return r.output_tokens > 0 && !(m > 0 && pi + 1 > m - 1) ? 1 : 0;
}

void Instance::settle_phases(uint64_t S, SimTime now) {
  // Each counted member is due again at its next block (or its event).
  const auto b = static_cast<uint64_t>(cfg_.block_size);
  for (size_t i = 0; i < batch_.size(); ++i) {
    Member& mb = batch_[i];
    if (!mb.counted()) continue;
    bring_up(mb, S - 1, now);
    const uint64_t first = mb.boundary();
    const uint64_t next = S <= first ? first : first + (S - first + b - 1) / b * b;
    uncount_phase(mb);
    set_due(i, std::min(next, mb.event));
  }
}

bool Instance::renew_block(size_t pos, uint64_t S, int64_t& budget) {
  // Due before its event: its last block is full as of step S - 1 and this
  // step's token is neither its last nor at the cap (as renew_implicit()
  // would find it). The block is what add_block() would give; its token
  // stays implicit, so neither tokens nor progress need bringing up.
  Member& mb = batch_[pos];
  if (S >= mb.event || !kv_.add_own_block(slab_[mb.slot].s.kv)) return false;
  --budget;
  const uint64_t next = S + static_cast<uint64_t>(cfg_.block_size);
  if (next < mb.event) count_phase(mb, next);
  set_due(pos, mb.event);
  return true;
}

bool Instance::renew_implicit(size_t pos, uint64_t S, SimTime now, int64_t& budget) {
  const Member& mb = batch_[pos];
  StepState& r = slab_[mb.slot].s;
  bring_up(mb, S - 1, now);
  const int64_t b = cfg_.block_size;
  const int64_t m = cfg_.max_model_len;
  if (r.kv.tokens == int64_t{r.kv.count} * b && b > 1 && r.emitted + 1 < r.output_tokens &&
      !(m > 0 && r.pi() + 1 >= m - 1) && kv_.add_block(r.kv)) {
    // Due for its new block only: it gets the block here, as the step
    // would give it, and stays implicit (this step's token is one of
    // the implicit ones, not yet in the block's count). Its next due
    // step, as anchor() would set it at the end of the last step (at
    // least two steps on: a new block, and its last token and the cap
    // two or more steps away).
    --r.kv.tokens;
    --budget;
    set_due(pos, S - 1 + static_cast<uint64_t>(steps_to_due(r)));
    return true;
  }
  catch_up(pos, S - 1, now);  // brought up already: it leaves the implicit sums
  return false;
}

bool Instance::schedule_member(size_t& pos, Forming& f) {
  active_.push_back(static_cast<uint32_t>(pos));
  StepState& r = slab_[batch_[pos].slot].s;
  const int64_t n = member_tokens(r, f.budget);
  if (n == 0) {
    others_.push_back(r.entry);  // stalled
    return true;
  }
  if (!kv_.append_in_place(r.kv, n) && !reserve(pos, n, f.preempted_any)) return false;
  f.budget -= n;
  StepState& moved = slab_[batch_[pos].slot].s;  // reserve() may have moved its member
  moved.entry.new_tokens = static_cast<int32_t>(n);
  if (moved.entry.phase == BLIS_PHASE_PREFILL) others_.push_back(moved.entry);
  return true;
}

int64_t Instance::member_tokens(const StepState& r, int64_t budget) {
  const int64_t n = wanted_tokens(r);
  if (r.pi() < r.prefill_target()) return std::min(n, budget);
  if (n == 1) {
    const int64_t pi = r.pi();
    decode_sums_.progress += pi;
    decode_sums_.progress_max = std::max(decode_sums_.progress_max, pi);
    decode_sums_.input_tokens += r.entry.input_tokens;
  }
  return n;
}

void Instance::add_implicit_sums() {
  if (implicit_.count == 0) return;
  DecodeSums& sums = decode_sums_;
  const int64_t progress_at = static_cast<int64_t>(step_index_) - 1;  // an implicit member's progress: key + this
  sums.progress += implicit_.key_sum + implicit_.count * progress_at;
  sums.progress_max = std::max(sums.progress_max, implicit_key_max() + progress_at);
  sums.input_tokens += implicit_.input_sum;
}

void Instance::admit_waiting(SimTime now, Forming& f) {
  if (offload_ && offload_->defers()) return admit_waiting_deferring(now, f);
  while (static_cast<int64_t>(batch_.size()) < cfg_.max_running && !waiting_.empty() && f.budget > 0 &&
         !f.preempted_any) {
    const uint32_t slot = waiting_.front();
    Request& q = pool_[slot];
    if (lora_ && lora_gated(q)) break;  // head-of-line: its adapter is loading
    StepState& qs = queued_step(q);
    // Lazy content is made now, and stays until the request leaves.
    pool_.complete_content(q, cfg_.block_size);
    qs.kv.hashes = q.spec.block_hashes.data();
    qs.kv.num_hashes = static_cast<int64_t>(q.spec.block_hashes.size());
    if (qs.kv.count > 0) {
      const Transferred t = admit_transferred(slot, now, f.budget);
      if (t == Transferred::Joined) continue;
      if (t == Transferred::Stop) break;
    }
    if (!admit_prefill(slot, now, f.budget)) break;
  }
}

// P/D: its prompt's KV came from a prefill instance; it joins decoding, or
// (its own blocks filling the cache) computes its prompt here instead.
Instance::Transferred Instance::admit_transferred(uint32_t slot, SimTime now, int64_t& budget) {
  Request& q = pool_[slot];
  StepState& qs = q.step_mut();
  bool fits = kv_.append_in_place(qs.kv, 1) || kv_.allocate(qs.kv, {}, 1);
  if (!fits && batch_.empty() && reclaim_queued_kv(slot)) fits = kv_.allocate(qs.kv, {}, 1);
  if (fits) {
    qs.entry.new_tokens = 1;
    qs.entry.cached_tokens = 0;
    budget -= 1;
    DecodeSums& sums = decode_sums_;
    sums.progress += qs.pi();
    sums.progress_max = std::max(sums.progress_max, qs.pi());
    sums.input_tokens += qs.entry.input_tokens;
    join_batch(q, now);
    return Transferred::Joined;
  }
  if (!batch_.empty()) return Transferred::Stop;
  kv_.release(qs.kv, KVCache::Release::MayReturn);
  qs.set_progress(0, q.spec.input_tokens);
  return Transferred::Prefill;
}

bool Instance::admit_prefill(uint32_t slot, SimTime now, int64_t& budget) {
  Request& q = pool_[slot];
  StepState& qs = q.step_mut();
  const int64_t chunk = cfg_.long_prefill_threshold;
  const int64_t m = cfg_.max_model_len;
  // At least one token is always computed, so a fully cached prompt still
  // gets a prefill step (the reference admitted it with no work: quirk Q2).
  const int64_t b = cfg_.block_size;
  const int64_t max_hits = std::min<int64_t>((qs.prefill_target() - 1) / b, qs.kv.num_hashes);
  int64_t start = 0, n = 0;
  auto plan = [&] {
    start = kv_.cached_prefix(qs.kv.hashes, max_hits, hits_) * b;
    n = qs.prefill_target() - start;
    if (chunk > 0 && chunk < n) n = chunk;
    n = std::min(n, budget);
    if (m > 0) n = std::min(n, std::max<int64_t>(m - 1 - start, 0));
  };
  auto try_allocate = [&] { return kv_.allocate(qs.kv, hits_, n); };
  plan();
  if (n <= 0) return false;
  bool ok;
  if (offload_) {
    const int64_t full = std::min(q.spec.input_tokens / b, qs.kv.num_hashes);
    const OffloadChain::Admit a = offload_->admit(q.spec.id, qs.kv, qs.kv.hashes, full, hits_, n);
    if (a == OffloadChain::Admit::Deferred) {
      deferred_now_ = true;
      return false;
    }
    ok = a == OffloadChain::Admit::Ok;
  } else {
    ok = try_allocate();
    if (!ok && kv_.reload()) {
      plan();  // reloaded content may extend the cached prefix
      ok = n > 0 && try_allocate();
    }
  }
  if (!ok && batch_.empty() && reclaim_queued_kv(slot)) {
    plan();
    ok = n > 0 && try_allocate();
  }
  if (!ok) {
    if (batch_.empty() && kv_.used_blocks() == 0) {
      // Nothing else holds memory and it still does not fit: it never will.
      leave_queue(q);
      complete(q, /*capped=*/true, now);
      return true;
    }
    return false;
  }
  qs.entry.new_tokens = static_cast<int32_t>(n);
  qs.entry.cached_tokens = start;
  others_.push_back(qs.entry);
  budget -= n;
  join_batch(q, now);
  return true;
}

void Instance::leave_queue(const Request& q) {
  if (waiting_.front() == q.slot) {
    waiting_.pop_front();
  } else {
    waiting_.erase(q.slot, q.spec.arrival_us, q.spec.input_tokens, q.spec.id, queue_rank(q));
  }
  if (offload_) offload_->forget(q.spec.id);
}

// HEAD's step-boundary deferral: the queue is scanned in order; a request
// waiting for a secondary tier's read, or set aside now for one, is passed
// over and the next one tried; any other failure stops admissions.
void Instance::admit_waiting_deferring(SimTime now, Forming& f) {
  offload_->poll_deferred();
  queue_scratch_.clear();
  waiting_.for_each([&](uint32_t s) { queue_scratch_.push_back(s); });
  for (size_t pos = 0; static_cast<int64_t>(batch_.size()) < cfg_.max_running && pos < queue_scratch_.size() &&
                       f.budget > 0 && !f.preempted_any;
       ++pos) {
    const uint32_t slot = queue_scratch_[pos];
    Request& q = pool_[slot];
    if (offload_->waiting(q.spec.id)) continue;
    StepState& qs = queued_step(q);
    pool_.complete_content(q, cfg_.block_size);
    qs.kv.hashes = q.spec.block_hashes.data();
    qs.kv.num_hashes = static_cast<int64_t>(q.spec.block_hashes.size());
    deferred_now_ = false;
    if (!admit_prefill(slot, now, f.budget)) {
      if (deferred_now_) continue;
      break;
    }
  }
}

void Instance::mirror_to_offload(SimTime now, Forming& f) {
  // Stored blocks must be the members' as of this step: implicit members'
  // decode blocks are written back first (prompt blocks never lag).
  if (!cfg_.offload->prompt_only && !all_active_) {
    make_all_explicit(batch_.size(), now);
    f.valid = false;
  }
  for (const Member& mb : batch_) {
    const StepState& s = slab_[mb.slot].s;
    offload_->mirror(s.kv, s.entry.input_tokens);
  }
}

void Instance::join_batch(Request& q, SimTime now) {
  leave_queue(q);
  q.state = RequestState::Running;
  signals_.scheduled(q, now);
  if (lora_) lora_joined(q);
  active_.push_back(static_cast<uint32_t>(batch_.size()));
  batch_.push_back(Member{.slot = slab_add(q)});
  dues_.push_back(0);
  due_floor_ = 0;
}

// P/D: requests queued with their transferred KV hold blocks while they
// wait. When nothing runs and the queue's head does not fit, nothing else
// would ever free them: the others give theirs up and will compute their
// prompt here. False if none held any.
bool Instance::reclaim_queued_kv(uint32_t head) {
  std::vector<uint32_t> holders;
  waiting_.for_each([&](uint32_t s) {
    if (s != head && pool_[s].step().kv.count > 0) holders.push_back(s);
  });
  for (uint32_t s : holders) {
    Request& q = pool_[s];
    StepState& qs = q.step_mut();
    kv_.release(qs.kv, KVCache::Release::MayReturn);
    qs.set_progress(0, q.spec.input_tokens + qs.emitted);
  }
  return !holders.empty();
}

// spec engine §3.3: allocate n tokens for the member at batch_[pos],
// preempting from the tail of the batch until it fits or the request itself
// was preempted. Called when the tokens do not fit into the request's last
// block. Preemption needs every member's state: the first failure makes
// them all explicit.
bool Instance::reserve(size_t& pos, int64_t n, bool& preempted_any) {
  auto allocate = [&] {
    RequestBlocks& kv = slab_[batch_[pos].slot].s.kv;
    return kv_.allocate(kv, {}, n) || (kv_.reload() && kv_.allocate(kv, {}, n));
  };
  if (offload_) {  // a prompt chunk may continue in the CPU tier
    StepState& s = slab_[batch_[pos].slot].s;
    const int64_t full = std::min(s.entry.input_tokens / cfg_.block_size, s.kv.num_hashes);
    if (s.pi() < s.entry.input_tokens && offload_->extend_running(s.kv, full, s.pi(), n)) return true;
  }
  while (!allocate()) {
    if (offload_) offload_->allocation_failed();
    if (!all_active_) make_all_explicit(pos, kernel_.now());
    if (batch_.size() == 1) {
      // Alone on the instance and still out of memory: the sequence has
      // outgrown the whole KV cache. Stop it rather than loop forever.
      complete(pop_running(), /*capped=*/true, kernel_.now());
      return false;
    }
    preempted_any = true;
    const size_t victim = preemption_victim();
    preempt(take_running(victim));
    if (victim == pos) return false;
    if (victim < pos) --pos;
  }
  return true;
}

// spec head §7.3: fcfs takes the batch's last request; priority the least
// urgent SLO class, among those the latest arrival, among those the last.
size_t Instance::preemption_victim() const {
  size_t victim = batch_.size() - 1;
  if (!cfg_.priority_preemption) return victim;
  // The reference's vLLM priorities are the highest SLO priority minus the
  // class's (defaults: critical 0, standard and the default class 1, batch 5,
  // sheddable 6, background 7; higher is less urgent): the same order as the
  // negated SLO priority.
  auto rank = [&](const Request& q) { return queue_rank(q); };
  for (size_t k = victim; k-- > 0;) {
    const Request& a = *slab_[batch_[k].slot].req;
    const Request& v = *slab_[batch_[victim].slot].req;
    if (rank(a) > rank(v) || (rank(a) == rank(v) && a.spec.arrival_us > v.spec.arrival_us)) victim = k;
  }
  return victim;
}

Request& Instance::pop_running() { return take_running(batch_.size() - 1); }

// The member must be explicit.
Request& Instance::take_running(size_t pos) {
  const uint32_t slot = batch_[pos].slot;
  Request& q = *slab_[slot].req;
  q.step_mut() = slab_[slot].s;
  slab_free(slot);
  erase_member(pos);
  return q;
}

// Recompute preemption as vLLM does it: the victim loses its KV and goes back
// to the head of the queue; tokens already delivered stay delivered, and on
// re-admission it recomputes prompt + delivered tokens, then goes on.
void Instance::preempt(Request& v) {
  signals_.preempted(v, kernel_.now());
  StepState& s = v.step_mut();
  kv_.release(s.kv, KVCache::Release::MayReturn);
  v.state = RequestState::Queued;
  s.entry.new_tokens = 0;
  s.entry.cached_tokens = 0;
  if (cfg_.restart_preemption) {
    // HEAD's form: what it delivered is forgotten, and its first token,
    // inter-token latencies and output come again from the prompt.
    signals_.restarted(v);
    s.emitted = 0;
    s.run_begin = s.run_end = 0;
  }
  s.set_progress(0, v.spec.input_tokens + s.emitted);
  waiting_.push_front(v.slot, v.spec.arrival_us, v.spec.input_tokens, v.spec.id, queue_rank(v));
}

// The step's tokens, then completions in batch order (spec engine §3.5),
// member by member for the step's explicit members; implicit ones had their
// token counted. A completion only changes its own request, the KV cache
// and what its listeners keep, none of which a token emission reads, so each
// request can complete as soon as its tokens are out. Requests that stay
// leave with new_tokens and cached_tokens at 0, ready for the next batch
// formation.
void Instance::execute(SimTime now, int64_t dt) {
  const SimTime end = now + dt;
  last_step_end_ = end;
  const uint64_t step = step_index_ - 1;  // this step's index among the instance's steps
  // The positions members left from, in batch order (active_ holds
  // positions in batch order): the members between them move as blocks.
  gone_.clear();
  if (all_active_) {
    for (size_t i = 0; i < batch_.size(); ++i)
      if (!execute_member(i, end, step)) gone_.push_back(static_cast<uint32_t>(i));
  } else {
    for (const uint32_t i : active_)
      if (!execute_member(i, end, step)) gone_.push_back(i);
  }
  if (!gone_.empty()) compact_batch();
}

namespace {

// Moves data[from, end) down to data[out, ...) (out < from), in blocks of
// eight copied through a local buffer, which the compiler keeps in vector
// registers. (A long libc memmove runs as one `rep movsb`, which callgrind
// counts per byte: the benchmark's instruction counts would not show the
// work done.)
template <class T>
void move_down(T* data, size_t from, size_t end, size_t out) {
  constexpr size_t kBlock = 8;
  size_t i = from;
  for (; i + kBlock <= end; i += kBlock, out += kBlock) {
    T block[kBlock];
    std::memcpy(block, data + i, sizeof block);
    std::memcpy(data + out, block, sizeof block);
  }
  for (; i < end; ++i, ++out) data[out] = data[i];
}

}  // namespace

void Instance::compact_batch() {
  const size_t n = batch_.size();
  size_t out = gone_.front();
  for (size_t g = 0; g < gone_.size(); ++g) {
    const size_t from = gone_[g] + 1;
    const size_t end = g + 1 < gone_.size() ? gone_[g + 1] : n;
    move_down(batch_.data(), from, end, out);
    move_down(dues_.data(), from, end, out);
    out += end - from;
  }
  batch_.resize(out);
  dues_.resize(out);
}

void Instance::erase_member(size_t pos) {
  batch_.erase(batch_.begin() + static_cast<std::ptrdiff_t>(pos));
  dues_.erase(dues_.begin() + static_cast<std::ptrdiff_t>(pos));
}

bool Instance::execute_member(size_t pos, SimTime end, uint64_t step) {
  Member& mb = batch_[pos];
  Running& rr = slab_[mb.slot];
  StepState& r = rr.s;
  if (r.entry.new_tokens > 0) {  // else stalled this step
    const int64_t target = r.prefill_target();
    if (r.pi() < target) {
      const int64_t pi = r.pi() + r.entry.cached_tokens + r.entry.new_tokens;
      r.set_progress(pi, target);
      if (pi == target) emit_token(rr, end, step);
    } else {
      r.set_progress(r.pi() + 1, target);
      emit_token(rr, end, step);
    }
    r.entry.new_tokens = 0;
    r.entry.cached_tokens = 0;
  }
  const int64_t m = cfg_.max_model_len;
  const bool done = r.emitted >= std::max(r.output_tokens, 1) && r.pi() >= r.prefill_target();
  const bool capped = !done && m > 0 && r.pi() >= m - 1;
  if (done || capped) {
    Request& q = *rr.req;
    q.step_mut() = r;
    slab_free(mb.slot);
    mb.slot = kGone;
    complete(q, capped, end);
    return false;
  }
  anchor(pos, step_index_);
  return true;
}

// A token leaves the engine at the end of step s (the metrics add α_o). The
// common case, a token one step after the previous one, extends the current
// run and stays small; the rest is out of line.
inline void Instance::emit_token(Running& rr, SimTime end, uint64_t s) {
  StepState& r = rr.s;
  signals_.token(*rr.req, end);
  if (r.emitted > 0 && r.last_token_step + 1 == s && r.run_end == s && r.run_end > r.run_begin) {
    r.run_end = s + 1;  // the step's standard value, extending the current run
  } else {
    emit_token_slow(rr, end, s);
  }
  r.last_token_end = end;
  r.last_token_step = s;
  ++r.emitted;
}

void Instance::emit_token_slow(Running& rr, SimTime end, uint64_t s) {
  StepState& r = rr.s;
  Request& q = *rr.req;
  if (r.emitted == 0) {
    if (q.pd != PdStage::Prefill) signals_.first_token(q, end);
  } else if (r.last_token_step + 1 == s) {
    // One step after the previous token, starting a new run of standard values.
    if (r.run_end > r.run_begin) signals_.token_run(q, r.run_begin, r.run_end);
    r.run_begin = s;
    r.run_end = s + 1;
  } else {
    // After a stall or a preemption: the real gap since the previous token.
    signals_.token_gap(q, end - r.last_token_end);
  }
}

void Instance::complete(Request& r, bool capped, SimTime end) {
  lora_release(r);
  StepState& s = r.step_mut();
  if (r.pd == PdStage::Prefill && !capped) {
    // spec head §5.2 step 5: the prompt's KV leaves for the decode instance;
    // the cluster takes the request over at the end of the step.
    kv_.release(s.kv);
    s = StepState{};
    r.state = RequestState::Transfer;
    last_time_ = std::max(last_time_, std::min(end, cfg_.horizon));
    schedule(kernel_, end, EventKind::PdPrefilled, 0, (static_cast<uint64_t>(r.incarnation) << 32) | r.slot);
    return;
  }
  if (!capped && s.output_tokens > 0) {
    // The final token's KV (the reference allocates it before releasing).
    if (!kv_.allocate(s.kv, {}, 1)) {
      ++kv_allocation_failures_;
      if (offload_) offload_->allocation_failed();
    }
  }
  kv_.release(s.kv);
  r.state = RequestState::Completed;
  r.length_capped = capped;
  if (capped)
    spdlog::warn("instance_{}: request_{} force-completed at {} tokens (length cap)", index_,
                 r.spec.id, s.pi());
  last_time_ = std::max(last_time_, std::min(end, cfg_.horizon));
  if (s.run_end > s.run_begin) signals_.token_run(r, s.run_begin, s.run_end);
  signals_.completed(r, end);
  signals_.departed(r, end);
  pool_.release(r.slot);
}

void Instance::evict(std::vector<uint32_t>& out) {
  ++changes_;
  auto reset = [&](Request& q) {
    lora_release(q);
    release_queued(q);
    q.state = RequestState::Queued;
    out.push_back(q.slot);
  };
  make_all_explicit();
  while (!batch_.empty()) reset(take_running(0));
  while (!waiting_.empty()) {
    Request& q = pool_[waiting_.front()];
    waiting_.pop_front();
    if (offload_) offload_->forget(q.spec.id);
    reset(q);
  }
}

// Its KV freed, ready for another batch. A request that never ran holds
// none, but the release is made all the same: it moves the CPU tier on.
void Instance::release_queued(Request& q) {
  if (!q.has_step()) {
    RequestBlocks none;
    kv_.release(none);
    return;
  }
  StepState& s = q.step_mut();
  kv_.release(s.kv);
  s.entry.new_tokens = 0;
  s.entry.cached_tokens = 0;
}

void Instance::evict_waiting(std::vector<uint32_t>& out) {
  ++changes_;
  while (!waiting_.empty()) {
    Request& q = pool_[waiting_.front()];
    waiting_.pop_front();
    lora_release(q);
    if (offload_) offload_->forget(q.spec.id);
    release_queued(q);
    out.push_back(q.slot);
  }
}

void Instance::finalize() {
  run_lazy_through(kernel_.horizon());
  make_all_explicit();
  for (const Member& mb : batch_) slab_[mb.slot].req->step_mut() = slab_[mb.slot].s;
  signals_.instance_stopped(InstanceEnd{index_, std::min(last_time_, cfg_.horizon),
                                        offload_ ? offload_->hit_rate() : kv_.hit_rate(),
                                        offload_ ? offload_->thrashing_rate() : kv_.thrashing_rate(), kv_.used_blocks(),
                                        kv_allocation_failures_, member_steps_, member_updates_,
                                        lora_ ? &lora_->events() : nullptr});
}

void Instance::lora_start_load(SimTime now) {
  if (lora_->loading() || waiting_.empty()) return;
  const Request& head = pool_[waiting_.front()];
  if (!lora_gated(head)) return;
  const int64_t us = lora_->start_load(head.spec.adapter, now);
  if (us < 0) return;  // every slot pinned: a running request will free one
  schedule(kernel_, now + us, EventKind::AdapterLoad, index_);
}

void Instance::lora_joined(Request& q) {
  if (q.spec.adapter.empty()) return;
  lora_->touch(q.spec.adapter);
  if (!q.adapter_pinned) {
    lora_->pin(q.spec.adapter);
    q.adapter_pinned = true;
  }
}

// HEAD: base * (1 + k6/k7 * A) over the members scheduled this step (new
// tokens > 0), A their distinct adapters, the tier of their largest rank.
int64_t Instance::lora_step_time(int64_t dt) const {
  const LoraConfig& c = lora_->config();
  std::vector<Label>& seen = lora_seen_;
  seen.clear();
  int64_t max_rank = 0;
  for (const Member& mb : batch_) {
    const Running& rr = slab_[mb.slot];
    if (rr.s.entry.new_tokens <= 0) continue;
    const Label& id = rr.req->spec.adapter;
    if (id.empty() || std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
    const LoraAdapter* a = c.find(id);
    if (a == nullptr) continue;  // not declared: the base model's cost
    seen.push_back(id);
    max_rank = std::max(max_rank, a->rank);
  }
  const double factor = c.step_factor(static_cast<int64_t>(seen.size()), max_rank);
  if (!(factor > 1.0) || !std::isfinite(factor)) return dt;
  const double scaled = static_cast<double>(std::max<int64_t>(1, dt)) * factor;
  if (scaled >= 9.2e18) return INT64_MAX / 4;
  return std::max<int64_t>(1, static_cast<int64_t>(scaled));
}

std::string Instance::lora_preload(const Label& id, SimTime now) {
  if (lora_->resident(id)) return "resident";
  if (lora_->loading()) return "busy loading " + lora_->loading_id().str();
  const int64_t us = lora_->start_load(id, now);
  if (us < 0) return "every slot pinned";
  schedule(kernel_, now + us, EventKind::AdapterLoad, index_);
  return "loading";
}

std::string Instance::lora_unload(const Label& id) {
  if (!lora_->resident(id)) return lora_->loading_id() == id ? "still loading" : "not resident";
  return lora_->unload(id) ? "unloaded" : "pinned by running requests";
}

void Instance::on_adapter_load() {
  lora_->finish_load();
  if (!step_pending_ && !waiting_.empty()) {
    step_pending_ = true;
    schedule_step(kernel_, step_lane_, kernel_.now(), index_);
  }
}

}  // namespace blis
