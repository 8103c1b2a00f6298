// `blis run SCENARIO`: scenario files against the same flags, precedence,
// sweeps with --jobs, rows files, and errors.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <string>

using blis::test::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

constexpr const char* kSweep = R"(model = "qwen/qwen3-14b"
[workload]
rate = 100
num-requests = 300
[sweep]
num-instances = [1, 2, 4]
)";

}  // namespace

TEST_CASE("a one-configuration scenario prints what the same flags print", "[cli][scenario]") {
  TempDir dir;
  const std::string toml = dir.write("one.toml", R"(model = "qwen/qwen3-14b"
[workload]
rate = 20
num_requests = 200
[cluster]
num-instances = 2
routing-policy = "weighted"
)");
  const std::string lua = dir.write("one.lua", R"(
return { model = "qwen/qwen3-14b", rate = 20, num_requests = 200,
         cluster = { num_instances = 2, routing_policy = "weighted" } })");
  const auto flags = run_blis("run --model qwen/qwen3-14b --rate 20 --num-requests 200 --num-instances 2 "
                          "--routing-policy weighted");
  REQUIRE(flags.status == 0);
  CHECK(run_blis("run " + toml).out == flags.out);
  CHECK(run_blis("run " + lua).out == flags.out);

  // Flags on the command line win over the file.
  const auto five = run_blis("run --model qwen/qwen3-14b --rate 5 --num-requests 200 --num-instances 2 "
                         "--routing-policy weighted");
  CHECK(run_blis("run " + toml + " --rate 5").out == five.out);
  CHECK(five.out != flags.out);
}

TEST_CASE("a sweep prints one row per configuration, identical with --jobs 2", "[cli][scenario]") {
  TempDir dir;
  const std::string path = dir.write("sweep.toml", kSweep);
  const std::string csv = dir.str() + "/rows.csv", json = dir.str() + "/rows.json";
  const auto serial = run_blis("run " + path + " --jobs 1");
  const auto parallel = run_blis("run " + path + " --jobs 2 --rows-csv " + csv + " --rows-json " + json);
  REQUIRE(serial.status == 0);
  REQUIRE(parallel.status == 0);
  CHECK(parallel.out == serial.out);
  CHECK(count_of(serial.out, "\"num_instances\": ") == 3);
  CHECK(serial.out.rfind("{\n  \"scenario\": ", 0) == 0);
  // Progress on stderr, one line per configuration.
  CHECK(count_of(serial.err, "/3] num_instances=") == 3);
  // The files: the same report, and a CSV with a header and three rows.
  CHECK(slurp(json) == serial.out);
  const std::string table = slurp(csv);
  CHECK(table.rfind("num_instances,completed_requests,", 0) == 0);
  CHECK(count_of(table, "\n") == 4);
  CHECK(table.find("\n4,300,") != std::string::npos);
  // The rows agree with single runs.
  const auto four = run_blis("run --model qwen/qwen3-14b --rate 100 --num-requests 300 --num-instances 4");
  const std::string p99 = std::to_string(metric(four.out, "ttft_p99_ms")).substr(0, 6);
  CHECK(serial.out.find("\"ttft_p99_ms\": " + p99) != std::string::npos);
}

TEST_CASE("scenario errors: one line naming the file and the setting, exit 2, no output", "[cli][scenario]") {
  TempDir dir;
  auto check_error = [&](const std::string& name, const std::string& text, const std::string& extra,
                         const std::string& expected) {
    const std::string path = dir.write(name, text);
    const auto r = run_blis("run " + path + " " + extra);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(expected) != std::string::npos);
    CHECK(r.err.find("blis: error: ") != std::string::npos);
  };
  check_error("unknown.toml", "model = \"qwen/qwen3-14b\"\nnum-gpus = 3\n", "",
              "unknown.toml:2:12: unknown setting 'num-gpus'");
  check_error("badvalue.toml", "model = \"qwen/qwen3-14b\"\nrate = \"fast\"\n", "",
              "badvalue.toml:2:8: rate: invalid value 'fast': expected a number");
  check_error("axis.toml", kSweep, "--num-instances 2", "--num-instances: is varied by the scenario");
  check_error("results.toml", "results-path = \"x.json\"\n" + std::string(kSweep), "",
              "results-path names one file");
  check_error("broken.lua", "return {\n  model = \"qwen/qwen3-14b\",\n  rate = nil + 1,\n}\n", "",
              "broken.lua:3: attempt to perform arithmetic");
  check_error("search.lua",
              "return { model = \"qwen/qwen3-14b\", num_requests = 50,\n"
              "  search = function(sim) return sim.run{ rate = -2 } end }\n",
              "", "search.lua: rate: must be a finite value > 0, got -2");
  check_error("scenario.yaml", "model: x\n", "", "a scenario file ends in .toml or .lua");
}

