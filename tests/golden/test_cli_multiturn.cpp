// Multi-turn sessions are generated lazily, one round at a time. These runs
// were recorded when every session was built whole at its start; the lazy
// generator must reproduce them byte for byte (same arrivals, lengths and
// block hashes, hence the same routing, cache hits and metrics).
#include "catch.hpp"
#include "cli.hpp"

#include <cstdlib>
#include "temp_dir.hpp"

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

TEST_CASE("multi-turn: memory follows the rounds in flight, not rounds times context", "[cli][workload]") {
  // 2000 accumulating rounds per session, 40 requests: built whole, the
  // sessions' rounds held about 220 MB of block hashes; lazily a few MB.
  blis::test::TempDir dir("blis-multiturn");
  const std::string spec = dir.write("rounds.yaml", R"(version: "2"
seed: 42
aggregate_rate: 10.0
num_requests: 40
clients:
  - id: long-chat
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 30, min: 32, max: 512}}
    output_distribution: {type: gaussian, params: {mean: 64, std_dev: 20, min: 16, max: 256}}
    reasoning:
      multi_turn: {max_rounds: 2000, think_time_us: 500000, context_growth: accumulate}
)");
  // AddressSanitizer maps terabytes of shadow memory, which no data limit
  // admits: the sanitizer suite (BLIS_TEST_SANITIZED) runs it unbounded.
  const bool sanitized = std::getenv("BLIS_TEST_SANITIZED") != nullptr;
  const Result r = run_blis("run --model qwen/qwen3-14b --max-model-len 0 --workload-spec " + spec, "",
                            sanitized ? "" : "prlimit --data=64000000");
  REQUIRE(r.status == 0);
  CHECK(metric(r.out, "injected_requests") == 40);
  CHECK(metric(r.out, "completed_requests") == 40);
}
