// The LuaJIT VM of one simulation: opens the state, declares the plugin ABI to
// the FFI, and keeps the host-only helpers (sandbox factory, cdata binder,
// traceback handler) in the registry where scripts cannot reach them.
#include <blis/errors.hpp>
#include <blis/lua.hpp>

#include "lua/lua_host.hpp"
#include "lua/lua_lru.hpp"
#include "lua/lua_views.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>

namespace blis::lua {
namespace {

constexpr std::string_view kBeginMarker = "/* BLIS_FFI_BEGIN */";
constexpr std::string_view kEndMarker = "/* BLIS_FFI_END */";

// Runs in the VM's main environment, with every library opened. Receives the
// FFI declarations and returns the three host helpers. Scripts only ever get
// tables built by new_env, so ffi, io, os and friends stay out of their reach.
constexpr const char* kBootstrap = R"lua(
local abi, views, lru_api, core = ...
local ffi = require("ffi")
ffi.cdef(abi)
ffi.cdef(views)

local traceback, tostring, type, error, format = debug.traceback, tostring, type, error, string.format
local gsub = string.gsub  -- LuaJIT's own (the host's patterns are small); scripts get a bounded one
local cast = ffi.cast

-- The one window onto ffi that scripts get: C strings of the request view
-- (tenant_id, slo_class_name) as Lua strings.
local function cstring(p)
  if p == nil then return "" end
  if type(p) == "string" then return p end
  return ffi.string(p)
end

-- Host data reaches scripts only through views (lua_views.hpp): an address
-- the script cannot turn back into a pointer (it has no ffi) and a count
-- every index is checked against. Level 2 places an error at the script's
-- line that indexed.
local floor = math.floor

local function out_of_range(name, i, n)
  if type(i) ~= "number" then
    error(format("%s must be indexed by a number, got %s", name, type(i) == "string" and ("\"" .. i .. "\"") or type(i)), 3)
  end
  if i ~= floor(i) then  -- 0.5, NaN: the cast would truncate 0.5 to 0
    error(format("%s[%s]: an index must be a whole number", name, tostring(i)), 3)
  end
  if n <= 0 then error(format("%s[%s] is out of range: %s is empty", name, tostring(i), name), 3) end
  error(format("%s[%s] is out of range: valid indices are 0 .. %d", name, tostring(i), n - 1), 3)
end

local function array(ctype, element, name, writable)
  local ptr = ffi.typeof(element .. " *")
  local mt = {
    __index = function(v, i)
      if type(i) == "number" and i >= 0 and i < v._n and i == floor(i) then return cast(ptr, v._p)[i] end
      out_of_range(name, i, v._n)
    end,
    __len = function(v) return v._n end,
  }
  if writable then
    mt.__newindex = function(v, i, x)
      if type(i) == "number" and i >= 0 and i < v._n and i == floor(i) then
        if type(x) ~= "number" then
          error(format("%s[%s] must be set to a number, got %s", name, tostring(i), type(x)), 2)
        end
        cast(ptr, v._p)[i] = x
        return
      end
      out_of_range(name, i, v._n)
    end
  end
  ffi.metatype(ctype, mt)
end
array("blis_lua_scores", "double", "scores", true)
array("blis_lua_instances", "const blis_instance_snapshot", "instances", false)
array("blis_lua_entries", "const blis_batch_entry", "entries", false)
array("blis_lua_hashes", "const uint64_t", "request.block_hashes", false)
array("blis_lua_variants", "const blis_scaling_variant", "variants", false)

local request_ptr = ffi.typeof("const blis_request_view *")
local request_view = ffi.typeof("const blis_lua_request *")
ffi.metatype("blis_lua_request", {
  __index = function(v, k)
    if k == "block_hashes" then return v._hashes end
    local r = cast(request_ptr, v._p)
    if k == "tenant_id" or k == "slo_class_name" then return cstring(r[k]) end
    return r[k]
  end,
})
local route_ptr = ffi.typeof("const blis_route_input *")
local instances_view = ffi.typeof("const blis_lua_instances *")
ffi.metatype("blis_lua_route", {
  __index = function(v, k)
    if k == "instances" then return cast(instances_view, v._instances)[0] end
    if k == "request" then return cast(request_view, v._request)[0] end
    return cast(route_ptr, v._p)[k]
  end,
})
local batch_ptr = ffi.typeof("const blis_step_batch *")
local entries_view = ffi.typeof("const blis_lua_entries *")
ffi.metatype("blis_lua_batch", {
  __index = function(v, k)
    if k == "entries" then return cast(entries_view, v._entries)[0] end
    return cast(batch_ptr, v._p)[k]
  end,
})

-- One view type per host global; the names are the globals' names.
local view_types = {
  instances = instances_view,
  request = request_view,
  route = ffi.typeof("const blis_lua_route *"),
  scores = ffi.typeof("blis_lua_scores *"),
  batch = ffi.typeof("const blis_lua_batch *"),
  entries = entries_view,
  variants = ffi.typeof("const blis_lua_variants *"),
}

-- lru_set(capacity): a set of 64-bit keys (block hashes) that keeps the
-- `capacity` most recently touched, for scorers that index what they routed
-- where (scripts/scorers/prefix_affinity.lua). The set is the host's (the
-- native prefix-affinity scorer's index, lua_lru.cpp), called through FFI
-- function pointers that JIT-compiled code calls directly; the script gets
-- three functions closing over the set's handle, never the handle. Keys
-- are compared as uint64_t values: a hash needs no conversion.
local lru = cast("const blis_lua_lru_api *", lru_api)
local lru_make, lru_contains, lru_touch, lru_count, lru_release = lru.make, lru.contains, lru.touch, lru.count, lru.release
local lru_add_anonymous, lru_touch_run, lru_leading = lru.add_anonymous, lru.touch_run, lru.leading
local hashes_view, hash_ptr = ffi.typeof("blis_lua_hashes"), ffi.typeof("const uint64_t *")
local vm_core = cast("void *", core)
local istype, u64, i64 = ffi.istype, ffi.typeof("uint64_t"), ffi.typeof("int64_t")

-- A key is a 64-bit integer cdata (a block hash) or a whole number that
-- converts to uint64_t exactly: 0 <= n < 2^64. NaN, fractions, negatives and
-- 1e300 would all convert to some uint64_t and collide with a real key.
local function key_of(h)
  local t = type(h)
  if t == "cdata" then
    if istype(u64, h) or istype(i64, h) then return h end
  elseif t == "number" then
    if h >= 0 and h < 18446744073709551616 and h == floor(h) then return h end
    error(format("lru_set: a key must be a whole number from 0 to 2^64-1 or a block hash, got %s", tostring(h)), 3)
  end
  error(format("lru_set: a key must be a number or a block hash, got %s", t == "cdata" and "a cdata that is not a 64-bit integer" or t), 3)
end

local function heap_full()
  error("lru_set: the set would grow past the Lua heap limit", 3)
end

-- A run's bounds over a hashes view: whole numbers with 0 <= from <= to <=
-- #hashes. `name` is the call ("lru_set: leading"); `from` nil when the call
-- has no such argument (it is 0).
local function run_range(name, hashes, from, to)
  local args = from == nil and "(hashes, to)" or "(hashes, from, to)"
  if not istype(hashes_view, hashes) then
    error(format("%s%s needs request.block_hashes, got %s", name, args, type(hashes)), 3)
  end
  local f = from or 0
  if type(f) == "cdata" then f = tonumber(f) end
  if type(to) == "cdata" then to = tonumber(to) end
  if type(f) ~= "number" or type(to) ~= "number" or f ~= floor(f) or to ~= floor(to) or f < 0 or to < f or
     to > hashes._n then
    local given = from == nil and tostring(to) or (tostring(from) .. ", " .. tostring(to))
    local need = from == nil and "0 <= to" or "0 <= from <= to"
    error(format("%s%s needs whole %s <= %d, got %s", name, args, need, hashes._n, given), 3)
  end
  return f, to
end

local function lru_set(capacity)
  if type(capacity) ~= "number" or capacity ~= floor(capacity) or capacity < 1 or capacity > 2147483647 then
    error("lru_set(capacity): capacity must be an integer between 1 and 2147483647, got " .. tostring(capacity), 2)
  end
  local handle = lru_make(vm_core, capacity)
  if handle == nil then heap_full() end
  handle = ffi.gc(handle, lru_release)
  local set = {}
  -- Whether `h` is in the set; does not change its recency.
  function set.contains(h) return lru_contains(handle, key_of(h)) end
  -- `h` becomes the most recent key; a new key first evicts the least
  -- recent one when the set is full.
  function set.touch(h)
    if lru_touch(handle, key_of(h)) ~= 0 then heap_full() end
  end
  -- `n` new keys that nobody will look up (a request's own blocks,
  -- request.own_blocks): they take room and evict like n new keys touched
  -- one after another, without being stored.
  function set.add_anonymous(n)
    if type(n) == "cdata" then n = tonumber(n) end
    if type(n) ~= "number" then
      error(format("lru_set: add_anonymous needs a count, got %s", type(n)), 2)
    end
    local status = lru_add_anonymous(handle, n)
    if status == 1 then heap_full() end
    if status == 2 then
      error("lru_set: add_anonymous needs a whole count >= 0, got " .. tostring(n), 2)
    end
  end
  -- The number of keys held (anonymous ones included).
  function set.count() return lru_count(handle) end
  -- Bulk forms over a request's hashes (request.block_hashes), one host call
  -- each: touch(hashes[from]) ... touch(hashes[to - 1]) in order, and the
  -- first k in [from, to) with hashes[k] not in the set (to if all are).
  function set.touch_run(hashes, from, to)
    from, to = run_range("lru_set: touch_run", hashes, from, to)
    if lru_touch_run(handle, cast(hash_ptr, hashes._p), from, to) ~= 0 then heap_full() end
  end
  function set.leading(hashes, from, to)
    from, to = run_range("lru_set: leading", hashes, from, to)
    return lru_leading(handle, cast(hash_ptr, hashes._p), from, to)
  end
  return set
end

-- prefix_memo(): the leading block hashes of one request, kept by the host,
-- to compare the next request's with: m.remember(hashes, n) keeps
-- hashes[0..n), m.common(hashes, n) is how many of hashes[0..n) equal the
-- kept ones from the first, m.length() how many are kept.
local memo_make, memo_common, memo_remember = lru.memo_make, lru.memo_common, lru.memo_remember
local memo_length, memo_release = lru.memo_length, lru.memo_release

local function memo_heap_full()
  error("prefix_memo: the memo would grow past the Lua heap limit", 3)
end

local function prefix_memo()
  local handle = memo_make(vm_core)
  if handle == nil then memo_heap_full() end
  handle = ffi.gc(handle, memo_release)
  local m = {}
  function m.common(hashes, to)
    local _
    _, to = run_range("prefix_memo: common", hashes, nil, to)
    return memo_common(handle, cast(hash_ptr, hashes._p), to)
  end
  function m.remember(hashes, to)
    local _
    _, to = run_range("prefix_memo: remember", hashes, nil, to)
    if memo_remember(handle, cast(hash_ptr, hashes._p), to) ~= 0 then memo_heap_full() end
  end
  function m.length() return memo_length(handle) end
  return m
end

local function on_error(err)
  if type(err) ~= "string" then
    err = "error object is a " .. type(err) .. " value (" .. tostring(err) .. ")"
  end
  -- Level 1 starts the traceback at the function that raised the error
  -- (LuaJIT does not count the handler's own frame).
  -- The host's own frames (bounds checks of the views) are noise to the
  -- script's author: the message already names the script's line.
  local tb = traceback(err, 1)
  tb = gsub(tb, "\n\t%[C%]: in function 'error'(\n\tblis%-lua%-host:)", "%1")
  return (gsub(tb, "\n\tblis%-lua%-host:[^\n]*", ""))
end

local function bind(env, global, address)
  local ct = view_types[global]
  if ct == nil then error("no view type for global " .. tostring(global)) end
  env[global] = cast(ct, address)[0]
end

local safe_base = {
  "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "rawequal",
  "rawget", "rawset", "select", "setmetatable", "tonumber", "tostring", "type",
  "unpack", "xpcall",
}

-- Each sandbox gets its own copies so a script that edits string.* or math.*
-- changes nothing outside its own environment.
local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

local concat, select, ipairs, G = table.concat, select, ipairs, _G
local budget_type = ffi.typeof("int32_t *")

-- `budget` and `over` are for the instrumentation prelude (lua_instrument.cpp),
-- which takes them out of the table before the script's code runs.
local function new_env(random, log, budget, over)
  local env = {}
  for _, name in ipairs(safe_base) do env[name] = G[name] end
  env._VERSION = _VERSION
  env.string = copy(string)
  env.table = copy(table)
  env.bit = copy(bit)
  local m = copy(math)
  m.random, m.randomseed = random, nil
  env.math = m
  env.cstring = cstring
  env.lru_set = lru_set
  env.prefix_memo = prefix_memo
  env.print = function(...)
    local n = select("#", ...)
    local parts = { ... }
    for i = 1, n do parts[i] = tostring(parts[i]) end
    log(concat(parts, "\t", 1, n))
  end
  env._G = env
  env.__blis_b = cast(budget_type, budget)
  env.__blis_o = over
  return env
end

-- Strings share one metatable whose __index is the host's string library;
-- hiding it keeps scripts from reaching (and editing) that table.
getmetatable("").__metatable = false

return on_error, new_env, bind
)lua";

// LuaJIT's allocator, counting the heap and, while a script runs, refusing
// to grow it past kMemoryLimit; LuaJIT turns a refusal into a "not enough
// memory" error. The host's own calls between scripts (outside any pcall,
// where an error would abort) are never refused.
void* limited_alloc(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* core = static_cast<VmCore*>(ud);
  const size_t old_bytes = ptr != nullptr ? old_size : 0;
  if (core->budget.left != kNoBudget && new_size > old_bytes &&
      core->heap_bytes - old_bytes + new_size > kMemoryLimit) {
    core->heap_refused = true;
    return nullptr;
  }
  void* out = core->base_alloc(core->base_ud, ptr, old_size, new_size);
  if (out != nullptr || new_size == 0) core->heap_bytes = core->heap_bytes - old_bytes + new_size;
  return out;
}

VmCore* core_from(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return static_cast<VmCore*>(ud);
}

// Records the exceeded budget, placed at `level` of the stack, and raises it.
// `what` is the limit that ran out ("100000000 instructions").
int raise_budget(lua_State* L, VmCore& core, int level, const std::string& what) {
  if (core.budget_error.empty()) {
    // The full path (luaL_where would shorten a long one) and the line, of
    // the first script function from `level` up (a C function such as
    // string.find called through pcall has pcall above it).
    lua_Debug ar{};
    for (; lua_getstack(L, level, &ar) != 0; ++level) {
      if (lua_getinfo(L, "Sl", &ar) != 0 && ar.source != nullptr && ar.source[0] == '@' && ar.currentline > 0) {
        core.budget_error = std::string(ar.source + 1) + ":" + std::to_string(ar.currentline) + ": ";
        break;
      }
    }
    core.budget_error += "exceeded " + what;
  }
  lua_pushstring(L, core.budget_error.c_str());  // [-0, +1] the error value
  return lua_error(L);
}

int raise_instructions(lua_State* L, VmCore& core, int level) {
  return raise_budget(L, core, level, std::to_string(core.budget.limit) + " instructions");
}

// Moves the next chunk of the budget from the reserve into Budget::left and
// checks the call's CPU time (raising at `level` when it is over). The clock
// starts at the first refill, so a call shorter than one chunk never reads it.
void refill(lua_State* L, VmCore& core, int level) {
  const int64_t take = std::min<int64_t>(core.budget_reserve, kBudgetChunk);
  core.budget_reserve -= take;
  core.budget.left = static_cast<int32_t>(core.budget.left + take);
  if (core.cpu_limit_ns <= 0) return;
  const int64_t now = thread_cpu_ns() - core.cpu_excluded_ns;
  if (core.cpu_start_ns < 0) {
    core.cpu_start_ns = now;
  } else if (now - core.cpu_start_ns > core.cpu_limit_ns) {
    core.budget.left = -1;
    core.budget_reserve = 0;
    raise_budget(L, core, level, fmt::format("{:g} s of CPU time in one call", static_cast<double>(core.cpu_limit_ns) / 1e9));
  }
}

// The count hook: the interpreter spends the budget kHookEvery instructions
// at a time. Level 0 is the interrupted function.
constexpr int kHookEvery = 1000;
static_assert(kBudgetChunk >= kHookEvery);
void count_hook(lua_State* L, lua_Debug*) {
  VmCore& core = *core_from(L);
  if (core.budget.left == kNoBudget) return;
  if (core.budget.left < kHookEvery) refill(L, core, 0);
  core.budget.left = core.budget.left >= kHookEvery ? core.budget.left - kHookEvery : -1;
  if (core.budget.left < 0) raise_instructions(L, core, 0);
}

std::string pop_message(lua_State* L) {
  const char* s = lua_tostring(L, -1);
  std::string msg = s != nullptr ? s : "(no error message)";
  lua_pop(L, 1);
  return msg;
}

}  // namespace

