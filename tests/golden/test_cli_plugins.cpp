// Broken and misconfigured plugin libraries through the blis binary: every
// failure is one line on stderr naming the file and the reason, exit status
// 2, nothing on stdout; and --plugin-config reaches the plugin it names.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <blis/plugin.h>

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
      {"abi-major", "built for plugin ABI 2.0, but this blis speaks ABI 1.15"},
      {"short-struct", "lacks post_decode_overhead()"},
      {"create-fails",
       "plugin 'fixture-create-fails': create() failed: license file "
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
  // The fixture claims three minors more than this SDK's.
  CHECK(inspect.out.find("ABI 1." + std::to_string(BLIS_ABI_MINOR + 3) + ", 1 plugin(s)") != std::string::npos);
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
  CHECK(lua.err.find("empty_score") == std::string::npos);  // no warning that a key went unread
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

TEST_CASE("a truncated library in a plugin folder is named, never loaded unless asked for", "[cli][plugin]") {
  blis::test::TempDir dir("blis-truncated");
  const std::string broken = dir.str() + "/libblis-fixture-truncated.so";
  std::filesystem::copy_file(fixture("truncated"), broken);
  // The run names only built-ins: the file is never opened (it used to
  // crash every run with SIGBUS).
  Result run = run_blis(kRun + "--plugin-dir " + dir.str());
  CHECK(run.status == 0);
  CHECK(metric(run.out, "completed_requests") == 5);
  CHECK(run.err.find("truncated") == std::string::npos);
  // The listing has every plugin and one line naming the broken file.
  Result list = run_blis("plugins list --plugin-dir " + dir.str());
  CHECK(list.status == 0);
  CHECK(list.out.find("roofline") != std::string::npos);
  CHECK(std::count(list.out.begin(), list.out.end(), '\n') > 10);
  const auto at = list.out.find("(broken)          " + broken + ": cannot load shared library: the file is truncated");
  REQUIRE(at != std::string::npos);
  CHECK(list.out.find("(broken)", at + 1) == std::string::npos);
  // Asked for a name nobody has, the run says which file could not be opened.
  Result unknown = run_blis(kRun + "--admission-policy nope --plugin-dir " + dir.str());
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("unknown admission policy 'nope'") != std::string::npos);
  CHECK(unknown.err.find("(not opened: " + broken + ": ") != std::string::npos);
}

TEST_CASE("plugins inspect refuses corrupt and misbehaving libraries in one line", "[cli][plugin]") {
  const std::pair<const char*, const char*> broken[] = {
      {"truncated", "cannot load shared library: the file is truncated or corrupt"},
      {"bad-stride", "plugin entry 0 says entries are 2147483647 bytes apart"},
      {"huge-count", "manifest lists 2147483647 plugins"},
      {"null-out", "create() passed a NULL out pointer to host->config_f64(\"fixture.step_us\")"},
      {"nan-scorer", "plugin 'fixture-nan-scorer': score() returned NaN for instance 1"},
      {"admit-error", "plugin 'fixture-admit-error': admit() failed: quota service unreachable"},
  };
  for (const auto& [name, message] : broken) {
    INFO(name);
    check_refused(run_blis("plugins inspect " + fixture(name)), fixture(name), message);
  }
}

TEST_CASE("the same plugin failure exits 2 whether a library or a script failed", "[cli][plugin][lua]") {
  blis::test::TempDir dir("blis-misbehave");
  for (const char* name : {"nan-scorer", "admit-error"})
    std::filesystem::copy_file(fixture(name), dir.str() + "/libblis-fixture-" + name + ".so");
  const std::string lua = std::string(BLIS_TEST_SOURCE_DIR) + "/tests/lua/scripts/";
  const std::string weighted = kRun + "--num-instances 3 --routing-policy weighted --routing-scorers ";
  // Nonsense step times: library and script.
  check_refused(run_blis(kRun + "--latency-model " + fixture("good") + " --plugin-config fixture-good.fixture.mode=negative"),
                fixture("good"), "step_time() returned -5 µs");
  check_refused(run_blis(kRun + "--latency-model " + lua + "bad_latency.lua"), lua + "bad_latency.lua",
                "step_time returned -1 µs");
  // NaN scores: library and script.
  check_refused(run_blis(weighted + "fixture-nan-scorer:1 --plugin-dir " + dir.str()),
                dir.str() + "/libblis-fixture-nan-scorer.so", "score() returned NaN for instance 1");
  check_refused(run_blis(weighted + lua + "nan_score.lua:1"), lua + "nan_score.lua",
                "score returned NaN for instance 2");
  // An admission policy that fails: its own message, not "no message".
  check_refused(run_blis(kRun + "--admission-policy fixture-admit-error --plugin-dir " + dir.str()),
                dir.str() + "/libblis-fixture-admit-error.so", "admit() failed: quota service unreachable");
}

