// Lua scripts through the blis binary: scripts named by path or by name
// (--script-dir, BLIS_SCRIPT_DIR, the installed scripts), the Lua twins of
// the built-ins giving byte-identical output, the SLO guard, and scripts that
// misbehave: exit 2, a message naming the script, nothing on stdout.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>


namespace {

const std::string kScripts = std::string(BLIS_TEST_SOURCE_DIR) + "/scripts/";

}  // namespace

TEST_CASE("Lua scorers named on the command line route like the native ones", "[cli][lua]") {
  const std::string base = "run --model qwen/qwen3-14b --num-instances 4 --rate 100 --num-requests 500 "
                           "--routing-policy weighted --routing-scorers ";
  Result native = run_blis(base + "\"queue-depth:2,kv-utilization:1\"");
  Result lua = run_blis(base + "\"" + kScripts + "scorers/queue_depth.lua:2," + kScripts +
                           "scorers/kv_utilization.lua:1\"");
  REQUIRE(native.status == 0);
  CHECK(lua.status == 0);
  CHECK(lua.out == native.out);
  // Paths are also found relative to the installed scripts directory.
  Result installed = run_blis(base + "scorers/load_balance.lua:1");
  Result native_lb = run_blis(base + "load-balance:1");
  CHECK(installed.status == 0);
  CHECK(installed.out == native_lb.out);
}

TEST_CASE("the default scorer profile and its Lua twins print the same report", "[cli][lua]") {
  // 8 instances, 3000 requests behind one shared 512-token prefix: the
  // prefix index matters and keeps learning for the whole run.
  const std::string base = "run --model qwen/qwen3-14b --num-instances 8 --rate 150 --num-requests 3000 "
                           "--prefix-tokens 512 --routing-policy weighted --trace-level decisions "
                           "--summarize-trace --routing-scorers ";
  Result native = run_blis(base + "prefix-affinity:3,queue-depth:2,kv-utilization:2");
  Result lua = run_blis(base + "scorers/prefix_affinity.lua:3,scorers/queue_depth.lua:2,"
                                  "scorers/kv_utilization.lua:2");
  REQUIRE(native.status == 0);
  REQUIRE(lua.status == 0);
  CHECK(lua.out == native.out);
  CHECK(native.out.find("Target Distribution:") != std::string::npos);
  Result alone = run_blis(base + "scorers/prefix_affinity.lua:1");
  CHECK(alone.out == run_blis(base + "prefix-affinity:1").out);
}

TEST_CASE("scripts are found by name: --script-dir, BLIS_SCRIPT_DIR, installed", "[cli][lua]") {
  blis::test::TempDir dir;
  dir.write("my_scorer.lua", "function score(n) for i = 0, n - 1 do scores[i] = 1 - i / n end end\n");
  const std::string base = "run --model qwen/qwen3-14b --num-instances 3 --rate 50 --num-requests 100 "
                           "--routing-policy weighted --routing-scorers ";
  Result unknown = run_blis(base + "my-scorer:1");
  CHECK(unknown.status == 2);
  CHECK(unknown.out.empty());
  // The list of valid names has the plugins and the installed scripts.
  CHECK(unknown.err.find("unknown scorer \"my-scorer\"; valid: active-requests, kv-headroom, "
                         "kv-utilization, load-aware, load-balance, lora-affinity, no-hit-lru, precise-prefix-cache, "
                         "prefix-affinity, queue-depth, running-requests, vllm-dp") != std::string::npos);
  Result found = run_blis("--script-dir " + dir.str() + " " + base + "my-scorer:1");
  CHECK(found.status == 2);  // --script-dir belongs to `run`
  found = run_blis(base + "my-scorer:1 --script-dir " + dir.str());
  REQUIRE(found.status == 0);
  // Scores 1, 2/3, 1/3: the first instance always wins.
  CHECK(metric(found.out, "completed_requests", "instance_0") == 100);
  ::setenv("BLIS_SCRIPT_DIR", dir.str().c_str(), 1);
  Result from_env = run_blis(base + "my-scorer:1");
  ::unsetenv("BLIS_SCRIPT_DIR");
  CHECK(from_env.status == 0);
  CHECK(from_env.out == found.out);
  // An installed script by name; the native plugin wins a shared name.
  CHECK(run_blis(base + "kv-headroom:1").status == 0);
  CHECK(run_blis(base + "queue-depth:1 --script-dir " + dir.str()).out ==
        run_blis(base + "queue-depth:1").out);
}

TEST_CASE("the Lua blackbox gets the model's coefficients and matches the built-in", "[cli][lua]") {
  for (const std::string args : {
           "--model qwen/qwen3-14b --rate 10 --num-requests 300",
           "--model qwen/qwen3-14b --num-instances 4 --rate 60 --num-requests 2000 --routing-policy weighted",
           "--model qwen/qwen3-14b --rate 20 --num-requests 400 --alpha-coeffs 100,1,50 --beta-coeffs 5000,10,20",
       }) {
    INFO(args);
    Result native = run_blis("run " + args + " --latency-model blackbox");
    Result lua = run_blis("run " + args + " --latency-model latency/blackbox.lua");
    REQUIRE(native.status == 0);
    CHECK(lua.status == 0);
    CHECK(lua.out == native.out);
  }
  // A script with no coefficients for a model the table does not know.
  Result none = run_blis("run --model acme/unknown-7b --latency-model latency/blackbox.lua "
                            "--num-requests 5");
  CHECK(none.status == 2);
  CHECK(none.err.find("blackbox.lua") != std::string::npos);
  CHECK(none.out.empty());
}

