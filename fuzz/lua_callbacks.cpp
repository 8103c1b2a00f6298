// Scenario code (docs/scenarios.md "Events from Lua code"): the input is the
// body of a Lua scenario, which may register at()/every() callbacks that call
// the blis.* API; it runs through blis::run as `blis run code.lua` would, on
// a small cluster (2 instances, 20 requests, 4 s of virtual time at most,
// 4096 KV blocks, a lifecycle so add/remove are allowed), the report thrown away.
//
// The run loads the built-in plugins and data staged in the build tree
// (build-fuzz/stage, BLIS_FUZZ_STAGE): fuzz/CMakeLists.txt builds them with
// this target, and they are named through BLIS_PLUGIN_PATH and BLIS_DATA_DIR
// (the binary lives in build-fuzz/fuzz/, not beside them). The plugins are
// opened once here with RTLD_NODELETE, so that each run's loader finds them
// loaded rather than mapping (and instrumenting) them afresh.
#include "fuzz_input.hpp"

#include "lua/lua_host.hpp"

#include <blis/run.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string>

namespace {

// Swallows the report.
class NullBuffer final : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// The input inside a function, so that its own `return` (or none) leaves the
// scenario's settings to the target; at() and every() are globals.
std::string scenario_text(const std::string& body) {
  return "local function fuzz_body()\n" + body +
         "\nend\nfuzz_body()\n"
         "return { model = \"qwen/qwen3-14b\", num_instances = 2, rate = 20, num_requests = 20, "
         "lifecycle = \"max=3\" }\n";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  namespace fs = std::filesystem;
  // A script that runs to its limits costs a hundredth of their time.
  blis::lua::divide_script_limits(100);
  const fs::path stage = BLIS_FUZZ_STAGE;
  const fs::path plugins = stage / "lib" / "blis" / "plugins";
  setenv("BLIS_PLUGIN_PATH", plugins.c_str(), /*overwrite=*/0);
  setenv("BLIS_DATA_DIR", (stage / "share" / "blis" / "data").c_str(), /*overwrite=*/0);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(plugins, ec))
    if (entry.path().extension() == ".so") dlopen(entry.path().c_str(), RTLD_NOW | RTLD_NODELETE);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = blis_fuzz::scratch_path("code", ".lua");
  const std::string text = scenario_text(std::string(reinterpret_cast<const char*>(data), size));
  blis_fuzz::write_file(path, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  NullBuffer sink;
  std::ostream out(&sink);
  blis::RunRequest request;
  request.scenario = path;
  // The command line wins over the scenario: these keep every run small.
  // A small KV cache too: the model's own (hundreds of thousands of blocks)
  // would be allocated and cleared on every input, most of the target's time.
  for (const auto& [key, value] :
       {std::pair{"num-instances", "2"}, std::pair{"num-requests", "20"}, std::pair{"horizon", "4s"},
        std::pair{"log", "off"}, std::pair{"total-kv-blocks", "4096"}})
    request.command_line.push_back({key, value, std::string("--") + key, {}});
  blis_fuzz::expect_only_blis_errors([&] { blis::run(request, out); });
  return 0;
}
