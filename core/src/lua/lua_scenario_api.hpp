// The globals a Lua scenario uses to run code in virtual time: at(t, fn),
// every(interval, fn) and the blis table (docs/scenarios.md "Events from Lua
// code"). One object per sandbox; lua_scenario_code.cpp.
#pragma once

#include <blis/scenario_events.hpp>

#include "lua/lua_host.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace blis::lua {

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
    int fn_ref;        // LUA_NOREF once a one-off call has run
    SimTime interval;  // 0: a one-off call (at)
    bool cancelled;
  };
  static int lua_at(lua_State* L);
  static int lua_every(lua_State* L);
  static int lua_cancel(lua_State* L);
  static int lua_action(lua_State* L);
  static int lua_event(lua_State* L);
  static int lua_now(lua_State* L);
  static int lua_cluster(lua_State* L);
  void add_call(lua_State* L, SimTime first, SimTime interval, int fn_idx);
  SimTime now() const;
  ScenarioHost& host(lua_State* L, const char* fn) const;
  void push_snapshot(lua_State* L) const;

  lua_State* L_ = nullptr;
  std::vector<Call> calls_;
  std::vector<std::pair<SimTime, uint64_t>> pending_;  // registered before the run started
  ScenarioHost* host_ = nullptr;  // during a call only
  ClusterSnapshot snap_;
};

}  // namespace blis::lua
