// The globals a Lua scenario uses to run code in virtual time: at(t, fn),
// every(interval, fn) and the blis table (docs/scenarios.md "Events from Lua
// code"). One object per sandbox; lua_scenario_code.cpp.
#pragma once

#include <blis/scenario_events.hpp>

#include "lua/lua_host.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace blis::lua {

// Bounds of a scenario's code (docs/lua.md "Bounds"): calls waiting to run
// (one-off calls not run yet and periodic ones, cancelled or not, as the
// kernel holds an event for each), and calls run at one virtual instant (a
// callback that calls at(now) again would otherwise never let time advance).
inline constexpr size_t kMaxPendingCalls = 100'000;
inline constexpr int64_t kMaxCallsPerInstant = 10'000;
// Callbacks registered by callbacks, run in a row while nothing but them is
// left of the run (the workload done, no event pending, no horizon): a
// one-off call registering the next one a microsecond later would keep the
// run alive for ever. (Calls the top level registered are bounded by the
// pending limit and do not count.)
inline constexpr int64_t kMaxCallsAfterEnd = 10'000;
// Callbacks run in one simulation: each is bounded by its budget, and this
// bounds their sum (and what their actions add to the report's event list).
// An every("01") runs every microsecond: 4 million calls in 4 s of virtual
// time took 30 s of CPU and 1.6 GB for their events.
inline constexpr int64_t kMaxCallsPerRun = 1'000'000;

class ScenarioApi {
 public:
  ScenarioApi() = default;
  ~ScenarioApi();
  ScenarioApi(const ScenarioApi&) = delete;
  ScenarioApi& operator=(const ScenarioApi&) = delete;

  // Sets at, every and blis in the sandbox table on top of the stack. The
  // object must outlive the sandbox's use.
  void install(lua_State* L);
  // Calls registered so far (at the top level, or since).
  size_t registered() const { return calls_.size(); }
  // Asks `host` for the calls the top level registered.
  void start(ScenarioHost& host);
  // Runs call `id` of `script` (whose sandbox this object was installed in).
  void fire(const ScriptInstance& script, uint64_t id, ScenarioHost& host);

 private:
  struct Call {
    int fn_ref;         // LUA_NOREF once a one-off call has run: the slot is free
    SimTime interval;   // 0: a one-off call (at)
    bool cancelled;
    uint32_t serial;    // of the registration in this slot; a handle holds it
    bool chained;       // registered by a callback (not by the top level)
    std::string where;  // "script:line" of the at()/every() that registered it
  };
  static int lua_at(lua_State* L);
  static int lua_every(lua_State* L);
  static int lua_cancel(lua_State* L);
  static int lua_action(lua_State* L);
  static int lua_event(lua_State* L);
  static int lua_now(lua_State* L);
  static int lua_cluster(lua_State* L);
  void add_call(lua_State* L, SimTime first, SimTime interval, int fn_idx, const char* fn);
  void release(uint64_t id);
  SimTime now() const;
  ScenarioHost& host(lua_State* L, const char* fn) const;
  void push_snapshot(lua_State* L) const;

  lua_State* L_ = nullptr;
  std::vector<Call> calls_;       // slots, reused once their one-off call has run
  std::vector<uint64_t> free_;    // free slots of calls_
  size_t pending_calls_ = 0;      // calls asked of the host (or waiting for start) and not run
  SimTime instant_ = -1;          // the virtual time of the last call run
  int64_t calls_this_instant_ = 0;
  int64_t calls_run_ = 0;         // callbacks run in this simulation
  int64_t calls_after_end_ = 0;   // chained calls run in a row while only calls were left
  std::vector<std::pair<SimTime, uint64_t>> pending_;  // registered before the run started
  ScenarioHost* host_ = nullptr;  // during a call only
  ClusterSnapshot snap_;
};

}  // namespace blis::lua
