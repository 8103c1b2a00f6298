// Hostile inputs that once ran away or printed a wrong number (issue 30,
// findings 1, 5, 8, 11 and 12): each reproducer now ends at once with exit 2
// and one line naming its origin, or with the right result.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace {

using blis::test::TempDir;
namespace fs = std::filesystem;

const std::string kModel = "--model qwen/qwen3-14b ";

// The sweep of finding 1: 8 keys x 30 values, 6.56e11 configurations.
std::string sweep_bomb_toml() {
  std::string text = "model = \"qwen/qwen3-14b\"\n[sweep]\n";
  for (const char* key : {"rate", "num-requests", "seed", "prompt-tokens", "output-tokens", "num-instances",
                          "max-num-running-reqs", "max-num-scheduled-tokens"}) {
    text += std::string(key) + " = [";
    for (int i = 1; i <= 30; ++i) text += (i > 1 ? ", " : "") + std::to_string(i);
    text += "]\n";
  }
  return text;
}

// "timeout N": N seconds, times BLIS_TEST_SLOWDOWN under the sanitizers.
std::string within(int seconds) {
  double f = 1;
  if (const char* s = std::getenv("BLIS_TEST_SLOWDOWN")) f = std::max(1.0, std::atof(s));
  return "timeout " + std::to_string(static_cast<int>(seconds * f));
}

// The error line of a refusal: exit 2, nothing on stdout, one line.
void check_one_line(const Result& r, const std::string& message) {
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(message) != std::string::npos);
  const auto at = r.err.find("blis: error:");
  REQUIRE(at != std::string::npos);
  CHECK(r.err.find('\n', at) == r.err.size() - 1);
}

}  // namespace

TEST_CASE("a sweep too large to hold is refused with its count before anything is allocated", "[hostile]") {
  TempDir dir;
  // Under a 4 GB address-space limit (not under ASan, which maps terabytes of
  // shadow memory): the refusal allocates nothing large.
  const bool sanitized = std::getenv("BLIS_TEST_SANITIZED") != nullptr;
  check_one_line(run_blis("run " + dir.write("bomb.toml", sweep_bomb_toml()), "",
                          sanitized ? within(10) : within(10) + " prlimit --as=4000000000"),
                 "the sweep has 656100000000 configurations (30 x 30 x 30 x 30 x 30 x 30 x 30 x 30), more than the "
                 "100000 a sweep may hold");
  check_one_line(run_blis("run " + dir.write("square.toml", "model = \"qwen/qwen3-14b\"\n[sweep]\nrate = [" +
                                                                 [] {
                                                                   std::string v;
                                                                   for (int i = 1; i <= 1000; ++i)
                                                                     v += (i > 1 ? ", " : "") + std::to_string(i);
                                                                   return v + "]\nseed = [" + v + "]\n";
                                                                 }()),
                          "", within(10)),
                 "square.toml:2:1: the sweep has 1000000 configurations (1000 x 1000)");
  check_one_line(run_blis("run " + dir.write("bomb.lua", R"(
local values = {}
for i = 1, 400 do values[i] = i end
return { model = "qwen/qwen3-14b", sweep = { rate = values, seed = values, num_requests = values } })"),
                          "", within(10)),
                 "bomb.lua: sweep: the sweep has 64000000 configurations (400 x 400 x 400)");
}

TEST_CASE("a slow or rate factor is bounded, so a slowed instance never becomes faster", "[hostile]") {
  const std::string base = "run " + kModel + "--num-instances 2 --rate 20 --num-requests 40 ";
  check_one_line(run_blis(base + "--event 'at=1s action=slow instance=0 factor=1e20'"),
                 "factor=1e+20 is not a slowdown in [0.001, 1000]");
  check_one_line(run_blis(base + "--event 'at=1s action=slow instance=0 factor=1e15'"),
                 "is not a slowdown in [0.001, 1000]");
  check_one_line(run_blis(base + "--event 'at=1s action=rate factor=1e12'"), "is not a rate factor");
  // From Lua code, the same rule, at the script's line.
  TempDir dir;
  const Result lua = run_blis("run " + dir.write("slow.lua", R"(
at(1, function() blis.slow{instance = 0, factor = 1e12} end)
return { model = "qwen/qwen3-14b", num_instances = 2, rate = 20, num_requests = 40 })"));
  INFO(lua.err);
  CHECK(lua.status == 2);
  CHECK(lua.err.find("is not a slowdown in [0.001, 1000]") != std::string::npos);
  CHECK(lua.err.find("internal error") == std::string::npos);
  // The largest factor still slows: its instance's requests take longer than the other's.
  const Result ok = run_blis(base + "--event 'at=0 action=slow instance=0 factor=1000' --format json");
  REQUIRE(ok.status == 0);
}

TEST_CASE("a trace row at the top of the time range is refused, not lost", "[hostile]") {
  TempDir dir;
  const std::string trace =
      dir.write("t.csv", "arrival_time_us,input_tokens,output_tokens\n0,10,5\n9223372036854775807,10,5\n");
  check_one_line(run_blis("run " + kModel + "--workload-trace " + trace),
                 "t.csv:3: arrival_time_us: 9223372036854775807 is out of range [0, 1000000000000000]");
}

TEST_CASE("messages name the real cause", "[hostile]") {
  // Every instance failed by an event: the requests were not rejected by admission.
  const Result failed = run_blis("run " + kModel + "--rate 10 --num-requests 20 --event 'at=0 action=fail instance=0'");
  INFO(failed.err);
  CHECK(failed.status == 0);
  CHECK(failed.err.find("all 20 requests rejected because no instance took traffic") != std::string::npos);
  CHECK(failed.err.find("admission policy") == std::string::npos);
  // A negative request count in a spec is named as such.
  TempDir dir;
  const std::string spec = dir.write("neg.yaml", R"(version: "2"
seed: 42
aggregate_rate: 10
num_requests: -5
clients:
  - id: a
    rate_fraction: 1.0
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 64}}
    output_distribution: {type: constant, params: {value: 8}}
)");
  check_one_line(run_blis("run " + kModel + "--workload-spec " + spec), "the spec's num_requests is -5");
}

