// Adapters from scripts to the internal interfaces. Each object owns plain
// buffers that its script sees through bounds-checked views (lua_views.hpp)
// bound once at creation; a call copies its input into the buffers, sets the
// views' counts and makes exactly one lua_pcall, so no table or cdata is
// allocated per decision.
#include <blis/errors.hpp>

#include "lua/lua_host.hpp"
#include "lua/lua_views.hpp"
#include "plugin/time_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace blis::lua {
namespace {

// Room for this many instances up front; larger clusters grow the buffers
// (and rebind the globals) once, on the first decision that needs it.
constexpr int64_t kInitialInstances = 256;
constexpr int64_t kInitialBatch = 512;

// Copies one struct whose producer may be a different minor version: `size`
// is the producer's struct size (0 = unset, taken as ours). Missing tail
// fields read as zero.
template <class T>
void copy_sized(T& dst, const void* src, size_t size) {
  if (size == 0 || size >= sizeof(T)) {
    std::memcpy(&dst, src, sizeof(T));
  } else {
    std::memset(&dst, 0, sizeof(T));
    std::memcpy(&dst, src, size);
  }
}

template <class T>
void copy_strided(T* dst, const void* src, int64_t count, size_t stride) {
  if (count <= 0) return;
  if (stride == 0 || stride == sizeof(T)) {
    std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(T));
    return;
  }
  const auto* bytes = static_cast<const unsigned char*>(src);
  for (int64_t i = 0; i < count; ++i)
    copy_sized(dst[i], bytes + static_cast<size_t>(i) * stride, stride);
}

void copy_request(blis_request_view& dst, const blis_request_view* src) {
  if (src == nullptr) {
    dst = blis_request_view{};
  } else {
    copy_sized(dst, src, src->struct_size);
  }
  dst.struct_size = sizeof(blis_request_view);
}

// The host-owned mirror of a route input: `request`, `route`, `instances`
// and (for scorers) `scores` in the script's sandbox are views of it.
class RouteMirror {
 public:
  RouteMirror(ScriptInstance& script, bool with_scores) : with_scores_(with_scores) {
    route_.struct_size = sizeof(blis_route_input);
    route_.snapshot_size = sizeof(blis_instance_snapshot);
    route_.request = &request_;
    request_.struct_size = sizeof(blis_request_view);
    route_view_.data = reinterpret_cast<uintptr_t>(&route_);
    route_view_.request = reinterpret_cast<uintptr_t>(&request_view_);
    route_view_.instances = reinterpret_cast<uintptr_t>(&instances_view_);
    request_view_.set(&request_);
    grow(kInitialInstances);
    script.bind_pointer("request", &request_view_);
    script.bind_pointer("route", &route_view_);
    script.bind_pointer("instances", &instances_view_);
    if (with_scores_) script.bind_pointer("scores", &scores_view_);
  }
  RouteMirror(const RouteMirror&) = delete;
  RouteMirror& operator=(const RouteMirror&) = delete;

  void load(const blis_route_input& in) {
    int64_t n = std::clamp<int64_t>(in.count, 0, std::numeric_limits<int32_t>::max());
    if (n > static_cast<int64_t>(snapshots_.size()))
      grow(std::max<int64_t>(n, 2 * static_cast<int64_t>(snapshots_.size())));
    copy_strided(snapshots_.data(), in.instances, n, in.snapshot_size);
    copy_request(request_, in.request);
    route_.now_us = in.now_us;
    route_.count = n;
    request_view_.set(&request_);
    instances_view_.set(snapshots_.data(), n);
    scores_view_.set(scores_.data(), with_scores_ ? n : 0);
  }
  int64_t count() const { return route_.count; }
  double* scores() { return scores_.data(); }

 private:
  void grow(int64_t capacity) {
    snapshots_.assign(static_cast<size_t>(capacity), blis_instance_snapshot{});
    route_.instances = snapshots_.data();
    if (with_scores_) scores_.assign(static_cast<size_t>(capacity), 0.0);
  }

  bool with_scores_;
  blis_request_view request_{};
  blis_route_input route_{};
  std::vector<blis_instance_snapshot> snapshots_;
  std::vector<double> scores_;
  ArrayView instances_view_;
  ArrayView scores_view_;
  RequestView request_view_;
  RouteView route_view_;
};

class LuaRoutingScorer final : public RoutingScorer {
 public:
  LuaRoutingScorer(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text), mirror_(script_, true) {
    require_kind(script_, PluginKind::RoutingScorer);
    score_ = script_.function_ref("score");
    observe_ = script_.function_ref("observe");
    script_.run_init(config);
  }

