// Internals of the Lua host shared by the VM and the adapters: the VM's
// registry handles, and ScriptInstance, one script run in its own sandbox.
#pragma once

#include <blis/config_table.hpp>
#include <blis/go_rand.hpp>
#include <blis/lua.hpp>

#include <lua.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blis::lua {

// The Lua string at `idx` whole: lua_tostring's C string ends at the first
// NUL, and a script's "25\0vms" must not read as "25".
inline std::string lua_text(lua_State* L, int idx) {
  size_t n = 0;
  const char* s = lua_tolstring(L, idx, &n);
  return s != nullptr ? std::string(s, n) : std::string();
}

// Generated at build time from sdk/include/blis/plugin.h (core/embed_abi.cmake).
extern const char* const kAbiHeaderText;

// The part of plugin.h between the BLIS_FFI_BEGIN and BLIS_FFI_END markers.
std::string_view ffi_declarations();

// Limits of what scripts may spend (docs/lua.md, "Limits"). A call of a
// plugin's entry point (score, admit, step_time, init...) gets the plugin
// budget; a scenario's top level and each search call get the scenario one.
inline constexpr int32_t kPluginInstructionLimit = 100'000'000;
inline constexpr int32_t kScenarioInstructionLimit = 1'000'000'000;
// CPU seconds one call may take, whatever its instruction count: compiled
// code spends one instruction of the budget per loop iteration, however much
// the iteration does (a table built per iteration, a string copied), so the
// budget alone can let a call run for seconds. Not deterministic (it is
// time), and far above what a call within its budget normally takes.
inline constexpr double kPluginCpuLimit = 2.0;
inline constexpr double kScenarioCpuLimit = 30.0;  // simulations a search runs do not count
// Divides every later call's instruction budget and CPU limit by `divisor`
// (>= 1), for the whole process. The fuzz targets' knob (fuzz/), so that an
// input running to its limit costs them a hundredth of the time; blis itself
// never calls it, and the limits stay those above.
void divide_script_limits(int divisor);
// The divisor set by divide_script_limits (1 in blis itself).
int script_limit_divisor();
// Bytes the Lua heap of one VM may hold (every script of a run shares it).
inline constexpr size_t kMemoryLimit = size_t{256} << 20;

// The instruction budget of the call in progress, read and written by the
// instrumented script code through an FFI pointer (an int32_t: compiled
// code keeps it apart from the scripts' double stores) and by the count
// hook. Outside a guarded call it is kNoBudget and nothing spends it.
inline constexpr int32_t kNoBudget = 2147483647;
struct Budget {
  int32_t left = kNoBudget;  // instructions the call may still run; < 0: exceeded
  int32_t limit = 0;         // the call's whole budget, for the message
};

// Owns the lua_State. The refs point into LUA_REGISTRYINDEX at functions of
// the host's bootstrap chunk, which runs in the main environment (with ffi).
struct VmCore {
  lua_State* L = nullptr;
  int64_t seed = 0;
  int on_error_ref = LUA_NOREF;  // function(err) -> err .. traceback
  int new_env_ref = LUA_NOREF;   // function(random, log, budget, over) -> sandbox table
  int bind_ref = LUA_NOREF;      // function(env, global, lightuserdata): bounds-checked view
  int64_t live_scripts = 0;      // ScriptInstances alive; must be 0 when the VM dies

  Budget budget;               // of the guarded call in progress
  // The budget is handed to `budget` a chunk at a time (kBudgetChunk): the
  // rest waits here, and each refill also checks the call's CPU time.
  int64_t budget_reserve = 0;
  int64_t cpu_limit_ns = 0;     // of the call in progress (0: none)
  int64_t cpu_start_ns = -1;    // the thread's CPU clock at the first refill (-1: none yet)
  int64_t cpu_excluded_ns = 0;  // spent in host work the call asked for (a search's simulations)
  std::string budget_error;    // "script:line: exceeded N instructions", once exceeded
  // The heap: LuaJIT's own allocator, wrapped to count and cap.
  lua_Alloc base_alloc = nullptr;
  void* base_ud = nullptr;
  size_t heap_bytes = 0;
  bool heap_refused = false;   // an allocation failed on the limit since the call began
                               // (the limit holds during guarded calls only)