TEST_CASE("device paths are written through, never replaced or given a journal", "[hostile]") {
  TempDir dir;
  // /dev/stdout redirected to a file: the folder /dev need not be writable,
  // so a user without rights on /dev writes its results there too.
  std::string as_nobody = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  // As root, the user without rights on /dev is nobody, where nobody can reach the binary.
  if (!as_nobody.empty() && run_shell(as_nobody + "test -x " + BLIS_TEST_STAGE + "/bin/blis").status != 0)
    as_nobody.clear();
  fs::permissions(dir.str(), fs::perms::all);
  const std::string out = dir.str() + "/out.txt";
  {
    // The shell that redirects runs as the user, so the file is the user's.
    const Result r = run_shell("cd / && " + as_nobody + "sh -c '" + BLIS_TEST_STAGE + "/bin/blis run " + kModel +
                               "--num-requests 5 --results-path /dev/stdout > " + out + "'");
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.err.find("not writable") == std::string::npos);
  }
  // A sweep's rows to a device: no journal beside it (as root, /dev/full.journal once stayed behind).
  const std::string sweep = dir.write("s.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\n[sweep]\nrate = [1, 2]\n");
  const Result full = run_blis("run " + sweep + " --rows-json /dev/full");
  INFO(full.err);
  CHECK(full.status == 1);
  CHECK_FALSE(fs::exists("/dev/full.journal"));
  const Result resume = run_blis("run " + sweep + " --rows-json /dev/null --resume");
  INFO(resume.err);
  CHECK(resume.status == 2);
  CHECK(resume.err.find("naming a regular file") != std::string::npos);
}

TEST_CASE("blis plan ends with an answer or a clear refusal whatever --duration or --rate", "[hostile][plan]") {
  // Every first-trial length from 1 µs to 10 min: trials too short to judge
  // are lengthened, never counted as misses, so the answer is a count.
  for (const char* d : {"1us", "1ms", "1s", "5s", "10s", "20s", "10m"}) {
    const Result r = run_blis(std::string("plan ") + kModel + "--rate 20 --jobs 2 --quiet --duration " + d, "",
                              within(30));
    INFO("--duration " << d << "\nstderr: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("minimum instances: 2 ") != std::string::npos);
  }
  // A rate no count up to --max-instances can serve is refused at once,
  // with the count it would need: no answer, exit status 3.
  for (const char* rate : {"1e5", "1e6", "1e9", "1e12"}) {
    const Result r = run_blis(std::string("plan ") + kModel + "--slo 'ttft_p99<500ms' --quiet --rate " + rate, "",
                              within(30));
    INFO("--rate " << rate << "\nstderr: " << r.err);
    CHECK(r.status == 3);
    CHECK(r.out.find("minimum instances: none up to 512 — one instance completes 16.9 requests/s when saturated, so ") !=
          std::string::npos);
    CHECK(r.out.find("more than --max-instances 512") != std::string::npos);
  }
}

// Found by fuzz_lua_callbacks (2026-11-27): Lua strings were read as C
// strings, so every("25\0...vms", f) was every 25 µs (the text up to the NUL)
// and a 60 s run made 2.4 million callbacks. Strings are read whole now.
TEST_CASE("a Lua string with a NUL in it is read whole, not cut at the NUL", "[hostile][lua]") {
  TempDir dir;
  std::string code = "every(\"25";
  code += std::string(3, '\0');
  code += "vms\", function(c) blis.slow { instance = 0, factor = 1 } end)\n"
          "return { model = \"qwen/qwen3-14b\", num_instances = 2, rate = 20, num_requests = 20 }\n";
  const std::string path = dir.write("nul.lua", code);
  const Result r = check_refused("run " + path + " --horizon 60s", "is not a duration");
  CHECK(r.err.find("'25\\0\\0\\0vms'") != std::string::npos);
  // A setting's text too: the model name is not cut to a bundled one.
  std::string settings = "return { model = \"qwen/qwen3-14b";
  settings += std::string(1, '\0');
  settings += "x\", num_requests = 5 }\n";
  check_refused("run " + dir.write("model.lua", settings), "unknown model");
}