  // The contract (docs/lua.md): score(n) sets scores[0 .. n-1] to numbers and
  // returns nothing or n. Anything else is reported, never obeyed.
  void score(const blis_route_input& input, double* scores) override {
    mirror_.load(input);
    const int64_t n = mirror_.count();
    double* out = mirror_.scores();
    // Slots the script forgets to set stay NaN (the views refuse any index
    // outside 0 .. n-1).
    std::fill_n(out, n, std::numeric_limits<double>::quiet_NaN());
    lua_State* L = script_.state();
    const int base = script_.begin_call(score_);
    lua_pushnumber(L, static_cast<double>(n));
    script_.end_call(base, 1, 1);
    const int type = lua_type(L, base + 2);
    const double returned = lua_tonumber(L, base + 2);
    lua_settop(L, base);
    if (type != LUA_TNIL && (type != LUA_TNUMBER || returned != static_cast<double>(n)))
      throw ScriptError(fmt::format("{}: score({}) returned {}; it must return nothing or the "
                                    "number of scores it wrote, {}",
                                    script_.path(), n,
                                    type == LUA_TNUMBER ? fmt::format("{}", returned)
                                                        : std::string("a ") + lua_typename(L, type),
                                    n), 2);
    for (int64_t k = 0; k < n; ++k) {
      if (std::isnan(out[k]))
        throw ScriptError(
            fmt::format("{}: score returned NaN for instance {} (score(n) must set every "
                        "scores[i], i = 0..n-1, to a number)",
                        script_.path(), k), 2);
    }
    std::copy_n(out, n, scores);
  }

  bool observes() const override { return observe_ != LUA_NOREF; }

  void observe(const blis_route_input& input, int64_t chosen) override {
    if (observe_ == LUA_NOREF) return;
    mirror_.load(input);
    lua_State* L = script_.state();
    int base = script_.begin_call(observe_);
    lua_pushnumber(L, static_cast<double>(chosen));
    script_.end_call(base, 1, 0);
  }

 private:
  ScriptInstance script_;
  RouteMirror mirror_;
  int score_ = LUA_NOREF;
  int observe_ = LUA_NOREF;
};

class LuaAdmissionPolicy final : public AdmissionPolicy {
 public:
  LuaAdmissionPolicy(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text), mirror_(script_, false) {
    require_kind(script_, PluginKind::AdmissionPolicy);
    admit_ = script_.function_ref("admit");
    script_.run_init(config);
  }

  bool admit(const blis_route_input& input, std::string& reason) override {
    mirror_.load(input);
    lua_State* L = script_.state();
    int base = script_.begin_call(admit_);
    script_.end_call(base, 0, 2);
    int verdict = lua_type(L, base + 2);
    int why = lua_type(L, base + 3);
    if (verdict != LUA_TBOOLEAN || (why != LUA_TSTRING && why != LUA_TNIL)) {
      std::string got = fmt::format("{}, {}", lua_typename(L, verdict), lua_typename(L, why));
      lua_settop(L, base);
      throw ScriptError(fmt::format("{}: admit must return a boolean and optionally a reason "
                                    "string, got ({}) for request_{}",
                                    script_.path(), got, input.request ? input.request->id : 0), 2);
    }
    bool admitted = lua_toboolean(L, base + 2) != 0;
    if (why == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, base + 3, &len);
      reason.assign(s, len);
    }
    lua_settop(L, base);
    return admitted;
  }

 private:
  ScriptInstance script_;
  RouteMirror mirror_;
  int admit_ = LUA_NOREF;
};

class LuaLatencyModel final : public LatencyModel {
 public:
  LuaLatencyModel(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text) {
    require_kind(script_, PluginKind::LatencyModel);
    step_time_ = script_.function_ref("step_time");
    queueing_time_ = script_.function_ref("queueing_time");
    output_token_time_ = script_.function_ref("output_token_time");
    post_decode_overhead_ = script_.function_ref("post_decode_overhead");
    batch_.struct_size = sizeof(blis_step_batch);
    batch_.entry_size = sizeof(blis_batch_entry);
    request_.struct_size = sizeof(blis_request_view);
    batch_view_.data = reinterpret_cast<uintptr_t>(&batch_);
    batch_view_.entries = reinterpret_cast<uintptr_t>(&entries_view_);
    request_view_.set(&request_);
    grow(kInitialBatch);
    script_.bind_pointer("batch", &batch_view_);
    script_.bind_pointer("entries", &entries_view_);
    script_.bind_pointer("request", &request_view_);
    script_.run_init(config);
  }