TEST_CASE("rows files without a scenario are refused", "[cli][scenario]") {
  const auto r = run_blis("run --model qwen/qwen3-14b --rows-csv /tmp/never.csv");
  CHECK(r.status == 2);
  CHECK(r.err.find("--rows-csv: needs a scenario file") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists("/tmp/never.csv"));
}

TEST_CASE("a failing configuration leaves no rows file", "[cli][scenario]") {
  TempDir dir;
  const std::string path = dir.write("fail.toml", R"(model = "qwen/qwen3-14b"
num-requests = 50
[[sweep]]
rate = 5
[[sweep]]
rate = -1
)");
  const std::string csv = dir.str() + "/rows.csv";
  const auto r = run_blis("run " + path + " --rows-csv " + csv);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("fail.toml:6:8: rate: must be a finite value > 0, got -1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(csv));
}

TEST_CASE("a scenario's plugin-config table reaches the plugin", "[cli][scenario][plugin]") {
  TempDir dir;
  const std::string lib = std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-needs-config.so";
  // The library comes from the command line (a scenario may not load native
  // code); the scenario configures it.
  const std::string path = dir.write("plugin.toml", "model = \"qwen/qwen3-14b\"\nnum-requests = 5\nrate = 2\n"
                                                    "[plugin-config.fixture-needs-config]\n"
                                                    "\"fixture.scale\" = 2\n");
  const auto from_file = run_blis("run " + path + " --latency-model " + lib);
  const auto from_flags = run_blis("run --model qwen/qwen3-14b --num-requests 5 --rate 2 --latency-model " + lib +
                                   " --plugin-config fixture-needs-config.fixture.scale=2");
  REQUIRE(from_flags.status == 0);
  CHECK(from_file.status == 0);
  CHECK(from_file.out == from_flags.out);
}

TEST_CASE("a Lua scorer beside a scenario is found and configured by its name", "[cli][scenario][lua]") {
  TempDir dir;
  dir.write("pin.lua", R"(-- sends every request to instance `target`
local target = 0
function init(config) target = config.target end
function score(n) for i = 0, n - 1 do scores[i] = (i == target) and 1 or 0 end end
)");
  const std::string path = dir.write("pinned.lua", R"(
return {
  model = "qwen/qwen3-14b", num_requests = 40, rate = 20,
  cluster = { num_instances = 4, routing_policy = "weighted", routing_scorers = "pin.lua:1" },
  plugin_config = { ["pin.lua"] = { target = 2 } },
})");
  // Run from elsewhere: the script is found beside the scenario.
  const auto r = run_blis("run " + path, "/");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("\"instance_id\": \"instance_2\"") != std::string::npos);
  CHECK(r.out.find("\"instance_id\": \"instance_0\"") == std::string::npos);
  CHECK(metric(r.out, "completed_requests", "instance_2") == 40);
}

TEST_CASE("a scenario file may not load native code or write outside the current directory", "[cli][scenario]") {
  TempDir dir;
  const std::string lib = std::string(BLIS_TEST_FIXTURES) + "/libblis-fixture-good.so";
  const std::pair<std::string, std::string> cases[] = {
      {dir.write("lib.toml", "model = \"qwen/qwen3-14b\"\nlatency-model = \"" + lib + "\"\n"),
       "lib.toml:2:17: latency-model: a scenario file may not load native code"},
      {dir.write("dir.lua", "return { model = 'qwen/qwen3-14b', plugin_dir = '/tmp' }\n"),
       "dir.lua: plugin-dir: a scenario file may not load native code"},
      {dir.write("out.lua", "return { model = 'qwen/qwen3-14b', results_path = '/tmp/stolen.json' }\n"),
       "out.lua: results-path: a scenario file writes only below the current directory"},
      {dir.write("up.toml", "model = \"qwen/qwen3-14b\"\nrows-csv = \"../rows.csv\"\n[sweep]\nrate = [1, 2]\n"),
       "rows-csv: a scenario file writes only below the current directory"},
  };
  for (const auto& [path, message] : cases) check_refused("run " + path, message, dir.str());
  CHECK_FALSE(std::filesystem::exists("/tmp/stolen.json"));
  // Unless the person running it says the file is trusted (a scenario cannot say it itself).
  CHECK(run_blis("run " + cases[0].first + " --num-requests 5 --trust-scenario").status == 0);
  const Result self = run_blis("run " + dir.write("self.toml", "trust-scenario = true\n"));
  CHECK(self.err.find("cannot grant itself rights") != std::string::npos);
}
