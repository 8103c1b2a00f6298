// The scripts' string.find/match/gmatch/gsub (src/lua/lua_patterns.cpp):
// the same answers as LuaJIT's own, and their work bounded by the budget.
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/lua.hpp>

#include "lua/lua_host.hpp"

#include <lua.hpp>

#include <string>

namespace {

// Runs every case through string.find, match, gmatch and gsub and returns
// one line per result (errors included), in the state's main environment.
constexpr const char* kCases = R"lua(
local out = {}
local function put(...)
  local t = { select("#", ...), ... }
  for i = 2, t[1] + 1 do t[i] = tostring(t[i]) end
  out[#out + 1] = table.concat(t, " ", 2, t[1] + 1)
end
local function try(f, ...)
  local r = { pcall(f, ...) }
  if r[1] then put(select(2, unpack(r, 1, table.maxn(r)))) else put("error", (tostring(r[2]):gsub("^.-:%d+: ", ""))) end
end
local subjects = { "", "hello world", "  key = value  ", "a,b,,c", "THE (quick) [brown] fox",
                   "x=1, y=22, z=333", "f(a(b)c)d", "\0a\0b", "aaa", "été", "THE END\n" }
local patterns = { "", "o", "l+", "^h", "d$", "^$", "%a+", "%A+", "%d+", "%s*(.-)%s*$", "(%w+)=(%w+)",
                   "[%a_][%w_]*", "[^,]*", "[a-c]", "[]]", "[^%s]+", "%b()", "%f[%a]%a+", "()o()", "(a)(a)%2",
                   "(h)(e)%1", ".-b", "a-", "a?a?a", "[%-x]", "%.", "%", "[a", "(()", "%1", ")", "%b",
                   "%g+", "%p", "%c", "%x+", "%u%l", "%z", "[%z]", "(a*(.)%w(%s*))", "^(%a+)", "%S+$" }
for _, s in ipairs(subjects) do
  for _, p in ipairs(patterns) do
    try(string.find, s, p)
    try(string.find, s, p, 3)
    try(string.find, s, p, -4, true)
    try(string.match, s, p)
    try(string.match, s, p, 100)
    try(function() local r = {} for a, b in s:gmatch(p) do r[#r + 1] = tostring(a) .. "|" .. tostring(b) end return table.concat(r, ";") end)
    try(string.gsub, s, p, "<%0>")
    try(string.gsub, s, p, "%1-%%", 2)
    try(string.gsub, s, p, { o = "0", hello = false, a = 7 })
    try(string.gsub, s, p, function(a, b) if a == "l" then return nil end return (a or "") .. "!" end)
    try(string.gsub, s, p, function() return {} end)
  end
end
try(string.gsub, "abc", "%w", "%2")
try(string.gsub, "abc", "%w", "%")
try(string.find, "abc", "b", 0 / 0)
try(string.find, "abc", "b", 1e300)
try(string.gmatch, "abc")
try(string.gsub, "abc", "b", true)
return table.concat(out, "\n")
)lua";

std::string run_cases(lua_State* L) {
  REQUIRE(luaL_loadstring(L, kCases) == 0);
  if (lua_pcall(L, 0, 1, 0) != 0) FAIL(lua_tostring(L, -1));
  std::string out = lua_tostring(L, -1);
  lua_pop(L, 1);
  return out;
}

}  // namespace

TEST_CASE("patterns: find, match, gmatch and gsub answer as LuaJIT's own", "[lua]") {
  lua_State* raw = luaL_newstate();
  luaL_openlibs(raw);
  const std::string want = run_cases(raw);
  lua_close(raw);
  blis::LuaVm vm{1};
  const std::string got = run_cases(vm.state());
  // Line by line, for a readable difference.
  size_t a = 0, b = 0;
  int line = 1;
  while (a < want.size() || b < got.size()) {
    const size_t ea = std::min(want.find('\n', a), want.size()), eb = std::min(got.find('\n', b), got.size());
    INFO("line " << line);
    CHECK(got.substr(b, eb - b) == want.substr(a, ea - a));
    a = ea + 1;
    b = eb + 1;
    ++line;
  }
}

TEST_CASE("patterns: a backtracking bomb stops at the call's budget, at the script's line", "[lua]") {
  blis::test::TempDir dir{"blis-patterns"};
  blis::LuaVm vm{1};
  const std::string path = dir.write("bomb.lua", "local s = ('a'):rep(5e4)\nlocal x = s:find(('a*'):rep(40) .. 'b')\n");
  try {
    blis::lua::ScriptInstance script(vm, path, "bomb", blis::lua::read_script(path), 10'000'000);
    FAIL("expected a ScriptError");
  } catch (const blis::ScriptError& e) {
    CHECK(e.exit_code() == 2);
    CHECK(std::string(e.what()).find("bomb.lua:2: exceeded 10000000 instructions") != std::string::npos);
  }
  // A script cannot catch it and carry on.
  const std::string caught =
      dir.write("caught.lua", "local ok = pcall(string.match, ('a'):rep(5e4), ('a*'):rep(40) .. 'b')\nreturn ok\n");
  try {
    blis::lua::ScriptInstance script(vm, caught, "caught", blis::lua::read_script(caught), 10'000'000);
    FAIL("expected a ScriptError");
  } catch (const blis::ScriptError& e) {
    CHECK(std::string(e.what()).find("caught.lua:1: exceeded 10000000 instructions") != std::string::npos);
  }
}
