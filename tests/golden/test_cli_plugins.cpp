// Broken and misconfigured plugin libraries through the blis binary: every
// failure is one line on stderr naming the file and the reason, exit status
// 2, nothing on stdout; and --plugin-config reaches the plugin it names.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>

namespace {

std::string fixture(const std::string& name) {
  return std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-" + name + ".so";
}

const std::string kRun = "run --model qwen/qwen3-14b --num-requests 5 --rate 2 ";

// One line naming the file (when given) and containing `message`; exit 2; no stdout.
void check_refused(const Result& r, const std::string& file, const std::string& message) {
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("blis: error: ", 0) == 0);
  if (!file.empty()) CHECK(r.err.find(file + ": ") != std::string::npos);
  CHECK(r.err.find(message) != std::string::npos);
}

}  // namespace

TEST_CASE("blis run refuses broken plugin libraries in one line", "[cli][plugin]") {
  const std::pair<const char*, const char*> broken[] = {
      {"missing-symbol", "entry symbol 'blis_plugin_manifest' is missing"},
      {"abi-major", "built for plugin ABI 2.0, but this blis speaks ABI 1.1"},
      {"short-struct", "lacks post_decode_overhead()"},
      {"create-fails", "plugin 'fixture-create-fails': create() failed: license file "
                       "/opt/vendor/license.key not found"},
      {"throws", "plugin 'fixture-throws': step_time() failed: table index 42 out of range"},
      {"raw-throw", "plugin 'fixture-raw-throw': step_time() threw a C++ exception across the C ABI"},
  };
  for (const auto& [name, message] : broken) {
    INFO(name);
    check_refused(run_blis(kRun + "--latency-model " + fixture(name)), fixture(name), message);
  }
}

TEST_CASE("blis run refuses a plugin name that is already taken, naming both files", "[cli][plugin]") {
  blis::test::TempDir dir("blis-dup");
  std::filesystem::copy_file(fixture("good"), dir.str() + "/libblis-fixture-good.so");
  check_refused(run_blis(kRun + "--plugin-dir " + dir.str() + " --latency-model " + fixture("duplicate")),
                fixture("duplicate"),
                "latency-model 'fixture-good' is already registered by " + dir.str() +
                    "/libblis-fixture-good.so");
}

TEST_CASE("a plugin built for a newer minor ABI is inspected and run", "[cli][plugin]") {
  Result inspect = run_blis("plugins inspect " + fixture("newer-minor"));
  CHECK(inspect.status == 0);
  CHECK(inspect.out.find("ABI 1.4, 1 plugin(s)") != std::string::npos);
  CHECK(inspect.out.find("latency-model     fixture-future     9.0.0") != std::string::npos);
  Result run = run_blis(kRun + "--latency-model " + fixture("newer-minor"));
  CHECK(run.status == 0);
  CHECK(metric(run.out, "completed_requests") == 5);
}

TEST_CASE("nonsense step times stop the run, naming the plugin and the batch", "[cli][plugin]") {
  const std::pair<const char*, const char*> modes[] = {
      {"nan", "returned nan µs"}, {"negative", "returned -5 µs"}, {"absurd", "returned 1e+300 µs"}};
  for (const auto& [mode, value] : modes) {
    INFO(mode);
    Result r = run_blis(kRun + "--latency-model " + fixture("good") +
                    " --plugin-config fixture-good.fixture.mode=" + mode);
    check_refused(r, fixture("good"), std::string("plugin 'fixture-good': step_time() ") + value +
                                          " for a batch of 1 requests (1 prefill, 0 decode, ");
    CHECK(r.err.find("expected a finite time between 0 and 1e+12 µs") != std::string::npos);
  }
}

TEST_CASE("plugin config from the command line reaches the plugin it names", "[cli][plugin]") {
  Result base = run_blis(kRun + "--latency-model " + fixture("good"));
  Result slow = run_blis(kRun + "--latency-model " + fixture("good") +
                     " --plugin-config fixture-good.fixture.step_us=4000");
  REQUIRE(base.status == 0);
  REQUIRE(slow.status == 0);
  // A constant step time: the mean ITL is that time (plus nothing else).
  CHECK(metric(base.out, "itl_mean_ms") == Approx(1.0));
  CHECK(metric(slow.out, "itl_mean_ms") == Approx(4.0));
  // A Lua script is named as on the command line, ".lua" included; it reads every key.
  Result lua = run_blis(kRun + "--num-instances 2 --routing-policy weighted "
                                "--routing-scorers scorers/kv_headroom.lua:1 "
                                "--plugin-config scorers/kv_headroom.lua.empty_score=0.5");
  CHECK(lua.status == 0);
  CHECK(lua.err.empty());
}

TEST_CASE("plugin config errors name the plugin and the key", "[cli][plugin]") {
  const std::string needs = kRun + "--latency-model " + fixture("needs-config");
  const std::string who = fixture("needs-config");
  check_refused(run_blis(needs), who,
                "plugin 'fixture-needs-config': create() failed: config key 'fixture.scale' is missing");
  check_refused(run_blis(needs + " --plugin-config fixture-needs-config.fixture.scale=big"), who,
                "plugin 'fixture-needs-config': create() failed: config key 'fixture.scale' must be "
                "a number, not a string");
  check_refused(run_blis(needs + " --plugin-config fixture-needs-config.fixture.scale=2"
                             " --plugin-config fixture-needs-config.fixture.steps=1,2"),
                who, "config key 'fixture.steps' must be an integer, not an array");
  check_refused(run_blis(needs + " --plugin-config fixture-needs.fixture.scale=2"), "",
                "--plugin-config fixture-needs.fixture.scale=2: 'fixture-needs' is not a plugin of "
                "this run; its plugins are fixture-needs-config, always-admit");
  check_refused(run_blis(needs + " --plugin-config fixture-needs-config"), "",
                "--plugin-config: expected NAME.KEY=VALUE");
  Result ok = run_blis(needs + " --plugin-config fixture-needs-config.fixture.scale=2");
  CHECK(ok.status == 0);
  CHECK(metric(ok.out, "itl_mean_ms") == Approx(2.0));
}

TEST_CASE("a plugin config key the plugin never reads is a warning", "[cli][plugin]") {
  Result r = run_blis(kRun + "--latency-model " + fixture("good") +
                  " --plugin-config fixture-good.fixture.step_usec=10");
  CHECK(r.status == 0);
  CHECK(r.err.find("plugin 'fixture-good' never read the key 'fixture.step_usec'") != std::string::npos);
}