TEST_CASE("slo-guard admits everything under light load and sheds overload", "[cli][lua]") {
  const std::string light = "run --model qwen/qwen3-14b --num-instances 2 --rate 10 --num-requests 200";
  Result all = run_blis(light);
  Result guarded = run_blis(light + " --admission-policy slo-guard");
  REQUIRE(guarded.status == 0);
  CHECK(guarded.out == all.out);

  const std::string heavy = "run --model qwen/qwen3-14b --num-instances 2 --rate 100 --num-requests 3000 "
                            "--routing-policy least-loaded";
  Result flooded = run_blis(heavy);
  Result shed = run_blis(heavy + " --admission-policy slo-guard");
  REQUIRE(flooded.status == 0);
  REQUIRE(shed.status == 0);
  CHECK(flooded.out.find("Rejected Requests") == std::string::npos);
  const auto at = shed.out.find("Rejected Requests: ");
  REQUIRE(at != std::string::npos);
  const int64_t rejected = std::stoll(shed.out.substr(at + 19));
  CHECK(rejected > 0);
  CHECK(metric(shed.out, "completed_requests") + rejected == 3000);
  CHECK(metric(shed.out, "ttft_p99_ms") < metric(flooded.out, "ttft_p99_ms") / 5);
}

TEST_CASE("a misbehaving Lua scorer is reported, not obeyed: exit 2, nothing on stdout", "[cli][lua]") {
  blis::test::TempDir dir;
  struct Case {
    const char* file;
    const char* text;
    std::string message;
  };
  const Case cases[] = {
      {"bad.lua", "-- reads a field of nil on line 3\nfunction score(n)\n  local x = nil; return x.y\nend\n",
       ":3: attempt to index local 'x'"},
      {"nan.lua", "function score(n) for i = 0, n - 1 do scores[i] = 0 / 0 end end\n",
       ": score returned NaN for instance 0"},
      {"unset.lua", "function score(n) for i = 0, n - 2 do scores[i] = 1 end end\n",
       ": score returned NaN for instance 1"},
      {"count.lua", "function score(n) for i = 0, n - 1 do scores[i] = 1 end return 1 end\n",
       ": score(2) returned 1; it must return nothing or the number of scores it wrote, 2"},
      {"overrun.lua", "function score(n) for i = 0, n do scores[i] = 1 end end\n",
       ":1: scores[2] is out of range: valid indices are 0 .. 1"},
  };
  const std::string base = "run --model qwen/qwen3-14b --num-instances 2 --num-requests 5 "
                           "--routing-policy weighted --routing-scorers ";
  for (const auto& c : cases) {
    const std::string path = dir.write(c.file, c.text);
    Result r = run_blis(base + path + ":1");
    INFO(c.file << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("blis: error: " + path + c.message) != std::string::npos);
  }
  Result missing = run_blis(base + "/nonexistent/s.lua:1");
  CHECK(missing.status == 2);
  CHECK(missing.err.find("/nonexistent/s.lua: no such script") != std::string::npos);
  Result wrong_kind = run_blis(base + "admission/slo_guard.lua:1");
  CHECK(wrong_kind.status == 2);
  CHECK(wrong_kind.err.find("slo_guard.lua: is an admission-policy script") != std::string::npos);
}

TEST_CASE("docs/lua.md: every snippet loads and every command runs", "[cli][lua][docs]") {
  // Snippets whose first line is "-- my-scripts/<file>" are saved under a
  // scratch folder that stands in for my-scripts; each `blis run` line of a
  // sh block then runs from the repository's root.
  std::ifstream f(std::string(BLIS_TEST_SOURCE_DIR) + "/docs/lua.md");
  REQUIRE(f.good());
  blis::test::TempDir dir;
  std::vector<std::string> commands;
  std::string line, block, file;
  std::string fence;
  int snippets = 0;
  while (std::getline(f, line)) {
    if (fence.empty()) {
      if (line.rfind("```", 0) == 0) fence = line.size() > 3 ? line.substr(3) : "text";
      block.clear();
      file.clear();
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      if (!file.empty()) {
        dir.write(file, block);
        ++snippets;
      }
      fence.clear();
      continue;
    }
    if (fence == "lua" && block.empty() && line.rfind("-- my-scripts/", 0) == 0)
      file = line.substr(std::string("-- my-scripts/").size());
    if (fence == "sh" && line.rfind("blis run ", 0) == 0) commands.push_back(line.substr(5));
    block += line + "\n";
  }
  CHECK(snippets == 7);
  REQUIRE(commands.size() >= 7);
  for (std::string cmd : commands) {
    for (size_t at; (at = cmd.find("my-scripts")) != std::string::npos;)
      cmd.replace(at, std::string("my-scripts").size(), dir.str());
    INFO(cmd);
    Result r = run_blis(cmd, BLIS_TEST_SOURCE_DIR);
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("\"instance_id\": \"cluster\"") != std::string::npos);
  }
}
