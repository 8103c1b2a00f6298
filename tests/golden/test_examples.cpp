// Every example under examples/ with an `args` file runs `blis <args>` from the
// source tree and must print exactly its expected.txt.
#include "catch.hpp"
#include "cli.hpp"
#include "temp_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string run(const std::string& args) {
  const Result r = run_blis(args, BLIS_TEST_SOURCE_DIR);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return r.out;
}

std::string read(const fs::path& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string args_of(const std::string& example) {
  std::string args = read(fs::path(BLIS_TEST_SOURCE_DIR) / "examples" / example / "args");
  while (!args.empty() && (args.back() == '\n' || args.back() == ' ')) args.pop_back();
  return args;
}

std::string expected_of(const std::string& example) {
  return read(fs::path(BLIS_TEST_SOURCE_DIR) / "examples" / example / "expected.txt");
}

}  // namespace

TEST_CASE("every example prints its expected output", "[golden][examples]") {
  std::vector<std::string> examples;
  for (const auto& e : fs::directory_iterator(fs::path(BLIS_TEST_SOURCE_DIR) / "examples"))
    if (fs::exists(e.path() / "args")) examples.push_back(e.path().filename().string());
  std::sort(examples.begin(), examples.end());
  REQUIRE(examples.size() >= 4);
  for (const std::string& name : examples) {
    DYNAMIC_SECTION("example " << name) {
      CHECK(run(args_of(name)) == expected_of(name));
    }
  }
}

TEST_CASE("example trace-replay shows the shared prompt and the SLO classes", "[golden][examples]") {
  const std::string out = expected_of("trace-replay");
  CHECK(out.find("=== Per-SLO Metrics ===") != std::string::npos);
  CHECK(out.find("Cache Hit Rate: ") != std::string::npos);
}

TEST_CASE("example capacity-planning: 12 instances in steady state, the same table with --jobs 1",
          "[golden][examples]") {
  const std::string out = expected_of("capacity-planning");
  CHECK(out.find("\"result\": {\"minimum_instances\": 12, \"target_ttft_p99_ms\": 500}") != std::string::npos);
  // 11 instances fall behind over 120 s of arrivals (TTFT p99 2.8 s).
  CHECK(out.find("\"num_instances\": 11, ") != std::string::npos);
  CHECK(out.find("\"ttft_p99_ms\": 2806.0400499999973") != std::string::npos);
  std::string serial = args_of("capacity-planning");
  serial.replace(serial.find("--jobs 2"), 8, "--jobs 1");
  CHECK(run(serial) == out);
}

TEST_CASE("example plan: blis plan agrees with the hand-written search", "[golden][examples]") {
  CHECK(expected_of("plan").find("minimum instances: 12 (") != std::string::npos);
}

TEST_CASE("example prefix-heavy: prefix-aware routing beats round-robin on TTFT", "[golden][examples]") {
  const std::string out = expected_of("prefix-heavy");
  auto p99_after = [&](const std::string& marker) {
    size_t at = out.find(marker);
    REQUIRE(at != std::string::npos);
    at = out.find("\"ttft_p99_ms\": ", at);
    return std::stod(out.substr(at + 15, 20));
  };
  const double round_robin = p99_after("\"routing_policy\": \"round-robin\"");
  const double lua = p99_after("sticky_prefix.lua");
  CHECK(lua < round_robin / 2);
}

TEST_CASE("example diurnal-autoscaler: the instance count follows the load, after the provisioning delay",
          "[golden][examples][fleet]") {
  const std::string out = expected_of("diurnal-autoscaler");
  // The first scale-up is decided at 750 s; its instances serve 150 s later.
  CHECK(out.find("=== Autoscaler ===\n330 s: h100 -1 ") != std::string::npos);
  CHECK(out.find("\n750 s: h100 +2 ") != std::string::npos);
  CHECK(out.find(" GPU-hours; $") != std::string::npos);
  blis::test::TempDir dir;
  const std::string csv = dir.str() + "/day.csv";
  CHECK(run(args_of("diurnal-autoscaler") + " --timeseries " + csv + " --timeseries-interval 1m") == out);
  const std::string series = read(csv);
  CHECK(series == read(fs::path(BLIS_TEST_SOURCE_DIR) / "examples" / "diurnal-autoscaler" / "expected-timeseries.csv"));
  // instances per minute: 1 from the night scale-down until the ready event
  // at 900 s (the 900 s boundary sees the cluster before it), more after.
  std::vector<std::pair<double, int>> rows;
  std::istringstream in(series);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    rows.emplace_back(std::stod(line.substr(0, a)), std::stoi(line.substr(b + 1, c - b - 1)));
  }
  for (const auto& [t, n] : rows) {
    INFO("row at " << t << " s");
    if (t >= 360 && t <= 900) CHECK(n == 1);
    if (t >= 960 && t <= 1440) CHECK(n > 1);
    if (t >= 1800) CHECK(n == 1);
  }
}
