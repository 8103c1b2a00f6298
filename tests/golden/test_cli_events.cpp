// --timeseries and scenario events from the command line and scenario files
// (docs/cli.md "Scenario events", docs/scenarios.md "Events").
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using blis::test::TempDir;

namespace {

const std::string kBase = "run --model qwen/qwen3-14b --num-instances 4 --rate 30 --num-requests 300";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("the time series flag writes the CSV and leaves stdout as it was", "[golden][metrics]") {
  TempDir dir;
  const std::string csv = dir.str() + "/ts.csv";
  const Result plain = run_blis(kBase);
  const Result with = run_blis(kBase + " --timeseries " + csv + " --timeseries-interval 2s");
  REQUIRE(with.status == 0);
  CHECK(with.out == plain.out);
  const std::string text = slurp(csv);
  CHECK(text.rfind("time_s,pool,instances,queue_depth,running,kv_usage,arrivals,completions,failed,events\n"
                   "2.000000,default,4,",
                   0) == 0);
  // Deterministic, and the same with another interval's sums.
  const Result again = run_blis(kBase + " --timeseries " + csv + " --timeseries-interval 2s");
  CHECK(slurp(csv) == text);
  CHECK(again.out == plain.out);
}

namespace {

// The named column of a time series CSV, row by row.
std::vector<long> column(const std::string& csv, const std::string& name) {
  std::vector<long> out;
  std::istringstream lines(csv);
  std::string line;
  int at = -1;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    if (at < 0) {
      for (size_t i = 0; i < cells.size(); ++i)
        if (cells[i] == name) at = static_cast<int>(i);
      REQUIRE(at >= 0);
      continue;
    }
    out.push_back(std::stol(cells.at(static_cast<size_t>(at))));
  }
  return out;
}

}  // namespace

TEST_CASE("with SLO targets the time series has goodput over time: good completions per interval",
          "[golden][metrics][goodput]") {
  TempDir dir;
  const std::string csv = dir.str() + "/ts.csv";
  // A target every request meets: each interval's good completions are its completions.
  const Result loose = run_blis(kBase + " --slo-e2e default=1000s --timeseries " + csv);
  REQUIRE(loose.status == 0);
  std::string text = slurp(csv);
  CHECK(text.rfind("time_s,pool,instances,queue_depth,running,kv_usage,arrivals,completions,failed,events,"
                   "good_completions\n",
                   0) == 0);
  CHECK(column(text, "good_completions") == column(text, "completions"));
  // A TTFT target about half the requests meet: the column sums to the run's
  // good requests (slo_attainment x count of the JSON's per-class entry), and
  // no interval has more good completions than completions.
  const Result tight = run_blis(kBase + " --slo-ttft default=40ms --timeseries " + csv + " --format json");
  REQUIRE(tight.status == 0);
  text = slurp(csv);
  const std::vector<long> good = column(text, "good_completions"), done = column(text, "completions");
  long sum = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    CHECK(good[i] <= done[i]);
    sum += good[i];
  }
  const std::string& out = tight.out;
  const size_t at = out.find("\"slo_attainment\": ");
  REQUIRE(at != std::string::npos);
  const double attainment = std::stod(out.substr(at + 18));
  CHECK(attainment > 0.05);
  CHECK(attainment < 0.95);
  CHECK(sum == std::lround(attainment * 300));
  // Without targets the file has no such column; stdout never changes.
  run_blis(kBase + " --timeseries " + csv);
  CHECK(slurp(csv).find("good_completions") == std::string::npos);
  CHECK(run_blis(kBase + " --slo-e2e default=1000s").out == loose.out);
}

TEST_CASE("the time series flag is refused by a sweep, and a bad interval is refused", "[golden][metrics]") {
  TempDir dir;
  const std::string toml = dir.write("sweep.toml", "model = \"qwen/qwen3-14b\"\n[sweep]\nrate = [1, 2]\n");
  check_refused("run " + toml + " --timeseries " + dir.str() + "/t.csv", "timeseries names one file");
  check_refused(kBase + " --timeseries x.csv --timeseries-interval 0", "--timeseries-interval");
}