  int64_t step_time(const blis_step_batch& batch) override {
    int64_t n = std::clamp<int64_t>(batch.count, 0, std::numeric_limits<int32_t>::max());
    if (n > static_cast<int64_t>(entries_.size()))
      grow(std::max<int64_t>(n, 2 * static_cast<int64_t>(entries_.size())));
    copy_strided(entries_.data(), batch.entries, n, batch.entry_size);
    batch_.now_us = batch.now_us;
    batch_.count = n;
    entries_view_.set(entries_.data(), n);
    lua_State* L = script_.state();
    int base = script_.begin_call(step_time_);
    lua_pushnumber(L, static_cast<double>(n));
    script_.end_call(base, 1, 1);
    return returned_time(base, "step_time", [&] {
      return fmt::format(" for a batch of {} requests at t={} µs", n, batch.now_us);
    });
  }

  int64_t queueing_time(const blis_request_view& request) override {
    if (queueing_time_ == LUA_NOREF) return 0;
    copy_request(request_, &request);
    request_view_.set(&request_);
    int base = script_.begin_call(queueing_time_);
    script_.end_call(base, 0, 1);
    return returned_time(base, "queueing_time", [&] { return fmt::format(" for request_{}", request.id); });
  }

  int64_t output_token_time() override { return optional_time(output_token_time_, "output_token_time"); }
  int64_t post_decode_overhead() override {
    return optional_time(post_decode_overhead_, "post_decode_overhead");
  }

 private:
  void grow(int64_t capacity) {
    entries_.assign(static_cast<size_t>(capacity), blis_batch_entry{});
    batch_.entries = entries_.data();
    entries_view_.set(entries_.data(), 0);
  }

  int64_t optional_time(int fn, const char* what) {
    if (fn == LUA_NOREF) return 0;
    int base = script_.begin_call(fn);
    script_.end_call(base, 0, 1);
    return returned_time(base, what, [] { return std::string(); });
  }

  // Reads the one result at base+2, resets the stack, validates (the check
  // shared with library plugins, plugin/time_check.hpp), truncates.
  template <class Context>
  int64_t returned_time(int base, const char* what, Context&& context) {
    lua_State* L = script_.state();
    int type = lua_type(L, base + 2);
    double v = lua_tonumber(L, base + 2);
    lua_settop(L, base);
    if (type != LUA_TNUMBER)
      throw ScriptError(fmt::format("{}: {} must return a number of microseconds, got {}{}",
                                    script_.path(), what, lua_typename(L, type), context()), 2);
    return checked_time(v, context, [&](const std::string& text) {
      throw ScriptError(fmt::format("{}: {} {}", script_.path(), what, text), 2);
    });
  }

  ScriptInstance script_;
  blis_step_batch batch_{};
  blis_request_view request_{};
  std::vector<blis_batch_entry> entries_;
  ArrayView entries_view_;
  BatchView batch_view_;
  RequestView request_view_;
  int step_time_ = LUA_NOREF;
  int queueing_time_ = LUA_NOREF;
  int output_token_time_ = LUA_NOREF;
  int post_decode_overhead_ = LUA_NOREF;
};

// An autoscaler script: decide(n, pending_supply) over `variants[0 .. n-1]`
// returns the pool and the delta (nothing, or delta 0, for no change).
class LuaAutoscaler final : public Autoscaler {
 public:
  LuaAutoscaler(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text) {
    require_kind(script_, PluginKind::Autoscaler);
    decide_ = script_.function_ref("decide");
    variants_.resize(16);
    view_.set(variants_.data(), 0);
    script_.bind_pointer("variants", &view_);
    script_.run_init(config);
  }

  blis_scaling_decision decide(const blis_scaling_input& in) override {
    const int64_t n = std::clamp<int64_t>(in.count, 0, 100000);
    if (n > static_cast<int64_t>(variants_.size())) {
      variants_.resize(static_cast<size_t>(n));
    }
    copy_strided(variants_.data(), in.variants, n, in.variant_size);
    view_.set(variants_.data(), n);
    lua_State* L = script_.state();
    const int base = script_.begin_call(decide_);
    lua_pushnumber(L, static_cast<double>(n));
    lua_pushnumber(L, in.pending_supply);
    script_.end_call(base, 2, 2);
    const int tp = lua_type(L, base + 2), td = lua_type(L, base + 3);
    blis_scaling_decision out{-1, 0};
    if (tp == LUA_TNIL && td == LUA_TNIL) {
      lua_settop(L, base);
      return out;
    }
    const double pool = lua_tonumber(L, base + 2), delta = lua_tonumber(L, base + 3);
    lua_settop(L, base);
    if (tp != LUA_TNUMBER || td != LUA_TNUMBER || pool != std::floor(pool) || delta != std::floor(delta) ||
        std::abs(delta) > 100000 || std::abs(pool) > 100000)
      throw ScriptError(fmt::format("{}: decide({}) must return nothing, or a pool index and a whole number "
                                    "of instances to add (> 0) or remove (< 0), got ({}, {})",
                                    script_.path(), n, lua_typename(L, tp), lua_typename(L, td)), 2);
    out.pool = static_cast<int32_t>(pool);
    out.delta = static_cast<int32_t>(delta);
    return out;
  }

