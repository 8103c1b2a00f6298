// The LuaJIT VM of one simulation: opens the state, declares the plugin ABI to
// the FFI, and keeps the host-only helpers (sandbox factory, cdata binder,
// traceback handler) in the registry where scripts cannot reach them.
#include <blis/errors.hpp>
#include <blis/lua.hpp>

#include "lua/lua_host.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace blis::lua {
namespace {

constexpr std::string_view kBeginMarker = "/* BLIS_FFI_BEGIN */";
constexpr std::string_view kEndMarker = "/* BLIS_FFI_END */";

// Runs in the VM's main environment, with every library opened. Receives the
// FFI declarations and returns the three host helpers. Scripts only ever get
// tables built by new_env, so ffi, io, os and friends stay out of their reach.
constexpr const char* kBootstrap = R"lua(
local abi = ...
local ffi = require("ffi")
ffi.cdef(abi)

-- One pointer type per host global; the names are the globals' names.
local pointer_types = {
  instances = ffi.typeof("const blis_instance_snapshot *"),
  request = ffi.typeof("const blis_request_view *"),
  route = ffi.typeof("const blis_route_input *"),
  scores = ffi.typeof("double *"),
  batch = ffi.typeof("const blis_step_batch *"),
  entries = ffi.typeof("const blis_batch_entry *"),
}

local traceback, tostring, type = debug.traceback, tostring, type

local function on_error(err)
  if type(err) ~= "string" then
    err = "error object is a " .. type(err) .. " value (" .. tostring(err) .. ")"
  end
  -- Level 1 starts the traceback at the function that raised the error
  -- (LuaJIT does not count the handler's own frame).
  return traceback(err, 1)
end

local function bind(env, global, address)
  local ct = pointer_types[global]
  if ct == nil then error("no pointer type for global " .. tostring(global)) end
  env[global] = ffi.cast(ct, address)
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

-- The one window onto ffi that scripts get: C strings of the request view
-- (tenant_id, slo_class_name) as Lua strings.
local function cstring(p)
  if p == nil then return "" end
  return ffi.string(p)
end

local function new_env(random, log)
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
  env.print = function(...)
    local n = select("#", ...)
    local parts = { ... }
    for i = 1, n do parts[i] = tostring(parts[i]) end
    log(concat(parts, "\t", 1, n))
  end
  env._G = env
  return env
end

-- Strings share one metatable whose __index is the host's string library;
-- hiding it keeps scripts from reaching (and editing) that table.
getmetatable("").__metatable = false

return on_error, new_env, bind
)lua";

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
  if (L != nullptr) lua_close(L);
}

VmCore& core_of(LuaVm& vm) { return *vm.core_; }

}  // namespace blis::lua

namespace blis {

LuaVm::LuaVm(int64_t seed) : core_(std::make_unique<lua::VmCore>()) {
  core_->seed = seed;
  lua_State* L = luaL_newstate();
  if (L == nullptr) throw ScriptError("cannot create a LuaJIT state (out of memory)");
  core_->L = L;  // from here on ~VmCore closes it, even if this constructor throws
  luaL_openlibs(L);

  if (luaL_loadbuffer(L, lua::kBootstrap, std::strlen(lua::kBootstrap), "=blis-lua-host") != 0)
    throw Error("internal error: the Lua host bootstrap does not compile: " + lua::pop_message(L));
  std::string_view decl = lua::ffi_declarations();
  lua_pushlstring(L, decl.data(), decl.size());
  if (lua_pcall(L, 1, 3, 0) != 0)
    throw ScriptError("LuaJIT's ffi.cdef rejected the plugin ABI (sdk/include/blis/plugin.h): " +
                      lua::pop_message(L));
  // Results are on the stack in order; luaL_ref pops the top one.
  core_->bind_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  core_->new_env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  core_->on_error_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

LuaVm::~LuaVm() = default;

int64_t LuaVm::seed() const { return core_->seed; }

lua_State* LuaVm::state() const { return core_->L; }

}  // namespace blis