std::string_view ffi_declarations() {
  std::string_view text = kAbiHeaderText;
  size_t begin = text.find(kBeginMarker);
  size_t end = text.find(kEndMarker);
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin)
    throw Error("the embedded plugin.h lacks the BLIS_FFI_BEGIN/BLIS_FFI_END markers");
  begin += kBeginMarker.size();
  return text.substr(begin, end - begin);
}

VmCore::~VmCore() {
  if (live_scripts != 0) {
    // A script object outliving its VM would call into a closed state.
    std::fprintf(stderr, "blis: internal error: LuaVm destroyed while %lld script objects live\n",
                 static_cast<long long>(live_scripts));
    std::abort();
  }
  if (L == nullptr) return;
  // Give the state its own allocator back first: lua_close releases LuaJIT's
  // arena only when the state still uses LuaJIT's allocator, and would
  // otherwise leave about 100 KB mapped per VM (found by fuzz/lua_script).
  if (base_alloc != nullptr) lua_setallocf(L, base_alloc, base_ud);
  lua_close(L);
}

VmCore& core_of(LuaVm& vm) { return vm.core(); }

void spend_budget(lua_State* L, int32_t n) {
  VmCore& core = *core_from(L);
  if (core.budget.left == kNoBudget || n <= 0) return;
  // Level 1: the script function that called the C function at level 0.
  while (n > 0) {
    if (core.budget.left < 1) refill(L, core, 1);
    const int32_t take = std::min(n, core.budget.left);
    if (take <= 0) {
      core.budget.left = -1;
      raise_instructions(L, core, 1);
    }
    core.budget.left -= take;
    n -= take;
  }
}