 private:
  ScriptInstance script_;
  std::vector<blis_scaling_variant> variants_;
  ArrayView view_;
  int decide_ = LUA_NOREF;
};

// A saturation detector script: saturation(n) over `instances[0 .. n-1]`
// returns a finite number >= 0 (`request` is empty: no request is asked about).
class LuaSaturationDetector final : public SaturationDetector {
 public:
  LuaSaturationDetector(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text), mirror_(script_, false) {
    require_kind(script_, PluginKind::SaturationDetector);
    saturation_ = script_.function_ref("saturation");
    script_.run_init(config);
  }

  double saturation(const blis_route_input& input) override {
    mirror_.load(input);
    const int64_t n = mirror_.count();
    lua_State* L = script_.state();
    const int base = script_.begin_call(saturation_);
    lua_pushnumber(L, static_cast<double>(n));
    script_.end_call(base, 1, 1);
    const int type = lua_type(L, base + 2);
    const double v = lua_tonumber(L, base + 2);
    lua_settop(L, base);
    if (type != LUA_TNUMBER || !std::isfinite(v) || v < 0)
      throw ScriptError(fmt::format("{}: saturation({}) must return a finite number >= 0, got {} at t={} µs",
                                    script_.path(), n,
                                    type == LUA_TNUMBER ? fmt::format("{}", v) : std::string("a ") + lua_typename(L, type),
                                    input.now_us), 2);
    return v;
  }

 private:
  ScriptInstance script_;
  RouteMirror mirror_;
  int saturation_ = LUA_NOREF;
};

// A dispatch order script: order_key(priority, slo_target_us) returns the
// key of the request entering the gateway queue (`request`, `route.now_us`;
// slo_target_us its own TTFT target, 0 when it has none); the global `scope`
// is "band" (the default) or "across-bands".
class LuaDispatchOrder final : public DispatchOrder {
 public:
  LuaDispatchOrder(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text), mirror_(script_, false) {
    require_kind(script_, PluginKind::DispatchOrder);
    key_ = script_.function_ref("order_key");
    const std::string scope = script_.string_global("scope").value_or("band");
    if (scope != "band" && scope != "across-bands")
      throw ScriptError(fmt::format("{}: scope must be \"band\" or \"across-bands\", got \"{}\"", script_.path(),
                                    scope), 2);
    across_ = scope == "across-bands";
    script_.run_init(config);
  }

  bool across_bands() const override { return across_; }

  double key(const blis_dispatch_input& in) override {
    mirror_.load(blis_route_input{sizeof(blis_route_input), sizeof(blis_instance_snapshot), in.now_us, in.request,
                                  nullptr, 0});
    lua_State* L = script_.state();
    const int base = script_.begin_call(key_);
    lua_pushnumber(L, static_cast<double>(in.priority));
    const bool has_target = in.struct_size > offsetof(blis_dispatch_input, slo_target_us);
    lua_pushnumber(L, has_target ? static_cast<double>(in.slo_target_us) : 0.0);
    script_.end_call(base, 2, 1);
    const int type = lua_type(L, base + 2);
    const double v = lua_tonumber(L, base + 2);
    lua_settop(L, base);
    if (type != LUA_TNUMBER || std::isnan(v))
      throw ScriptError(fmt::format("{}: order_key({}) must return a number (not NaN), got {} for request_{}",
                                    script_.path(), in.priority,
                                    type == LUA_TNUMBER ? std::string("NaN") : std::string("a ") + lua_typename(L, type),
                                    in.request != nullptr ? in.request->id : 0), 2);
    return v;
  }

 private:
  ScriptInstance script_;
  RouteMirror mirror_;
  int key_ = LUA_NOREF;
  bool across_ = false;
};

