// Scenario events as code (docs/scenarios.md "Events from Lua code"): a Lua
// scenario's at(t, fn) and every(interval, fn) register callbacks that the
// cluster runs as kernel Scenario events, in virtual time. Inside a callback
// the script reads a snapshot of the cluster and acts through the event
// language (blis.fail{...}, blis.event("action=...")), whose checks it meets
// like any data event.
//
// The same globals exist when the scenario is read for its settings
// (LuaScenario): there they only record that the script has code, and the
// blis.* actions refuse to run outside a callback.
#include <blis/errors.hpp>
#include <blis/lua.hpp>
#include <blis/scenario_events.hpp>
#include <blis/settings.hpp>

#include "config/scenario_common.hpp"
#include "lua/lua_host.hpp"
#include "lua/lua_scenario_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>

namespace blis::lua {
namespace {

constexpr const char* kActions[] = {"fail", "drain",  "restore",  "slow",    "rate", "weight", "routing",
                                    "add",  "remove", "workload", "adapter", "tier", "gateway"};

// Runs `f` (which returns its number of results); a C++ exception becomes a
// Lua error carrying its message. `f` holds only trivially destructible
// captures, and every C++ object it made is gone when lua_error unwinds.
template <typename F>
int guarded(lua_State* L, F&& f) {
  bool failed = false;
  int n = 0;
  try {
    n = f();
  } catch (const std::exception& e) {
    lua_pushstring(L, e.what());  // +1: the message
    failed = true;
  }
  if (failed) return lua_error(L);
  return n;
}

ScenarioApi* api_of(lua_State* L) { return static_cast<ScenarioApi*>(lua_touserdata(L, lua_upvalueindex(1))); }

// "path:line" of the calling script function.
std::string caller(lua_State* L) {
  luaL_where(L, 1);  // +1: "path:line: "
  std::string w = lua_tostring(L, -1);
  lua_pop(L, 1);  // -1
  while (!w.empty() && (w.back() == ' ' || w.back() == ':')) w.pop_back();
  return w;
}

// A time argument: seconds (a number) or a duration text ("90s", "1500ms").
SimTime time_arg(lua_State* L, int idx, const char* fn) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    const double s = lua_tonumber(L, idx);
    if (!std::isfinite(s) || s < 0 || s > 9.2e12)
      throw ScriptError(fmt::format("{}: {}: the time must be a number of seconds >= 0, not {}", caller(L), fn,
                                    scenario::number_text(s)));
    return static_cast<SimTime>(std::llround(s * 1e6));
  }
  if (lua_type(L, idx) == LUA_TSTRING) {
    const std::string text = lua_text(L, idx);
    if (auto us = duration_text_us(text); us && *us >= 0) return *us;
    std::string shown;
    for (char ch : text) shown += ch == '\0' ? std::string("\\0") : std::string(1, ch);
    throw ScriptError(fmt::format("{}: {}: '{}' is not a duration (90s, 1500ms, 2m, 1h)", caller(L), fn, shown));
  }
  throw ScriptError(fmt::format("{}: {}: the time must be seconds or a duration text, not a {}", caller(L), fn,
                                luaL_typename(L, idx)));
}

// The text of an action table: blis.fail{instance = 1} -> "action=fail instance=1".
std::string action_text(lua_State* L, const std::string& action) {
  std::vector<std::pair<std::string, std::string>> fields{{"action", action}};
  if (lua_isnoneornil(L, 1)) return scenario::record_text(std::move(fields));
  if (lua_type(L, 1) != LUA_TTABLE)
    throw ScriptError(fmt::format("{}: blis.{} takes a table of the event's keys, e.g. blis.{}{{instance = 1}}",
                                  caller(L), action, action));
  lua_pushnil(L);  // +1: the first key
  while (lua_next(L, 1) != 0) {  // +2: key, value
    if (lua_type(L, -2) != LUA_TSTRING) {
      lua_pop(L, 2);
      throw ScriptError(fmt::format("{}: blis.{}: keys must be names", caller(L), action));
    }
    std::string key = lua_text(L, -2);
    std::string value;
    switch (lua_type(L, -1)) {
      case LUA_TNUMBER: value = scenario::number_text(lua_tonumber(L, -1)); break;
      case LUA_TSTRING: value = lua_text(L, -1); break;
      case LUA_TBOOLEAN: value = lua_toboolean(L, -1) ? "true" : "false"; break;
      default: {
        const std::string type = luaL_typename(L, -1);
        lua_pop(L, 2);
        throw ScriptError(fmt::format("{}: blis.{}: {} must be a string, number or boolean, not a {}", caller(L),
                                      action, key, type));
      }
    }
    lua_pop(L, 1);  // -1: the value; the key stays for lua_next
    if (key == "action") {
      lua_pop(L, 1);
      throw ScriptError(fmt::format("{}: blis.{}: the action is in the function's name; leave out action=",
                                    caller(L), action));
    }
    fields.emplace_back(std::move(key), std::move(value));
  }
  std::sort(fields.begin() + 1, fields.end());
  return scenario::record_text(std::move(fields));
}

