// lru_set (docs/lua.md): the host's LRU set of 64-bit keys as scripts see it.
// Its order of eviction is the native prefix-affinity scorer's (they share
// sdk/include/blis/lru_hash_set.hpp), its misuse is an error at the script's
// line, and its memory counts against the Lua heap limit.
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/lru_hash_set.hpp>
#include <blis/lua.hpp>

#include "lua/lua_host.hpp"

#include <lua.hpp>

#include <string>

namespace {

// Runs `source` as a script's top level and returns what it returned, as a string.
std::string run(const std::string& source) {
  blis::test::TempDir dir{"blis-lru-set"};
  blis::LuaVm vm{1};
  const std::string path = dir.write("set.lua", source);
  blis::lua::ScriptInstance script(vm, path, "set", blis::lua::read_script(path));
  lua_State* L = vm.state();
  lua_rawgeti(L, LUA_REGISTRYINDEX, script.result_ref());
  std::string out = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "(not a string)";
  lua_pop(L, 1);
  return out;
}

std::string error_of(const std::string& source) {
  try {
    run(source);
  } catch (const blis::ScriptError& e) {
    CHECK(e.exit_code() == 2);
    const std::string m = e.what();
    return m.substr(m.find("set.lua"));
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("lru_set keeps the most recently touched keys, evicting the least recent", "[lua]") {
  // Capacity 3: touching 1, 2, 3, then 1 again makes 2 the least recent;
  // 4 evicts it. contains() does not refresh recency: 3 goes next.
  CHECK(run("local s = lru_set(3)\n"
            "s.touch(1) s.touch(2) s.touch(3) s.touch(1) s.touch(4)\n"
            "local a = tostring(s.contains(1)) .. tostring(s.contains(2)) .. tostring(s.contains(3)) .. s.count()\n"
            "s.contains(3) s.touch(5)\n"
            "return a .. ' ' .. tostring(s.contains(3)) .. tostring(s.contains(4)) .. tostring(s.contains(5))\n") ==
        "truefalsetrue3 falsetruetrue");
}

TEST_CASE("lru_set evicts in the native scorer's order over many keys", "[lua]") {
  // 20,000 pseudo-random 64-bit keys (some repeated) into a set of 1,000:
  // the script and blis::sdk::LruHashSet agree on every membership after.
  blis::sdk::LruHashSet native;
  uint64_t x = 7;
  std::vector<uint64_t> keys;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    keys.push_back(i % 5 == 0 && i > 100 ? keys[static_cast<size_t>(i) / 2] : x);
    native.touch(keys.back(), 1000);
  }
  std::string expect;
  for (int i = 0; i < 20000; i += 7) expect += native.contains(keys[static_cast<size_t>(i)]) ? '1' : '0';
  const std::string got = run(
      "local x, keys = 7ULL, {}\n"
      "local s = lru_set(1000)\n"
      "for i = 0, 19999 do\n"
      "  x = x * 6364136223846793005ULL + 1442695040888963407ULL\n"
      "  keys[i] = (i % 5 == 0 and i > 100) and keys[math.floor(i / 2)] or x\n"
      "  s.touch(keys[i])\n"
      "end\n"
      "local out = {}\n"
      "for i = 0, 19999, 7 do out[#out + 1] = s.contains(keys[i]) and '1' or '0' end\n"
      "return table.concat(out) .. ' ' .. s.count()\n");
  CHECK(got == expect + " 1000");
}

TEST_CASE("lru_set.add_anonymous takes room as new keys would, without storing them", "[lua]") {
  // Capacity 4: 1 and 2, then three anonymous keys evict 1; touching 3
  // evicts 2; five more anonymous keys leave only anonymous ones.
  CHECK(run("local s = lru_set(4)\n"
            "s.touch(1) s.touch(2) s.add_anonymous(3)\n"
            "local a = tostring(s.contains(1)) .. tostring(s.contains(2)) .. s.count()\n"
            "s.touch(3) s.add_anonymous(0)\n"
            "local b = tostring(s.contains(2)) .. tostring(s.contains(3)) .. s.count()\n"
            "s.add_anonymous(5)\n"
            "return a .. ' ' .. b .. ' ' .. tostring(s.contains(3)) .. s.count()\n") ==
        "falsetrue4 falsetrue4 false4");
  CHECK(error_of("local s = lru_set(10)\ns.add_anonymous(-1)\nreturn ''\n")
            .rfind("set.lua:2: lru_set: add_anonymous needs a whole count >= 0, got -1", 0) == 0);
  CHECK(error_of("local s = lru_set(10)\ns.add_anonymous('x')\nreturn ''\n")
            .rfind("set.lua:2: lru_set: add_anonymous needs a count, got string", 0) == 0);
}

TEST_CASE("lru_set: a bad capacity or key is an error at the script's line", "[lua]") {
  CHECK(error_of("local s = lru_set(0)\nreturn ''\n").rfind(
            "set.lua:1: lru_set(capacity): capacity must be an integer between 1 and 2147483647, got 0", 0) == 0);
  CHECK(error_of("local s = lru_set(10)\ns.touch('abc')\nreturn ''\n")
            .rfind("set.lua:2: lru_set: a key must be a number or a block hash, got string", 0) == 0);
  CHECK(error_of("local s = lru_set(10)\nlocal x = s.contains({})\nreturn ''\n")
            .rfind("set.lua:2: lru_set: a key must be a number or a block hash, got table", 0) == 0);
}

TEST_CASE("lru_set: keys that would collide with another are errors at the script's line", "[lua]") {
  // NaN, 1e300, -1 and 0.5 all convert to some uint64_t: they were accepted
  // and collided (touch(0.5) made contains(0) true).
  for (const std::string key : {"0/0", "1e300", "-1", "0.5", "2^64", "-0.5"}) {
    INFO(key);
    CHECK(error_of("local s = lru_set(10)\ns.touch(" + key + ")\nreturn ''\n")
              .rfind("set.lua:2: lru_set: a key must be a whole number from 0 to 2^64-1 or a block hash, got ", 0) == 0);
    CHECK(error_of("local s = lru_set(10)\nlocal x = s.contains(" + key + ")\nreturn ''\n")
              .rfind("set.lua:2: lru_set: a key must be a whole number from 0 to 2^64-1 or a block hash", 0) == 0);
  }
  CHECK(error_of("local s = lru_set(10)\ns.touch(lru_set)\nreturn ''\n")
            .rfind("set.lua:2: lru_set: a key must be a number or a block hash, got function", 0) == 0);
  // The largest keys are fine, as numbers or as hashes, and are one key.
  CHECK(run("local s = lru_set(10)\ns.touch(2^63)\ns.touch(0)\n"
            "return tostring(s.contains(0)) .. tostring(s.contains(2^63)) .. tostring(s.count())\n") == "truetrue2");
}

TEST_CASE("lru_set's memory counts against the Lua heap limit", "[lua]") {
  // About 40 bytes a key: with 192 MiB held by a string, 2 million keys are
  // past 256 MiB. (10 million keys alone took close to the 2 s CPU limit on
  // a loaded machine, and failed on it now and then.)
  const std::string m = error_of(
      "local pad = string.rep('x', 192 * 2^20)\nlocal s = lru_set(2147483647)\nfor i = 1, 1e7 do s.touch(i) end\n"
      "return ''\n");
  INFO(m);
  CHECK(m.rfind("set.lua: the Lua heap would exceed its limit of 256 MiB", 0) == 0);
}