int budget_exceeded(lua_State* L) {
  VmCore& core = *core_from(L);
  refill(L, core, 1);
  return core.budget.left >= 0 ? 0 : raise_instructions(L, core, 1);
}

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace blis::lua

namespace blis {

LuaVm::LuaVm(int64_t seed) : seed_(seed) {}

// Most runs use no script: the state is opened when something first needs it
// (a run per configuration of a sweep opened one each, about 6 % of a small
// configuration's instructions).
lua::VmCore& LuaVm::core() const {
  if (!core_) open();
  return *core_;
}

void LuaVm::open() const {
  core_ = std::make_unique<lua::VmCore>();
  core_->seed = seed_;
  lua_State* L = luaL_newstate();
  if (L == nullptr) throw ScriptError("cannot create a LuaJIT state (out of memory)");
  core_->L = L;  // from here on ~VmCore closes it, even if this constructor throws
  // Count from here: the state's own allocations so far, then every change.
  core_->base_alloc = lua_getallocf(L, &core_->base_ud);
  core_->heap_bytes = static_cast<size_t>(lua_gc(L, LUA_GCCOUNT, 0)) * 1024 +
                      static_cast<size_t>(lua_gc(L, LUA_GCCOUNTB, 0));
  lua_setallocf(L, lua::limited_alloc, core_.get());
  core_->budget.left = lua::kNoBudget;
  lua_sethook(L, lua::count_hook, LUA_MASKCOUNT, lua::kHookEvery);
  luaL_openlibs(L);

  if (luaL_loadbuffer(L, lua::kBootstrap, std::strlen(lua::kBootstrap), "=blis-lua-host") != 0)
    throw Error("internal error: the Lua host bootstrap does not compile: " + lua::pop_message(L));
  std::string_view decl = lua::ffi_declarations();
  lua_pushlstring(L, decl.data(), decl.size());
  lua_pushstring(L, (std::string(lua::kViewDeclarations) + lua::kLruApiDeclaration).c_str());
  lua_pushlightuserdata(L, const_cast<lua::LruApi*>(lua::lru_api()));
  lua_pushlightuserdata(L, core_.get());
  if (lua_pcall(L, 4, 3, 0) != 0)
    throw ScriptError("LuaJIT's ffi.cdef rejected the plugin ABI (sdk/include/blis/plugin.h): " +
                      lua::pop_message(L));
  // Results are on the stack in order; luaL_ref pops the top one.
  core_->bind_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  core_->new_env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  core_->on_error_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua::install_bounded_patterns(L);  // after the bootstrap, which keeps LuaJIT's gsub for tracebacks
}

LuaVm::~LuaVm() = default;

int64_t LuaVm::seed() const { return seed_; }

lua_State* LuaVm::state() const { return core().L; }

}  // namespace blis