// An encode decider script: encode_request(image, audio, video, encoders,
// encoded) over `request` (block_hashes empty) and `route.now_us` returns
// true to send the request through the encode pool, false not to.
class LuaEncodeDecider final : public EncodeDecider {
 public:
  LuaEncodeDecider(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text), mirror_(script_, false) {
    require_kind(script_, PluginKind::EncodeDecider);
    decide_ = script_.function_ref("encode_request");
    script_.run_init(config);
  }

  bool encode(const blis_encode_input& in) override {
    mirror_.load(blis_route_input{sizeof(blis_route_input), sizeof(blis_instance_snapshot), in.now_us, in.request,
                                  nullptr, 0});
    lua_State* L = script_.state();
    const int base = script_.begin_call(decide_);
    for (const int64_t v : {in.image_tokens, in.audio_tokens, in.video_tokens, in.encode_instances, in.encoded})
      lua_pushnumber(L, static_cast<double>(v));
    script_.end_call(base, 5, 1);
    const int type = lua_type(L, base + 2);
    const bool yes = lua_toboolean(L, base + 2) != 0;
    lua_settop(L, base);
    if (type != LUA_TBOOLEAN)
      throw ScriptError(fmt::format("{}: encode_request must return true or false, got a {} for request_{}",
                                    script_.path(), lua_typename(L, type),
                                    in.request != nullptr ? in.request->id : 0), 2);
    return yes;
  }

 private:
  ScriptInstance script_;
  RouteMirror mirror_;
  int decide_ = LUA_NOREF;
};

void set_number(lua_State* L, const char* field, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, field);
}

// Sets the request's fields on the table at the top of the stack.
void set_request_fields(lua_State* L, const blis_request_view* view) {
  blis_request_view r{};
  copy_request(r, view);
  set_number(L, "id", static_cast<double>(r.id));
  set_number(L, "arrival_us", static_cast<double>(r.arrival_time_us));
  set_number(L, "input_tokens", static_cast<double>(r.input_tokens));
  set_number(L, "max_output_tokens", static_cast<double>(r.max_output_tokens));
  set_number(L, "slo_class", static_cast<double>(r.slo_class));
}

// The table at index `index` of the table at the top of the stack, made when
// missing (a table the adapter keeps and refills), pushed.
void reuse_entry(lua_State* L, int index) {
  lua_rawgeti(L, -1, index);
  if (lua_type(L, -1) == LUA_TTABLE) return;
  lua_pop(L, 1);
  lua_createtable(L, 0, 10);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, index);
}

// Clears entries from + 1 .. to of the table at the top of the stack.
void clear_tail(lua_State* L, int64_t from, int64_t to) {
  for (int64_t i = from; i < to; ++i) {
    lua_pushnil(L);
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

// A fairness policy script: pick_flow(flows, priority, now_us) returns the
// index (1 .. #flows) of the band's tenant flow that sends next. `flows` is
// a plain array of tables {tenant, queued, head_seq, last, head = {id,
// arrival_us, input_tokens, max_output_tokens, slo_class}},
// tables the adapter keeps and refills (none is allocated per decision once
// the largest band was seen).
class LuaFairnessPolicy final : public FairnessPolicy {
 public:
  LuaFairnessPolicy(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text) {
    require_kind(script_, PluginKind::FairnessPolicy);
    pick_ = script_.function_ref("pick_flow");
    lua_State* L = script_.state();
    lua_newtable(L);
    flows_ = luaL_ref(L, LUA_REGISTRYINDEX);
    script_.run_init(config);
  }
  ~LuaFairnessPolicy() override { luaL_unref(script_.state(), LUA_REGISTRYINDEX, flows_); }
  LuaFairnessPolicy(const LuaFairnessPolicy&) = delete;
  LuaFairnessPolicy& operator=(const LuaFairnessPolicy&) = delete;

  size_t pick(const blis_fairness_input& in) override {
    lua_State* L = script_.state();
    const int base = script_.begin_call(pick_);
    load(L, in);
    lua_pushnumber(L, static_cast<double>(in.priority));
    lua_pushnumber(L, static_cast<double>(in.now_us));
    script_.end_call(base, 3, 1);
    const int type = lua_type(L, base + 2);
    const double v = lua_tonumber(L, base + 2);
    lua_settop(L, base);
    if (type != LUA_TNUMBER || !(v >= 1 && v <= static_cast<double>(in.count)) || v != std::floor(v))
      throw ScriptError(
          fmt::format("{}: pick_flow(flows, {}, {}) must return a flow index in 1 .. {}, got {}",
                      script_.path(), in.priority, in.now_us, in.count,
                      type == LUA_TNUMBER ? fmt::format("{}", v) : std::string("a ") + lua_typename(L, type)),
          2);
    return static_cast<size_t>(v) - 1;
  }

 private:
  // Pushes the `flows` table, refilled from `in`.
  void load(lua_State* L, const blis_fairness_input& in) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, flows_);
    const auto n = static_cast<int64_t>(in.count);
    const auto* bytes = static_cast<const unsigned char*>(static_cast<const void*>(in.flows));
    for (int64_t i = 0; i < n; ++i) {
      blis_fairness_flow f{};
      copy_sized(f, bytes + static_cast<size_t>(i) * in.flow_size, in.flow_size);
      load_flow(L, static_cast<int>(i + 1), f, i == in.last);
    }
    clear_tail(L, n, shown_);  // the rest of the previous band
    shown_ = n;
  }

  static void load_flow(lua_State* L, int index, const blis_fairness_flow& f, bool last) {
    reuse_entry(L, index);
    lua_getfield(L, -1, "head");
    if (lua_type(L, -1) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_createtable(L, 0, 6);
      lua_pushvalue(L, -1);
      lua_setfield(L, -3, "head");
    }
    set_request_fields(L, f.head);
    lua_pop(L, 1);
    lua_pushstring(L, f.tenant != nullptr ? f.tenant : "");
    lua_setfield(L, -2, "tenant");
    set_number(L, "queued", static_cast<double>(f.queued));
    set_number(L, "head_seq", static_cast<double>(f.head_seq));
    lua_pushboolean(L, last ? 1 : 0);
    lua_setfield(L, -2, "last");
    lua_pop(L, 1);
  }

  ScriptInstance script_;
  int pick_ = LUA_NOREF;
  int flows_ = LUA_NOREF;
  int64_t shown_ = 0;
};