TEST_CASE("plugins list shows the Lua scripts of the script search path", "[cli][plugin][lua]") {
  blis::test::TempDir dir("blis-list-scripts");
  std::filesystem::create_directories(dir.str() + "/admission");
  const std::string mine = dir.write("my_scorer.lua", "summary = 'mine'\nfunction score(n) end\n");
  const std::string gate = dir.write("admission/gate.lua", "function admit() return true end\n");
  const std::string bad = dir.write("broken.lua", "function score(n\n");
  const std::string boom = dir.write("boom.lua", "error('boom')\n");
  Result r = run_blis("plugins list --script-dir " + dir.str());
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.find("routing-scorer    my-scorer                   " + mine + "\n    mine\n") != std::string::npos);
  CHECK(r.out.find("admission-policy  gate                        " + gate + "\n") != std::string::npos);
  CHECK(r.out.find("(broken)          " + bad + ":") != std::string::npos);
  // A script failing at its top level: one line, its traceback left out.
  CHECK(r.out.find("(broken)          " + boom + ":1: boom\n") != std::string::npos);
  CHECK(r.out.find("stack traceback") == std::string::npos);
  // The installed scripts are listed; one that a native plugin shadows says so.
  CHECK(r.out.find("routing-scorer    kv-headroom") != std::string::npos);
  CHECK(r.out.find("(shadowed by ") != std::string::npos);
  // BLIS_SCRIPT_DIR adds directories the same way.
  ::setenv("BLIS_SCRIPT_DIR", dir.str().c_str(), 1);
  Result env = run_blis("plugins list");
  ::unsetenv("BLIS_SCRIPT_DIR");
  CHECK(env.out == r.out);
  // A folder that does not exist is refused, as `blis run` refuses it.
  for (const char* flag : {"--script-dir", "--plugin-dir"}) {
    Result missing = run_blis(std::string("plugins list ") + flag + " " + dir.str() + "/nope");
    CHECK(missing.status == 2);
    CHECK(missing.out.empty());
    CHECK(missing.err.find(dir.str() + "/nope") != std::string::npos);
  }
}

TEST_CASE("plugins inspect checks a Lua script like a library", "[cli][plugin][lua]") {
  blis::test::TempDir dir("blis-inspect-lua");
  std::filesystem::create_directories(dir.str() + "/admission");
  const std::string lua = std::string(BLIS_TEST_SOURCE_DIR) + "/tests/lua/scripts/";
  Result good = run_blis("plugins inspect " + lua + "request_scorer.lua");
  CHECK(good.status == 0);
  CHECK(good.out.rfind(lua + "request_scorer.lua: Lua script\n  routing-scorer    request-scorer", 0) == 0);
  // Defining two entry points, its folder says which kind it is.
  const std::string both = dir.write("admission/both.lua",
                                     "function score(n) end\nfunction admit() return false, 'no' end\n");
  Result folder = run_blis("plugins inspect " + both);
  CHECK(folder.status == 0);
  CHECK(folder.out.find("admission-policy  both") != std::string::npos);
  // Failures carry script:line and exit 2, as a library's do.
  Result runtime = run_blis("plugins inspect " + lua + "runtime_error.lua");
  CHECK(runtime.status == 2);
  CHECK(runtime.out.empty());
  CHECK(runtime.err.rfind("blis: error: " + lua + "runtime_error.lua:7: ", 0) == 0);
  Result syntax = run_blis("plugins inspect " + lua + "syntax_error.lua");
  CHECK(syntax.status == 2);
  CHECK(syntax.err.find("syntax_error.lua:") != std::string::npos);
  Result latency = run_blis("plugins inspect " + lua + "bad_latency.lua");
  CHECK(latency.status == 2);
  CHECK(latency.err.find("bad_latency.lua: step_time returned -1 µs") != std::string::npos);
}