void set_number(lua_State* L, const char* key, double v) {
  lua_pushnumber(L, v);  // +1
  lua_setfield(L, -2, key);  // -1
}

}  // namespace

ScenarioApi::~ScenarioApi() {
  if (L_ == nullptr) return;
  for (const Call& c : calls_)
    if (c.fn_ref != LUA_NOREF) luaL_unref(L_, LUA_REGISTRYINDEX, c.fn_ref);
}

// Expects the sandbox table on top of the stack; leaves the stack as it was.
void ScenarioApi::install(lua_State* L) {
  L_ = L;
  // at, every: closures over this object.
  lua_pushlightuserdata(L, this);  // +1
  lua_pushcclosure(L, &ScenarioApi::lua_at, 1);  // the closure replaces it
  lua_setfield(L, -2, "at");  // -1
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, &ScenarioApi::lua_every, 1);
  lua_setfield(L, -2, "every");
  lua_createtable(L, 0, 16);  // +1: blis
  for (const char* action : kActions) {
    lua_pushlightuserdata(L, this);  // +1
    lua_pushstring(L, action);  // +1
    lua_pushcclosure(L, &ScenarioApi::lua_action, 2);  // -2 +1
    lua_setfield(L, -2, action);  // -1
  }
  const std::pair<const char*, lua_CFunction> fns[] = {
      {"event", &ScenarioApi::lua_event}, {"cluster", &ScenarioApi::lua_cluster}, {"now", &ScenarioApi::lua_now}};
  for (const auto& [name, fn] : fns) {
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
  }
  lua_setfield(L, -2, "blis");  // -1: blis
}

void ScenarioApi::start(ScenarioHost& host) {
  for (const auto& [at, id] : pending_) host.call_at(at, id);
  pending_.clear();
}

// Registers fn (at stack index `fn_idx`) and pushes its handle. `fn` names
// the function for the message when too many calls are pending.
void ScenarioApi::add_call(lua_State* L, SimTime first, SimTime interval, int fn_idx, const char* fn) {
  if (pending_calls_ >= kMaxPendingCalls)
    throw ScriptError(fmt::format("{}: {}: more than {} callbacks pending (registered and not run yet); a callback "
                                  "that registers others each time it runs multiplies them",
                                  caller(L), fn, kMaxPendingCalls));
  lua_pushvalue(L, fn_idx);  // +1
  const int ref = luaL_ref(L, LUA_REGISTRYINDEX);  // -1
  uint64_t id = calls_.size();
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    Call& c = calls_[id];
    c = Call{ref, interval, false, c.serial + 1, host_ != nullptr, caller(L)};
  } else {
    calls_.push_back(Call{ref, interval, false, 0, host_ != nullptr, caller(L)});
  }
  ++pending_calls_;
  if (host_ != nullptr)
    host_->call_at(first, id);
  else
    pending_.emplace_back(first, id);
  // The handle: { cancel = function }, for h:cancel().
  lua_createtable(L, 0, 1);  // +1: the handle
  lua_pushlightuserdata(L, this);  // +1
  lua_pushnumber(L, static_cast<double>(id));  // +1
  lua_pushnumber(L, static_cast<double>(calls_[id].serial));  // +1
  lua_pushcclosure(L, &ScenarioApi::lua_cancel, 3);  // -3 +1
  lua_setfield(L, -2, "cancel");  // -1
}

SimTime ScenarioApi::now() const { return host_ != nullptr ? host_->now() : 0; }

ScenarioHost& ScenarioApi::host(lua_State* L, const char* fn) const {
  if (host_ == nullptr)
    throw ScriptError(fmt::format("{}: {} acts on the running simulation: call it inside an at() or every() "
                                  "callback, not at the script's top level",
                                  caller(L), fn));
  return *host_;
}