// A shedding policy script: shed_victim(queued, arriving, now_us) returns
// the index (1 .. #queued) of the queued request shed for the arriving one,
// or nothing (nil or 0): none, the arriving one is rejected. Each request is
// a table {priority, seq, tenant, id, arrival_us, input_tokens,
// max_output_tokens, slo_class}; the adapter keeps and refills them.
class LuaSheddingPolicy final : public SheddingPolicy {
 public:
  LuaSheddingPolicy(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text) {
    require_kind(script_, PluginKind::SheddingPolicy);
    victim_ = script_.function_ref("shed_victim");
    lua_State* L = script_.state();
    lua_newtable(L);
    queued_ = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    arriving_ = luaL_ref(L, LUA_REGISTRYINDEX);
    script_.run_init(config);
  }
  ~LuaSheddingPolicy() override {
    luaL_unref(script_.state(), LUA_REGISTRYINDEX, queued_);
    luaL_unref(script_.state(), LUA_REGISTRYINDEX, arriving_);
  }
  LuaSheddingPolicy(const LuaSheddingPolicy&) = delete;
  LuaSheddingPolicy& operator=(const LuaSheddingPolicy&) = delete;

  int64_t victim(const blis_shedding_input& in) override {
    lua_State* L = script_.state();
    const int base = script_.begin_call(victim_);
    load_queued(L, in);
    lua_rawgeti(L, LUA_REGISTRYINDEX, arriving_);
    const char* tenant =
        in.request != nullptr && in.request->tenant_id != nullptr && in.request->tenant_id[0] != 0
            ? in.request->tenant_id
            : "default";
    set_candidate(L, blis_shedding_candidate{in.priority, 0, in.seq, tenant, in.request});
    lua_pushnumber(L, static_cast<double>(in.now_us));
    script_.end_call(base, 3, 1);
    const int type = lua_type(L, base + 2);
    const double v = lua_tonumber(L, base + 2);
    lua_settop(L, base);
    if (type == LUA_TNIL || (type == LUA_TNUMBER && v == 0)) return -1;
    if (type != LUA_TNUMBER || !(v >= 1 && v <= static_cast<double>(in.count)) || v != std::floor(v))
      throw ScriptError(
          fmt::format("{}: shed_victim(queued, arriving, {}) must return an index in 1 .. {} or "
                      "nothing, got {}",
                      script_.path(), in.now_us, in.count,
                      type == LUA_TNUMBER ? fmt::format("{}", v) : std::string("a ") + lua_typename(L, type)),
          2);
    return static_cast<int64_t>(v) - 1;
  }