  VmCore() = default;
  VmCore(const VmCore&) = delete;
  VmCore& operator=(const VmCore&) = delete;
  ~VmCore();
};

// __blis_o of the instrumented code (a lua_CFunction), called when the
// budget's chunk is spent: refills it from the reserve (checking the CPU
// time), or records and raises "script:line: exceeded N instructions" (or
// "... exceeded S s of CPU time") at the calling script function.
int budget_exceeded(lua_State* L);

// Charges `n` instructions of the guarded call in progress (nothing outside
// one) to the script function calling the running C function, for C
// functions that work in loops (lua_patterns.cpp). Like the budget checks in
// the script's code, it refills (reading the CPU clock) and raises
// "script:line: exceeded ..." when the budget or the CPU time is spent.
void spend_budget(lua_State* L, int32_t n);

// Replaces string.find, match, gmatch and gsub of the VM (the string
// metatable's too, which is the same table) with versions whose work is
// charged to the budget (lua_patterns.cpp). Before any sandbox is made.
void install_bounded_patterns(lua_State* L);

// Instructions handed to Budget::left at a time.
inline constexpr int32_t kBudgetChunk = 1 << 14;

// The calling thread's CPU time in nanoseconds.
int64_t thread_cpu_ns();

// While alive, the CPU time of the current thread does not count against
// the guarded call in progress (a search's simulations run inside one).
class CpuClockPause {
 public:
  explicit CpuClockPause(VmCore& core) : core_(core), start_(thread_cpu_ns()) {}
  ~CpuClockPause() { core_.cpu_excluded_ns += thread_cpu_ns() - start_; }
  CpuClockPause(const CpuClockPause&) = delete;
  CpuClockPause& operator=(const CpuClockPause&) = delete;

 private:
  VmCore& core_;
  int64_t start_;
};

// Reads a script file; ScriptError names the path if it cannot.
std::string read_script(const std::string& path);

// `source` with the budget checks added (lua_instrument.cpp): JIT-compiled
// code never runs the count hook, so every loop iteration and function entry
// also spends one instruction of the budget from inside the script. Line
// numbers are unchanged.
std::string instrument(std::string_view source);

// One script loaded into a fresh sandbox environment with its own seeded
// math.random stream. Not movable: the sandbox's math.random holds a pointer
// to rand_, and adapters bind cdata globals to their own members.
class ScriptInstance {
 public:
  // Compiles `source` under the chunk name "@path" and runs its top level.
  // math.random draws from derive_seed(vm seed, "lua:" + name), `name` being
  // the script's registry name, so where the file lives does not change the
  // draws. Throws ScriptError (exit code 2) with path:line (and a traceback).
  // `instruction_limit` is the budget of each call (the top level included).
  // `cpu_limit` (seconds) bounds each call's CPU time the same way.
  // `prepare`, when given, is called with the sandbox table on top of the
  // stack before the top level runs (to add globals; it must leave the stack
  // as it found it).
  ScriptInstance(LuaVm& vm, std::string path, const std::string& name,
                 const std::string& source, int32_t instruction_limit = kPluginInstructionLimit,
                 double cpu_limit = kPluginCpuLimit, const std::function<void(lua_State*)>& prepare = {});
  ~ScriptInstance();
  ScriptInstance(const ScriptInstance&) = delete;
  ScriptInstance& operator=(const ScriptInstance&) = delete;

  const std::string& path() const { return path_; }
  lua_State* state() const { return core_->L; }
  // The budget and CPU limit of each later call (the top level ran under
  // the ones given to the constructor).
  void set_limits(int32_t instruction_limit, double cpu_limit) {
    instruction_limit_ = instruction_limit;
    cpu_limit_ = cpu_limit;
  }

  // Registry ref of the value the script's top level returned (scenario
  // scripts return their scenario), LUA_NOREF when it returned nothing.
  int result_ref() const { return result_ref_; }

  // Registry ref of the global function `name`, LUA_NOREF when the global is
  // nil; ScriptError when it is set to something that is not a function. The
  // instance releases the ref.
  int function_ref(const char* name);
  // The global string `name`, nullopt when nil; ScriptError if not a string.
  std::optional<std::string> string_global(const char* name);