int ScenarioApi::lua_at(lua_State* L) {
  ScenarioApi* self = api_of(L);
  return guarded(L, [L, self] {
    const SimTime t = time_arg(L, 1, "at");
    if (lua_type(L, 2) != LUA_TFUNCTION)
      throw ScriptError(fmt::format("{}: at(t, fn): fn must be a function, not a {}", caller(L), luaL_typename(L, 2)));
    if (t < self->now())
      throw ScriptError(fmt::format("{}: at({:.6f}): that time has passed (now is {:.6f} s); times are absolute, "
                                    "e.g. at(blis.now() + 10, fn)",
                                    caller(L), static_cast<double>(t) / 1e6, static_cast<double>(self->now()) / 1e6));
    self->add_call(L, t, 0, 2, "at");
    return 1;
  });
}

int ScenarioApi::lua_every(lua_State* L) {
  ScenarioApi* self = api_of(L);
  return guarded(L, [L, self] {
    const SimTime interval = time_arg(L, 1, "every");
    if (interval <= 0) throw ScriptError(fmt::format("{}: every(interval, fn): interval must be > 0", caller(L)));
    if (lua_type(L, 2) != LUA_TFUNCTION)
      throw ScriptError(
          fmt::format("{}: every(interval, fn): fn must be a function, not a {}", caller(L), luaL_typename(L, 2)));
    self->add_call(L, self->now() + interval, interval, 2, "every");
    return 1;
  });
}

int ScenarioApi::lua_cancel(lua_State* L) {
  ScenarioApi* self = api_of(L);
  const auto id = static_cast<size_t>(lua_tonumber(L, lua_upvalueindex(2)));
  // A one-off call that has run freed its slot, which may hold another call now.
  Call& c = self->calls_[id];
  if (c.fn_ref != LUA_NOREF && c.serial == static_cast<uint32_t>(lua_tonumber(L, lua_upvalueindex(3))))
    c.cancelled = true;
  return 0;
}

int ScenarioApi::lua_action(lua_State* L) {
  ScenarioApi* self = api_of(L);
  return guarded(L, [L, self] {
    const std::string action = lua_text(L, lua_upvalueindex(2));
    ScenarioHost& host = self->host(L, ("blis." + action).c_str());
    host.apply_text(action_text(L, action), caller(L));
    return 0;
  });
}

int ScenarioApi::lua_event(lua_State* L) {
  ScenarioApi* self = api_of(L);
  return guarded(L, [L, self] {
    ScenarioHost& host = self->host(L, "blis.event");
    if (lua_type(L, 1) != LUA_TSTRING)
      throw ScriptError(fmt::format("{}: blis.event takes an event's text, e.g. blis.event(\"action=drain "
                                    "instance=1\"), not a {}",
                                    caller(L), luaL_typename(L, 1)));
    host.apply_text(lua_text(L, 1), caller(L));
    return 0;
  });
}

int ScenarioApi::lua_now(lua_State* L) {
  lua_pushnumber(L, static_cast<double>(api_of(L)->now()) / 1e6);
  return 1;
}

int ScenarioApi::lua_cluster(lua_State* L) {
  ScenarioApi* self = api_of(L);
  return guarded(L, [L, self] {
    self->host(L, "blis.cluster").snapshot(self->snap_);
    self->push_snapshot(L);
    return 1;
  });
}

// The snapshot as a table (docs/scenarios.md "The cluster as a callback sees it").
void ScenarioApi::push_snapshot(lua_State* L) const {
  const ClusterSnapshot& s = snap_;
  lua_createtable(L, 0, 12);  // +1: the snapshot
  set_number(L, "time", static_cast<double>(s.now) / 1e6);
  const std::pair<const char*, int64_t> counts[] = {
      {"arrived", s.arrived},     {"completed", s.completed}, {"failed", s.failed},   {"timed_out", s.timed_out},
      {"dropped", s.dropped},     {"rejected", s.rejected},   {"rerouted", s.rerouted}};
  for (const auto& [key, v] : counts) set_number(L, key, static_cast<double>(v));
  int32_t taking = 0;
  lua_createtable(L, 0, static_cast<int>(s.pools.size()));  // +1: pools
  for (const ClusterSnapshot::Pool& p : s.pools) {
    taking += p.instances;
    lua_createtable(L, 0, 2);  // +1: the pool
    set_number(L, "instances", p.instances);
    set_number(L, "present", p.present);
    lua_setfield(L, -2, p.name.c_str());  // -1
  }
  lua_setfield(L, -2, "pools");  // -1: pools
  set_number(L, "instance_count", taking);
  lua_createtable(L, static_cast<int>(s.instances.size()), 0);  // +1: instances
  for (size_t k = 0; k < s.instances.size(); ++k) {
    const ClusterSnapshot::Instance& i = s.instances[k];
    lua_createtable(L, 0, 7);  // +1: the instance
    set_number(L, "index", i.index);
    lua_pushstring(L, s.pools[static_cast<size_t>(i.pool)].name.c_str());
    lua_setfield(L, -2, "pool");
    lua_pushstring(L, i.state);
    lua_setfield(L, -2, "state");
    set_number(L, "queue", i.queue);
    set_number(L, "running", i.running);
    set_number(L, "in_flight", static_cast<double>(i.in_flight));
    set_number(L, "kv", i.kv);
    lua_rawseti(L, -2, static_cast<int>(k + 1));  // -1
  }
  lua_setfield(L, -2, "instances");  // -1: instances
}

