// BLIS HEAD's own golden datasets (testdata/ of inference-sim at f90a1e3a,
// copied unchanged into tests/golden/head/): 15 experiments with HEAD's
// trained-physics coefficients and the same 15 on HEAD's roofline, eleven
// expected values each. Under --profile-set head, with the command line HEAD's
// golden README gives, blis must print every one of the 330 to 1e-9 relative.
#include "catch.hpp"
#include "cli.hpp"
#include "head_golden.hpp"
#include "json_lite.hpp"
#include "temp_dir.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using blis::test::Json;

Json read_golden(const std::string& name) {
  std::ifstream in(std::string(BLIS_TEST_SOURCE_DIR) + "/tests/golden/head/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str());
}

// JSON is YAML: the experiment's workload object back as text, numbers to
// 17 digits so each reads back as the same double.
std::string to_text(const Json& v) {
  switch (v.kind) {
    case Json::Kind::Null: return "null";
    case Json::Kind::Bool: return v.boolean ? "true" : "false";
    case Json::Kind::Number: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v.number);
      return buf;
    }
    case Json::Kind::String: return "\"" + v.text + "\"";
    case Json::Kind::Array: {
      std::string s = "[";
      for (size_t i = 0; i < v.items.size(); ++i) s += (i ? ", " : "") + to_text(v.items[i]);
      return s + "]";
    }
    case Json::Kind::Object: {
      std::string s = "{";
      for (size_t i = 0; i < v.fields.size(); ++i)
        s += (i ? ", " : "") + ("\"" + v.fields[i].first + "\": ") + to_text(v.fields[i].second);
      return s + "}";
    }
  }
  return "";
}

std::string list(const Json& numbers) {
  std::string s;
  for (const auto& x : numbers.items) s += (s.empty() ? "" : ",") + to_text(x);
  return s;
}

long whole(const Json& e, const std::string& key) { return std::lround(e.num(key)); }

// Runs the experiments of one file; returns how many values matched. The
// instrumented suite (BLIS_TEST_SANITIZED) takes every fifth: its point is
// the code paths, and the 30 runs cost it over two minutes of CPU.
int check_file(const std::string& name) {
  const Json doc = read_golden(name);
  const std::string backend = doc["backend"].text;
  const size_t stride = std::getenv("BLIS_TEST_SANITIZED") != nullptr ? 5 : 1;
  blis::test::TempDir dir;
  int matched = 0;
  for (size_t k = 0; k < doc["experiments"].items.size(); k += stride) {
    const Json& e = doc["experiments"].items[k];
    const Json& w = e["workload"];
    const std::string spec = dir.write("w.yaml", to_text(w));
    std::string cmd = "run --profile-set head --model " + e["model"].text + " --hardware " + e["hardware"].text +
                      " --tp " + std::to_string(whole(e, "tp")) + " --latency-model " + backend +
                      " --max-num-seqs " + std::to_string(whole(e, "max_num_seqs")) +
                      " --max-num-batched-tokens " + std::to_string(whole(e, "max_num_batched_tokens")) +
                      " --total-kv-blocks " + std::to_string(whole(e, "total_kv_blocks")) +
                      " --kv-cpu-blocks " + std::to_string(whole(e, "cpu_kv_blocks")) +
                      " --kv-offload-threshold 0.9 --kv-transfer-bandwidth 0.2 --workload-spec " + spec +
                      " --seed " + std::to_string(w.has("seed") ? whole(w, "seed") : 42) +
                      " --num-requests " + std::to_string(whole(w, "num_requests"));
    if (backend == "trained-physics")
      cmd += " --alpha-coeffs " + list(doc["alpha_coeffs"]) + " --beta-coeffs " + list(doc["beta_coeffs"]);
    const Result r = run_blis(cmd);
    INFO(backend << " experiment " << e["id"].text << " (" << e["model"].text << "): blis " << cmd);
    INFO(r.err);
    REQUIRE(r.status == 0);
    for (const auto& [key, want] : e["expected"].fields) {
      INFO(key);
      const double got = golden_value(r.out, key);
      CHECK(std::abs(got - want.number) <= 1e-9 * std::abs(want.number));
      if (std::abs(got - want.number) <= 1e-9 * std::abs(want.number)) ++matched;
    }
  }
  return matched;
}

}  // namespace

TEST_CASE("CLI: --profile-set head reproduces HEAD's trained-physics golden dataset (15 experiments, 165 values)",
          "[cli][head][golden]") {
  CHECK(check_file("trained_physics_iter29.json") == (std::getenv("BLIS_TEST_SANITIZED") ? 33 : 165));
}

TEST_CASE("CLI: --profile-set head reproduces HEAD's roofline golden dataset (15 experiments, 165 values)",
          "[cli][head][golden]") {
  CHECK(check_file("roofline_goldendataset.json") == (std::getenv("BLIS_TEST_SANITIZED") ? 33 : 165));
}
