// The workload-spec YAML writer (spec workload §9.1): every key of the schema
// it writes, the loader reads back to the same spec, so writing what was read
// gives the same text again.
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/workload.hpp>
#include <blis/workload_convert.hpp>

#include <string>

namespace {

// The text written for `yaml`, and the text written for what that reads back.
std::pair<std::string, std::string> write_twice(const std::string& yaml) {
  blis::test::TempDir dir("blis-writer");
  const std::string first = blis::workload_spec_yaml(blis::load_workload_spec(dir.write("a.yaml", yaml)));
  const std::string second = blis::workload_spec_yaml(blis::load_workload_spec(dir.write("b.yaml", first)));
  return {first, second};
}

}  // namespace

TEST_CASE("spec writer: every block of the schema reads back unchanged", "[workload]") {
  const std::string spec = R"(version: "2"
seed: -3
category: multimodal
aggregate_rate: 12.5
horizon: 5000000
num_requests: 40
clients:
  - id: "yes"
    tenant_id: "t: 1"
    slo_class: critical
    model: m/x
    rate_fraction: 0.25
    arrival: {process: weibull, cv: 0.5}
    input_distribution: {type: empirical, params: {"100": 0.5, "20": 0.5}}
    output_distribution: {type: pareto_lognormal, params: {alpha: 1.5, xm: 10, mu: 3, sigma: 0.5, mix_weight: 0.3}}
    prefix_group: g
    prefix_length: 7
    streaming: true
    network: {rtt_ms: 2.5, bandwidth_mbps: 100}
    lifecycle: {windows: [{start_us: 0, end_us: 1000000}, {start_us: 2000000, end_us: 3000000}]}
    multimodal:
      text_distribution: {type: constant, params: {value: 10}}
      image_distribution: {type: constant, params: {value: 64}}
      image_count_distribution: {type: constant, params: {value: 2}}
    reasoning:
      reason_ratio_distribution: {type: constant, params: {value: 30}}
      multi_turn: {max_rounds: 3, think_time_us: 500, context_growth: accumulate, single_session: true}
cohorts:
  - id: pop
    population: 4
    rate_fraction: 1
    arrival: {process: gamma, cv: 3}
    input_distribution: {type: exponential, params: {mean: 50}}
    output_distribution: {type: constant, params: {value: 5}}
    diurnal: {peak_hour: 14, peak_to_trough_ratio: 3}
    spike: {start_time_us: 10, duration_us: 20}
    drain: {start_time_us: 100, ramp_duration_us: 1005}
servegen_data: {path: /data/sg, span_start: 1, span_end: 9}
inference_perf:
  stages: [{rate: 5, duration: 10}]
  shared_prefix: {num_unique_system_prompts: 1, num_users_per_system_prompt: 2, system_prompt_len: 3,
                  question_len: 4, output_len: 5, enable_multi_turn_chat: true}
)";
  const auto [first, second] = write_twice(spec);
  CHECK(first == second);
  // Strings that YAML would read otherwise are quoted; digit keys in numeric order.
  CHECK(first.find("    - id: \"yes\"\n      tenant_id: \"t: 1\"\n") != std::string::npos);
  CHECK(first.find("            \"20\": 0.5\n            \"100\": 0.5\n") != std::string::npos);
  CHECK(first.find("seed: -3\n") != std::string::npos);
  CHECK(first.find("      lifecycle:\n        windows:\n            - start_us: 0\n              end_us: 1000000\n") !=
        std::string::npos);
  CHECK(first.find("cohorts:\n    - id: pop\n") != std::string::npos);
  CHECK(first.find("servegen_data:\n    path: /data/sg\n    span_start: 1\n    span_end: 9\n") != std::string::npos);
}

TEST_CASE("spec writer: the bundled examples read back unchanged", "[workload]") {
  for (const char* name : {"prefix-affinity-demo.yaml", "multiturn-chat-demo.yaml"}) {
    INFO(name);
    const blis::WorkloadSpec spec =
        blis::load_workload_spec(std::string(BLIS_TEST_SOURCE_DIR) + "/examples/workload-spec/" + name);
    blis::test::TempDir dir("blis-writer");
    const std::string text = blis::workload_spec_yaml(spec);
    CHECK(blis::workload_spec_yaml(blis::load_workload_spec(dir.write("x.yaml", text))) == text);
  }
}