  // Sets the sandbox global `global` (one of instances, request, route,
  // scores, batch, entries) to the view at `address` (lua_views.hpp), which
  // must outlive the instance.
  void bind_pointer(const char* global, const void* address);

  // The call protocol. begin_call pushes the error handler and the function
  // and returns the stack base; the caller pushes `nargs` arguments; end_call
  // runs one lua_pcall under the instance's instruction budget. On error,
  // or when the budget or the memory limit was exceeded (even if the script
  // caught the error itself), the stack is reset and ScriptError thrown
  // (exit code `exit_code`; always 2 for a limit). On success with
  // nresults == 0 the stack is back at base; otherwise the results sit at
  // base+2 .. and the caller must lua_settop(L, base) when done reading them.
  int begin_call(int fn_ref) const;
  void end_call(int base, int nargs, int nresults, int exit_code = 2) const;

  // Pushes the config as a plain table (key -> number/boolean/string/array).
  void push_config(const ConfigTable& config) const;

  // Calls init(config) if the script defines it.
  void run_init(const ConfigTable& config);

 private:
  // lua_pcall under the budget; returns its status. When a limit was
  // exceeded, resets the stack to `reset_to` and throws ScriptError.
  int guarded_pcall(int nargs, int nresults, int handler, int reset_to) const;

  VmCore* core_;
  int32_t instruction_limit_;
  double cpu_limit_;
  std::string path_;
  GoRand rand_;
  std::string log_name_;
  int env_ref_ = LUA_NOREF;
  int result_ref_ = LUA_NOREF;
  std::vector<int> refs_;
};

// The kind a script declares (`kind = "..."`) or, failing that, the one whose
// entry point it defines. Throws ScriptError naming the script and function.
PluginKind detect_kind(ScriptInstance& script);

// Throws ScriptError unless the script is of kind `want`.
void require_kind(ScriptInstance& script, PluginKind want);

// "path: what" unless the message already names the script.
std::string with_path(const std::string& path, const std::string& what);

// A script as the adapters take it: text read earlier, the path it was read
// from (for messages) and the registry name (for the math.random stream).
struct ScriptSource {
  std::string path;
  std::string name;
  std::string text;
};

// The adapters (lua_adapters.cpp).
std::unique_ptr<RoutingScorer> make_scorer_from_source(LuaVm& vm, const ScriptSource& source,
                                                       const ConfigTable& config);
std::unique_ptr<EncodeDecider> make_encode_from_source(LuaVm& vm, const ScriptSource& source,
                                                      const ConfigTable& config);
std::unique_ptr<DispatchOrder> make_dispatch_from_source(LuaVm& vm, const ScriptSource& source,
                                                        const ConfigTable& config);
std::unique_ptr<FairnessPolicy> make_fairness_from_source(LuaVm& vm, const ScriptSource& source,
                                                         const ConfigTable& config);
std::unique_ptr<OffloadEviction> make_offload_eviction_from_source(LuaVm& vm, const ScriptSource& source,
                                                                   const ConfigTable& config);
std::unique_ptr<AdapterEviction> make_adapter_eviction_from_source(LuaVm& vm, const ScriptSource& source,
                                                                   const ConfigTable& config);
std::unique_ptr<SheddingPolicy> make_shedding_from_source(LuaVm& vm, const ScriptSource& source,
                                                          const ConfigTable& config);
std::unique_ptr<SaturationDetector> make_saturation_from_source(LuaVm& vm, const ScriptSource& source,
                                                                 const ConfigTable& config);
std::unique_ptr<Autoscaler> make_autoscaler_from_source(LuaVm& vm, const ScriptSource& source,
                                                        const ConfigTable& config);
std::unique_ptr<AdmissionPolicy> make_admission_from_source(LuaVm& vm, const ScriptSource& source,
                                                            const ConfigTable& config);
std::unique_ptr<LatencyModel> make_latency_from_source(LuaVm& vm, const ScriptSource& source,
                                                       const ConfigTable& config);

}  // namespace blis::lua