 private:
  static void set_candidate(lua_State* L, const blis_shedding_candidate& c) {
    set_number(L, "priority", static_cast<double>(c.priority));
    set_number(L, "seq", static_cast<double>(c.seq));
    lua_pushstring(L, c.tenant != nullptr ? c.tenant : "");
    lua_setfield(L, -2, "tenant");
    set_request_fields(L, c.request);
  }

  // Pushes the `queued` table, refilled from `in`.
  void load_queued(lua_State* L, const blis_shedding_input& in) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, queued_);
    const auto n = static_cast<int64_t>(in.count);
    const auto* bytes = static_cast<const unsigned char*>(static_cast<const void*>(in.queued));
    for (int64_t i = 0; i < n; ++i) {
      blis_shedding_candidate c{};
      copy_sized(c, bytes + static_cast<size_t>(i) * in.candidate_size, in.candidate_size);
      reuse_entry(L, static_cast<int>(i + 1));
      set_candidate(L, c);
      lua_pop(L, 1);
    }
    clear_tail(L, n, shown_);
    shown_ = n;
  }

  ScriptInstance script_;
  int victim_ = LUA_NOREF;
  int queued_ = LUA_NOREF;
  int arriving_ = LUA_NOREF;
  int64_t shown_ = 0;
};

// An adapter eviction script: evict_adapter(loading, candidates, now_us,
// instance) returns the position (1 .. #candidates) of the resident adapter
// evicted for `loading`; `candidates` lists the adapter ids no running
// request uses, least recently used first (a new table per call: the call
// comes once per cold load that finds the slots full).
class LuaAdapterEviction final : public AdapterEviction {
 public:
  LuaAdapterEviction(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text) {
    require_kind(script_, PluginKind::AdapterEviction);
    choose_ = script_.function_ref("evict_adapter");
    script_.run_init(config);
  }

  size_t choose(const blis_adapter_eviction_input& in) override {
    lua_State* L = script_.state();
    const int base = script_.begin_call(choose_);
    lua_pushstring(L, in.loading != nullptr ? in.loading : "");
    lua_createtable(L, static_cast<int>(in.count), 0);
    for (uint64_t i = 0; i < in.count; ++i) {
      lua_pushstring(L, in.candidates[i] != nullptr ? in.candidates[i] : "");
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    lua_pushnumber(L, static_cast<double>(in.now_us));
    lua_pushnumber(L, static_cast<double>(in.instance));
    script_.end_call(base, 4, 1);
    const int type = lua_type(L, base + 2);
    const double v = lua_tonumber(L, base + 2);
    lua_settop(L, base);
    if (type != LUA_TNUMBER || !(v >= 1 && v <= static_cast<double>(in.count)) || v != std::floor(v))
      throw ScriptError(fmt::format("{}: evict_adapter(\"{}\", candidates, {}, {}) must return a position in 1 .. {}, "
                                    "got {}",
                                    script_.path(), in.loading != nullptr ? in.loading : "", in.now_us, in.instance,
                                    in.count,
                                    type == LUA_TNUMBER ? fmt::format("{}", v) : std::string("a ") + lua_typename(L, type)),
                        2);
    return static_cast<size_t>(v) - 1;
  }

 private:
  ScriptInstance script_;
  int choose_ = LUA_NOREF;
};

// An offload eviction script: evict_block(candidates, now_us, used,
// capacity) returns the position (1 .. #candidates) of the CPU block
// evicted; `candidates` are tables {hash, secondary} (its content hash as a
// number, the first secondary tier holding a copy, 1-based, or 0: none),
// least recently used first, kept and refilled by the adapter.
class LuaOffloadEviction final : public OffloadEviction {
 public:
  LuaOffloadEviction(LuaVm& vm, const ScriptSource& source, const ConfigTable& config)
      : script_(vm, source.path, source.name, source.text) {
    require_kind(script_, PluginKind::OffloadEviction);
    choose_ = script_.function_ref("evict_block");
    lua_State* L = script_.state();
    lua_newtable(L);
    blocks_ = luaL_ref(L, LUA_REGISTRYINDEX);
    script_.run_init(config);
  }
  ~LuaOffloadEviction() override { luaL_unref(script_.state(), LUA_REGISTRYINDEX, blocks_); }
  LuaOffloadEviction(const LuaOffloadEviction&) = delete;
  LuaOffloadEviction& operator=(const LuaOffloadEviction&) = delete;