namespace {

// A scenario script's callbacks over one run: the script's top level runs
// again in the run's VM (its own sandbox and math.random stream), and each
// due call runs under the plugin budget.
class LuaScenarioCode final : public ScenarioCode {
 public:
  LuaScenarioCode(LuaVm& vm, const std::string& path)
      : script_(vm, path, "scenario", read_script(path), kScenarioInstructionLimit, kScenarioCpuLimit,
                [this](lua_State* L) { api_.install(L); }) {
    script_.set_limits(kPluginInstructionLimit, kPluginCpuLimit);
  }

  void start(ScenarioHost& host) override { api_.start(host); }

  void fire(uint64_t id, ScenarioHost& host) override { api_.fire(script_, id, host); }

 private:
  ScenarioApi api_;  // before script_: the script's closures point at it
  ScriptInstance script_;
};

}  // namespace

void ScenarioApi::fire(const ScriptInstance& script, uint64_t id, ScenarioHost& host) {
  --pending_calls_;
  Call& c = calls_[id];
  if (c.cancelled || c.fn_ref == LUA_NOREF) {
    release(id);
    return;
  }
  if (host.now() != instant_) {
    instant_ = host.now();
    calls_this_instant_ = 0;
  }
  if (++calls_this_instant_ > kMaxCallsPerInstant)
    throw ScriptError(fmt::format("{}: more than {} callbacks at one virtual instant ({:.6f} s); callbacks that "
                                  "keep registering calls for the time they run at, or more calls each time they "
                                  "run, would never let the run end",
                                  c.where, kMaxCallsPerInstant, static_cast<double>(instant_) / 1e6));
  if (++calls_run_ > kMaxCallsPerRun / script_limit_divisor())
    throw ScriptError(
        fmt::format("{}: more than {} callbacks in one run; an every() interval of a few "
                    "microseconds (every(\"01\") is every 1 µs) runs millions of times: act at a "
                    "longer interval",
                    c.where, kMaxCallsPerRun / script_limit_divisor()));
  struct Reset {
    ScenarioHost*& h;
    ~Reset() { h = nullptr; }
  } reset{host_};
  host_ = &host;
  host.snapshot(snap_);
  const int base = script.begin_call(c.fn_ref);
  push_snapshot(script.state());
  script.end_call(base, 1, 0);
  const Call& done = calls_[id];  // the callback may have registered more calls
  const bool only_code = host.only_code_left();
  calls_after_end_ = only_code && done.chained ? calls_after_end_ + 1 : 0;
  if (calls_after_end_ > kMaxCallsAfterEnd)
    throw ScriptError(fmt::format("{}: more than {} callbacks in a row after the rest of the run ended (no request, "
                                  "event or horizon left); callbacks that keep registering calls would never let "
                                  "the run end",
                                  done.where, kMaxCallsAfterEnd));
  if (done.interval > 0 && !done.cancelled && !only_code) {
    ++pending_calls_;
    host.call_at(host.now() + done.interval, id);
  } else {
    release(id);
  }
}

// Frees the slot of a call that will not run again. A periodic call keeps
// its function: fire() is done with it, but its slot stays taken, so that
// a handle's cancel() finds what it expects.
void ScenarioApi::release(uint64_t id) {
  Call& c = calls_[id];
  if (c.interval != 0 || c.fn_ref == LUA_NOREF) return;
  luaL_unref(L_, LUA_REGISTRYINDEX, c.fn_ref);
  c.fn_ref = LUA_NOREF;
  c.where.clear();
  free_.push_back(id);
}

}  // namespace blis::lua

namespace blis {

std::unique_ptr<ScenarioCode> make_lua_scenario_code(LuaVm& vm, const std::string& path) {
  return std::make_unique<lua::LuaScenarioCode>(vm, path);
}

}  // namespace blis
