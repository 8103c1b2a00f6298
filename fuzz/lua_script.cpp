// The Lua script loader: blis::register_lua_script on arbitrary source, in a
// fresh VM and registries each time (it compiles the instrumented script and
// runs its top level in a sandbox to learn its kind).
#include "fuzz_input.hpp"

#include "lua/lua_host.hpp"

#include <blis/lua.hpp>
#include <blis/registry.hpp>

// A script that runs to its limits (an endless loop, a pattern bomb) would
// take 2 s of CPU: with a hundredth of them it still meets them, 100x sooner.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  blis::lua::divide_script_limits(100);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = blis_fuzz::scratch_path("script", ".lua");
  blis_fuzz::write_file(path, data, size);
  blis_fuzz::expect_only_blis_errors([&] {
    blis::LuaVm vm(42);
    blis::Registries registries;
    blis::register_lua_script(registries, vm, path, "fuzz-script");
  });
  return 0;
}