  size_t choose(const blis_offload_eviction_input& in) override {
    lua_State* L = script_.state();
    const int base = script_.begin_call(choose_);
    load(L, in);
    lua_pushnumber(L, static_cast<double>(in.now_us));
    lua_pushnumber(L, static_cast<double>(in.used_blocks));
    lua_pushnumber(L, static_cast<double>(in.capacity_blocks));
    script_.end_call(base, 4, 1);
    const int type = lua_type(L, base + 2);
    const double v = lua_tonumber(L, base + 2);
    lua_settop(L, base);
    if (type != LUA_TNUMBER || !(v >= 1 && v <= static_cast<double>(in.count)) || v != std::floor(v))
      throw ScriptError(fmt::format("{}: evict_block(candidates, {}, {}, {}) must return a position in 1 .. {}, got {}",
                                    script_.path(), in.now_us, in.used_blocks, in.capacity_blocks, in.count,
                                    type == LUA_TNUMBER ? fmt::format("{}", v) : std::string("a ") + lua_typename(L, type)),
                        2);
    return static_cast<size_t>(v) - 1;
  }

 private:
  // Pushes the `candidates` table, refilled from `in`.
  void load(lua_State* L, const blis_offload_eviction_input& in) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, blocks_);
    const auto n = static_cast<int64_t>(in.count);
    const auto* bytes = static_cast<const unsigned char*>(static_cast<const void*>(in.candidates));
    for (int64_t i = 0; i < n; ++i) {
      blis_offload_block b{};
      copy_sized(b, bytes + static_cast<size_t>(i) * in.candidate_size, in.candidate_size);
      reuse_entry(L, static_cast<int>(i + 1));
      set_number(L, "hash", static_cast<double>(b.hash));
      set_number(L, "secondary", static_cast<double>(b.secondary + 1));
      lua_pop(L, 1);
    }
    clear_tail(L, n, shown_);
    shown_ = n;
  }

  ScriptInstance script_;
  int choose_ = LUA_NOREF;
  int blocks_ = LUA_NOREF;
  int64_t shown_ = 0;
};

}  // namespace

std::unique_ptr<OffloadEviction> make_offload_eviction_from_source(LuaVm& vm, const ScriptSource& source,
                                                                   const ConfigTable& config) {
  return std::make_unique<LuaOffloadEviction>(vm, source, config);
}

std::unique_ptr<AdapterEviction> make_adapter_eviction_from_source(LuaVm& vm, const ScriptSource& source,
                                                                   const ConfigTable& config) {
  return std::make_unique<LuaAdapterEviction>(vm, source, config);
}

std::unique_ptr<EncodeDecider> make_encode_from_source(LuaVm& vm, const ScriptSource& source,
                                                      const ConfigTable& config) {
  return std::make_unique<LuaEncodeDecider>(vm, source, config);
}

std::unique_ptr<SheddingPolicy> make_shedding_from_source(LuaVm& vm, const ScriptSource& source,
                                                          const ConfigTable& config) {
  return std::make_unique<LuaSheddingPolicy>(vm, source, config);
}

std::unique_ptr<FairnessPolicy> make_fairness_from_source(LuaVm& vm, const ScriptSource& source,
                                                          const ConfigTable& config) {
  return std::make_unique<LuaFairnessPolicy>(vm, source, config);
}

std::unique_ptr<DispatchOrder> make_dispatch_from_source(LuaVm& vm, const ScriptSource& source,
                                                        const ConfigTable& config) {
  return std::make_unique<LuaDispatchOrder>(vm, source, config);
}

std::unique_ptr<SaturationDetector> make_saturation_from_source(LuaVm& vm, const ScriptSource& source,
                                                                const ConfigTable& config) {
  return std::make_unique<LuaSaturationDetector>(vm, source, config);
}

std::unique_ptr<Autoscaler> make_autoscaler_from_source(LuaVm& vm, const ScriptSource& source,
                                                        const ConfigTable& config) {
  return std::make_unique<LuaAutoscaler>(vm, source, config);
}

std::unique_ptr<RoutingScorer> make_scorer_from_source(LuaVm& vm, const ScriptSource& source,
                                                       const ConfigTable& config) {
  return std::make_unique<LuaRoutingScorer>(vm, source, config);
}

std::unique_ptr<AdmissionPolicy> make_admission_from_source(LuaVm& vm, const ScriptSource& source,
                                                            const ConfigTable& config) {
  return std::make_unique<LuaAdmissionPolicy>(vm, source, config);
}

std::unique_ptr<LatencyModel> make_latency_from_source(LuaVm& vm, const ScriptSource& source,
                                                       const ConfigTable& config) {
  return std::make_unique<LuaLatencyModel>(vm, source, config);
}

}  // namespace blis::lua