TEST_CASE("events from --event, TOML [[events]] and a Lua events list give the same run", "[golden][events]") {
  TempDir dir;
  const Result flags = run_blis(kBase + " --event 'at=3s action=fail instance=1 requests=reroute'" +
                                " --event 'at=6s action=restore instance=1' --event 'when=running>50 action=rate factor=0.5'");
  REQUIRE(flags.status == 0);
  CHECK(flags.out.find("\n3 s: at=3s action=fail instance=1 requests=reroute (") !=
        std::string::npos);
  CHECK(flags.out.find("Events Applied: 3\n") != std::string::npos);
  const std::string toml = dir.write("ev.toml", R"(model = "qwen/qwen3-14b"
num-instances = 4
rate = 30
num-requests = 300

[[events]]
at = "3s"
action = "fail"
instance = 1
requests = "reroute"

[[events]]
at = "6s"
action = "restore"
instance = 1

[[events]]
when = "running>50"
action = "rate"
factor = 0.5
)");
  const Result t = run_blis("run " + toml);
  INFO(t.err);
  CHECK(t.out == flags.out);
  const std::string lua = dir.write("ev.lua", R"(return {
  model = "qwen/qwen3-14b", num_instances = 4, rate = 30, num_requests = 300,
  events = {
    { at = "3s", action = "fail", instance = 1, requests = "reroute" },
    "at=6s action=restore instance=1",
    { when = "running>50", action = "rate", factor = 0.5 },
  },
})");
  const Result l = run_blis("run " + lua);
  INFO(l.err);
  CHECK(l.out == flags.out);
  // Without events, no events block.
  CHECK(run_blis(kBase).out.find("Scenario Events") == std::string::npos);
}

TEST_CASE("bad events are refused before the run, naming the event", "[golden][events]") {
  check_refused(kBase + " --event 'at=3s action=explode instance=1'", "unknown action 'explode'");
  check_refused(kBase + " --event 'at=3s action=drain instance=9'", "instance 9 does not exist");
  check_refused(kBase + " --event 'at=3s action=weight scorer=nope weight=2'", "no scorer 'nope'");
  TempDir dir;
  const std::string toml =
      dir.write("bad.toml", "model = \"qwen/qwen3-14b\"\n[[events]]\nat = \"1s\"\naction = \"drain\"\n");
  check_refused("run " + toml, "needs instance=");
}

TEST_CASE("scenario events appear in the decision trace and the JSON document", "[golden][events]") {
  const std::string ev = " --event 'at=2s action=drain instance=3'";
  const Result trace = run_blis(kBase + ev + " --trace-level decisions --summarize-trace");
  CHECK(trace.out.find("Scenario Events: 1\n  2 s: at=2s action=drain instance=3") != std::string::npos);
  const Result json = run_blis(kBase + ev + " --format json");
  CHECK(json.out.find("\"scenario_events\": {\n    \"rerouted\": 0,\n    \"failed\": 0,\n    \"applied\": [\n"
                      "      \"2 s: at=2s action=drain instance=3") != std::string::npos);
}

TEST_CASE("requests lost with a failed instance have a record marked failed", "[golden][events]") {
  // The failed instance's in-flight requests are lost (requests=fail): each
  // has a record in the results file, on that instance, with no E2E.
  TempDir dir;
  const std::string results = dir.str() + "/results.json";
  const Result r = run_blis(kBase + " --event 'at=3s action=fail instance=1 requests=fail' --format json"
                            " --results-path " + results);
  REQUIRE(r.status == 0);
  const std::string text = slurp(results);
  size_t records = 0, failed = 0, on_failed_instance = 0;
  for (size_t at = text.find("\"requestID\""); at != std::string::npos; at = text.find("\"requestID\"", at + 1)) {
    ++records;
    const size_t end = text.find('}', at);
    const std::string rec = text.substr(at, end - at);
    if (rec.find("\"failed\": true") != std::string::npos) {
      ++failed;
      if (rec.find("\"handled_by\": \"instance_1\"") != std::string::npos) ++on_failed_instance;
      CHECK(rec.find("\"e2e_ms\": 0,") != std::string::npos);
    }
  }
  CHECK(records == 300);
  CHECK(failed > 0);
  CHECK(on_failed_instance == failed);
  CHECK(r.out.find("\"failed\": " + std::to_string(failed) + ",") != std::string::npos);
}

