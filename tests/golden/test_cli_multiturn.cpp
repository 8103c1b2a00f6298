// Multi-turn sessions are generated lazily, one round at a time. These runs
// were recorded when every session was built whole at its start; the lazy
// generator must reproduce them byte for byte (same arrivals, lengths and
// block hashes, hence the same routing, cache hits and metrics).
#include "catch.hpp"
#include "cli.hpp"

#include <fstream>
#include <iterator>
#include <string>

namespace {

std::string expected(const std::string& name) {
  std::ifstream f(std::string(BLIS_TEST_SOURCE_DIR) + "/tests/golden/expected/multiturn/" + name + ".txt");
  REQUIRE(f);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("multi-turn: lazy sessions reproduce the recorded runs byte for byte", "[cli][workload]") {
  const std::string specs[] = {"tests/golden/multiturn/accumulate-prefix.yaml",
                               "tests/golden/multiturn/windows-horizon.yaml",
                               "tests/golden/multiturn/single-session.yaml",
                               "examples/workload-spec/multiturn-chat-demo.yaml"};
  for (const std::string& spec : specs) {
    for (const char* instances : {"1", "3"}) {
      const std::string name = spec.substr(spec.rfind('/') + 1, spec.size() - spec.rfind('/') - 6);
      INFO(name << " on " << instances << " instances");
      const Result r = run_blis("run --model qwen/qwen3-14b --routing-policy weighted --num-instances " +
                                    std::string(instances) + " --workload-spec " + spec,
                                BLIS_TEST_SOURCE_DIR);
      REQUIRE(r.status == 0);
      CHECK(r.out == expected(name + "-" + instances));
    }
  }
}