TEST_CASE("a workload event changes the traffic mix mid-run", "[golden][events]") {
  // 60 requests/s of the distribution workload for 5 s, then the 400
  // long-prompt requests of another spec, counted from 5 s.
  TempDir dir;
  std::ofstream(dir.str() + "/evening.yaml") << R"(version: "2"
seed: 7
category: language
aggregate_rate: 40.0
num_requests: 400
clients:
  - id: long-docs
    slo_class: batch
    rate_fraction: 1.0
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 3000, std_dev: 500, min: 2000, max: 6000}}
    output_distribution: {type: gaussian, params: {mean: 100, std_dev: 30, min: 10, max: 300}}
)";
  const std::string args =
      "run --model qwen/qwen3-14b --num-instances 4 --rate 60 --num-requests 600 --prompt-tokens-max 1500 "
      "--event 'at=5s action=workload spec=evening.yaml' --results-path r.json --timeseries ts.csv";
  const Result r = run_blis(args, dir.str());
  INFO(r.err);
  REQUIRE(r.status == 0);
  // 300 arrivals of the first workload before 5 s, all 400 of the second.
  CHECK(metric(r.out, "completed_requests") == 700);
  CHECK(r.out.find("5 s: at=5s action=workload spec=evening.yaml (arrivals from now on: evening.yaml)") !=
        std::string::npos);
  const std::string text = slurp(dir.str() + "/r.json");
  size_t before = 0, after = 0, misplaced = 0;
  for (size_t at = text.find("\"arrived_at\": "); at != std::string::npos; at = text.find("\"arrived_at\": ", at + 1)) {
    const double t = std::stod(text.substr(at + 14));
    const size_t p = text.find("\"num_prefill_tokens\": ", at);
    const int input = std::stoi(text.substr(p + 22));
    (t < 5.0 ? before : after)++;
    if ((t < 5.0) != (input <= 1500)) ++misplaced;  // long prompts come from the second workload only
  }
  CHECK(before == 300);
  CHECK(after == 400);
  CHECK(misplaced == 0);
  // Ids go on from the first workload's: no two records share one.
  CHECK(text.find("\"requestID\": \"request_300\"") != std::string::npos);
  CHECK(text.find("\"requestID\": \"request_699\"") != std::string::npos);
  CHECK(text.find("\"requestID\": \"request_700\"") == std::string::npos);
  CHECK(run_blis(args, dir.str()).out == r.out);

  check_refused(kBase + " --event 'when=running>5 action=workload spec=evening.yaml'",
                "a workload change needs at=TIME, not a threshold trigger", dir.str());
  check_refused(kBase + " --event 'at=1s action=workload'", "needs spec=FILE", dir.str());
  check_refused(kBase + " --event 'at=1s action=workload spec=missing.yaml'", "missing.yaml", dir.str());
  check_refused("run --model qwen/qwen3-14b --concurrency 4 --num-requests 50 "
                "--event 'at=1s action=workload spec=evening.yaml'",
                "a workload change cannot follow closed-loop users", dir.str());
}

TEST_CASE("a rate event that speeds arrivals up lasts to the horizon", "[golden][events]") {
  // The workload is drawn to its own horizon, in its own time: tripled from
  // 5 s on, 20 s of it used to end at 10 s of the run, and the run's last
  // 10 s had no arrival. Its horizon is stretched by the event's factor.
  TempDir dir;
  const std::string spec = dir.write("w.yaml", R"(version: "2"
seed: 3
aggregate_rate: 4
num_requests: 100000
clients:
  - id: a
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: gaussian, params: {mean: 128, std_dev: 32, min: 8, max: 512}}
    output_distribution: {type: exponential, params: {mean: 16}}
)");
  const Result r =
      run_blis("run --model qwen/qwen3-14b --num-instances 2 --horizon 20000000 --workload-spec " + spec +
               " --event 'at=5s action=rate factor=3' --trace-output " + dir.str() + "/t");
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::istringstream csv(slurp(dir.str() + "/t.csv"));
  std::string line;
  std::getline(csv, line);
  int64_t late = 0, last = 0;
  while (std::getline(csv, line)) {
    size_t at = 0;
    for (int k = 0; k < 19; ++k) at = line.find(',', at) + 1;  // arrival_time_us, the 20th column
    const int64_t t = std::stoll(line.substr(at));
    last = std::max(last, t);
    late += t >= 10'000'000 ? 1 : 0;
  }
  // About 12 per second for the last 10 s.
  CHECK(late > 80);
  CHECK(last > 19'000'000);
  CHECK(last < 20'000'000);
}
