// The workload-spec YAML loader (spec workload §5.1-§5.12): the examples of
// §5.14-§5.15 parse to the expected structure, the reference decoder's
// lenient conversions, strictness, and every validation rule of §5.13 with
// the file position of the offending field.
#include "catch.hpp"
#include "error_of.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/workload.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <functional>
#include <string>

using blis::test::TempDir;

namespace {

using blis::test::error_of;

const std::string kExamples = std::string(BLIS_TEST_SOURCE_DIR) + "/examples/workload-spec/";

// "line:col" (1-based) of the first occurrence of `needle` in `text`.
std::string pos_of(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}


std::string read_file(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The error of loading `text` (written to `dir`/spec.yaml) and generating a
// few requests from it.
std::string spec_error(const TempDir& dir, const std::string& text) {
  const std::string p = dir.write("spec.yaml", text);
  return error_of([&] {
    const auto spec = blis::load_workload_spec(p);
    auto src = blis::make_spec_workload(spec, blis::kNoHorizon, 3, 16);
    blis::WorkloadRequest r;
    while (src->next(r)) {
    }
  });
}

const char* const kClientTail =
    "    arrival: {process: poisson}\n"
    "    input_distribution: {type: constant, params: {value: 10}}\n"
    "    output_distribution: {type: constant, params: {value: 5}}\n";

// A valid one-client spec; `client_extra` lines go into the client.
std::string minimal(const std::string& client_extra = "", const std::string& top_extra = "") {
  return "aggregate_rate: 10\nnum_requests: 5\n" + top_extra + "clients:\n  - id: a\n    rate_fraction: 1\n" +
         client_extra + kClientTail;
}

}  // namespace

TEST_CASE("workload spec: example A parses to the spec's structure", "[workload][spec][yaml]") {
  const auto spec = blis::load_workload_spec(kExamples + "prefix-affinity-demo.yaml");
  CHECK(spec.version == "2");
  CHECK(spec.seed == 42);
  CHECK(spec.category == "language");
  CHECK(spec.aggregate_rate == 500.0);
  CHECK(spec.num_requests == 200);
  CHECK(spec.horizon == 0);
  REQUIRE(spec.clients.size() == 2);
  const auto& a = spec.clients[0];
  CHECK(a.id == "chat-with-system-prompt");
  CHECK(a.tenant_id == "tenant-A");
  CHECK(a.slo_class == "standard");
  CHECK(a.rate_fraction == 0.8);
  CHECK(a.streaming);
  CHECK(a.prefix_group == "long-system-prompt");
  CHECK(a.prefix_length == 256);
  CHECK(a.arrival.process == "poisson");
  CHECK_FALSE(a.arrival.cv);
  CHECK(a.input_distribution.type == "gaussian");
  CHECK(a.input_distribution.params ==
        std::map<std::string, double>{{"mean", 64}, {"std_dev", 20}, {"min", 16}, {"max", 256}});
  CHECK(a.output_distribution.type == "exponential");
  CHECK(a.output_distribution.params == std::map<std::string, double>{{"mean", 128}});
  CHECK_FALSE(a.lifecycle);
  CHECK_FALSE(a.reasoning);
  const auto& b = spec.clients[1];
  CHECK(b.tenant_id == "tenant-B");
  CHECK(b.slo_class == "batch");
  CHECK_FALSE(b.streaming);
  CHECK(b.prefix_group.empty());
  CHECK(b.input_distribution.params.at("mean") == 512);
  CHECK(spec.source.positions.at("clients[1].rate_fraction") ==
        kExamples + "prefix-affinity-demo.yaml:31:20");
}

TEST_CASE("workload spec: example B with its cohort parses to the spec's structure", "[workload][spec][yaml]") {
  TempDir dir("blis-spec");
  std::string text = read_file(kExamples + "multiturn-chat-demo.yaml");
  text +=
      "cohorts:\n"
      "  - id: daytime-users\n"
      "    population: 50\n"
      "    slo_class: critical\n"
      "    rate_fraction: 0.7\n"
      "    arrival: {process: poisson}\n"
      "    input_distribution:  {type: gaussian, params: {mean: 256, std_dev: 100, min: 2, max: 2048}}\n"
      "    output_distribution: {type: exponential, params: {mean: 128}}\n"
      "    diurnal: {peak_hour: 14, peak_to_trough_ratio: 3.0}\n";
  const auto spec = blis::load_workload_spec(dir.write("b.yaml", text));
  CHECK(spec.category == "reasoning");
  CHECK(spec.num_requests == 500);
  REQUIRE(spec.clients.size() == 1);
  const auto& c = spec.clients[0];
  REQUIRE(c.reasoning);
  CHECK(c.reasoning->reason_ratio_distribution.type == "gaussian");
  CHECK(c.reasoning->reason_ratio_distribution.params.at("max") == 0);
  REQUIRE(c.reasoning->multi_turn);
  CHECK(c.reasoning->multi_turn->max_rounds == 5);
  CHECK(c.reasoning->multi_turn->think_time_us == 500000);
  CHECK(c.reasoning->multi_turn->context_growth == "accumulate");
  CHECK_FALSE(c.reasoning->multi_turn->single_session);
  REQUIRE(spec.cohorts.size() == 1);
  const auto& h = spec.cohorts[0];
  CHECK(h.id == "daytime-users");
  CHECK(h.population == 50);
  CHECK(h.slo_class == "critical");
  CHECK(h.rate_fraction == 0.7);
  CHECK(h.arrival.process == "poisson");
  CHECK(h.output_distribution.type == "exponential");
  REQUIRE(h.diurnal);
  CHECK(h.diurnal->peak_hour == 14);
  CHECK(h.diurnal->peak_to_trough_ratio == 3.0);
  CHECK_FALSE(h.spike);
  CHECK_FALSE(h.drain);
  // It generates (the totals change with the cohort, spec workload §5.15).
  auto src = blis::make_spec_workload(spec, blis::kNoHorizon, spec.num_requests, 16);
  blis::WorkloadRequest r;
  int n = 0;
  while (src->next(r)) ++n;
  CHECK(n == 500);
}

TEST_CASE("workload spec: every block of the schema is read", "[workload][spec][yaml]") {
  TempDir dir("blis-spec");
  const std::string text =
      "version: \"2\"\nseed: -7\ncategory: multimodal\naggregate_rate: 3.5\nhorizon: 1000000\n"
      "num_requests: 0\n"
      "clients:\n"
      "  - id: m\n    tenant_id: t\n    slo_class: sheddable\n    model: llama\n    rate_fraction: 2\n"
      "    arrival: {process: weibull, cv: 2.5}\n"
      "    input_distribution: {type: empirical, params: {100: 0.2, \"200\": 0.8}, file: bins.json}\n"
      "    output_distribution: {type: pareto_lognormal, params: {alpha: 1.5, xm: 50, mu: 5.5, sigma: 1.2, "
      "mix_weight: 0.3}}\n"
      "    prefix_group: g\n    prefix_length: 12\n    streaming: yes\n"
      "    network: {rtt_ms: 1.5, bandwidth_mbps: 100}\n"
      "    lifecycle:\n      windows:\n        - {start_us: 0, end_us: 500}\n        - start_us: 900\n"
      "          end_us: 1200\n"
      "    multimodal:\n"
      "      text_distribution: {type: constant, params: {value: 7}}\n"
      "      image_distribution: {type: constant, params: {value: 100}}\n"
      "      image_count_distribution: {type: constant, params: {value: 2}}\n"
      "      audio_distribution: {type: constant, params: {value: 3}}\n"
      "      audio_count_distribution: {type: constant, params: {value: 4}}\n"
      "      video_distribution: {type: constant, params: {value: 5}}\n"
      "      video_count_distribution: {type: constant, params: {value: 6}}\n"
      "    reasoning:\n"
      "      reason_ratio_distribution: {type: constant, params: {value: 30}}\n"
      "      multi_turn: {max_rounds: 3, think_time_us: 10, context_growth: none, single_session: true}\n"
      "cohorts:\n"
      "  - {id: c, population: 2, tenant_id: ct, model: mm, prefix_group: g, streaming: true, rate_fraction: 1,\n"
      "     arrival: {process: gamma, cv: 0}, input_distribution: {type: constant, params: {value: 1}},\n"
      "     output_distribution: {type: constant, params: {value: 1}},\n"
      "     spike: {start_time_us: 5, duration_us: 6}, drain: {start_time_us: 7, ramp_duration_us: 8}}\n"
      "servegen_data: {path: /data, span_start: 1, span_end: 2}\n"
      "inference_perf:\n"
      "  stages: [{rate: 8, duration: 600}, {rate: 20, duration: 300}]\n"
      "  shared_prefix: {num_unique_system_prompts: 9, num_users_per_system_prompt: 5, system_prompt_len: 100,\n"
      "                  question_len: 447, output_len: 248, enable_multi_turn_chat: false}\n";
  const auto spec = blis::load_workload_spec(dir.write("all.yaml", text));
  CHECK(spec.seed == -7);
  CHECK(spec.horizon == 1000000);
  CHECK(spec.aggregate_rate == 3.5);
  const auto& c = spec.clients.at(0);
  CHECK(c.model == "llama");
  CHECK(c.arrival.cv == 2.5);
  CHECK(c.input_distribution.params == std::map<std::string, double>{{"100", 0.2}, {"200", 0.8}});
  CHECK(c.output_distribution.params.at("mix_weight") == 0.3);
  CHECK(c.streaming);
  REQUIRE(c.network);
  CHECK(c.network->rtt_ms == 1.5);
  CHECK(c.network->bandwidth_mbps == 100);
  REQUIRE(c.lifecycle);
  REQUIRE(c.lifecycle->size() == 2);
  CHECK((*c.lifecycle)[1].start_us == 900);
  CHECK((*c.lifecycle)[1].end_us == 1200);
  REQUIRE(c.multimodal);
  CHECK(c.multimodal->video_count_distribution.params.at("value") == 6);
  CHECK(c.multimodal->audio_distribution.params.at("value") == 3);
  REQUIRE(c.reasoning);
  CHECK(c.reasoning->multi_turn->single_session);
  CHECK(c.reasoning->multi_turn->context_growth == "none");
  const auto& h = spec.cohorts.at(0);
  CHECK(h.model == "mm");
  CHECK(h.arrival.cv == 0.0);
  CHECK(h.spike->duration_us == 6);
  CHECK(h.drain->ramp_duration_us == 8);
  REQUIRE(spec.servegen_data);
  CHECK(spec.servegen_data->path == "/data");
  CHECK(spec.servegen_data->span_end == 2);
  REQUIRE(spec.inference_perf);
  CHECK(spec.inference_perf->stages.size() == 2);
  CHECK(spec.inference_perf->stages[1].rate == 20);
  CHECK(spec.inference_perf->shared_prefix->question_len == 447);
  CHECK_FALSE(spec.inference_perf->shared_prefix->enable_multi_turn_chat);
}

TEST_CASE("workload spec: the reference decoder's lenient conversions", "[workload][spec][yaml]") {
  TempDir dir("blis-spec");
  const std::string text =
      "version: 2\n"                      // a number for a string
      "seed: 0x10\n"                      // hex
      "aggregate_rate: 1e1\n"             // exponent form
      "num_requests: 2.9\n"               // a float for an integer: truncated
      "horizon: ~\n"                      // null: zero value
      "category:\n"                       // empty: zero value
      "base: &base\n"                     // not a schema key...
      "  rate_fraction: 1\n";
  // ...so an anchor must live inside known structures.
  const std::string path = dir.str() + "/spec.yaml";
  CHECK(spec_error(dir, text) == path + ":" + pos_of(text, "base:") +
                                            ": unknown key \"base\" (expected one of: version, seed, category, "
                                            "clients, cohorts, aggregate_rate, horizon, num_requests, "
                                            "servegen_data, inference_perf)");
  const std::string ok =
      "version: 2\nseed: 0x10\naggregate_rate: 1e1\nnum_requests: 2.9\nhorizon: ~\ncategory:\n"
      "clients:\n"
      "  - &first\n"
      "    rate_fraction: .inf\n"
      "    streaming: On\n"
      "    arrival: {process: constant}\n"
      "    input_distribution: &len {type: constant, params: {value: 1_000}}\n"
      "    output_distribution: *len\n"
      "  - <<: *first\n"
      "    rate_fraction: 0o17\n"
      "    streaming: n\n"
      "---\n"
      "this: [is not read\n";
  const auto spec = blis::load_workload_spec(dir.write("ok.yaml", ok));
  CHECK(spec.version == "2");
  CHECK(spec.seed == 16);
  CHECK(spec.aggregate_rate == 10.0);
  CHECK(spec.num_requests == 2);
  CHECK(spec.horizon == 0);
  CHECK(spec.category.empty());
  REQUIRE(spec.clients.size() == 2);
  CHECK(std::isinf(spec.clients[0].rate_fraction));
  CHECK(spec.clients[0].streaming);
  CHECK(spec.clients[0].input_distribution.params.at("value") == 1000);
  CHECK(spec.clients[0].output_distribution.params.at("value") == 1000);
  // The merged client keeps its own keys and takes the rest from the anchor.
  CHECK(spec.clients[1].rate_fraction == 15);
  CHECK_FALSE(spec.clients[1].streaming);
  CHECK(spec.clients[1].arrival.process == "constant");
  CHECK(spec.clients[1].input_distribution.params.at("value") == 1000);
}

TEST_CASE("workload spec: v1 files are upgraded, cohorts are not", "[workload][spec][yaml]") {
  TempDir dir("blis-spec");
  const std::string v1 = "version: \"1\"\n" + minimal("    slo_class: realtime\n");
  const auto spec = blis::load_workload_spec(dir.write("v1.yaml", v1));
  CHECK(spec.version == "2");
  CHECK(spec.clients[0].slo_class == "critical");
  const auto unversioned = blis::load_workload_spec(dir.write("v0.yaml", minimal("    slo_class: interactive\n")));
  CHECK(unversioned.version == "2");
  CHECK(unversioned.clients[0].slo_class == "standard");
  const std::string v3 = "version: \"3\"\n" + minimal("    slo_class: realtime\n");
  const std::string path = dir.str() + "/spec.yaml";
  CHECK(spec_error(dir, v3) == path + ":" + pos_of(v3, "realtime") +
                                          ": clients[0].slo_class: unknown SLO class 'realtime' (expected "
                                          "critical, standard, sheddable, batch, background or empty)");
}

TEST_CASE("workload spec: strictness, with file:line:col and the field", "[workload][spec][yaml]") {
  TempDir dir("blis-spec");
  const std::string path = dir.str() + "/spec.yaml";
  const auto expect = [&](const std::string& text, const std::string& at, const std::string& message) {
    INFO(text);
    CHECK(spec_error(dir, text) == path + ":" + pos_of(text, at) + ": " + message);
  };
  expect(minimal("    tennant_id: x\n"), "tennant_id",
         "unknown key \"clients[0].tennant_id\" (expected one of: id, tenant_id, slo_class, model, "
         "adapter, rate_fraction, arrival, input_distribution, output_distribution, prefix_group, streaming, "
         "slo_target_us, prefix_length, concurrency, think_time_us, timeout, network, lifecycle, multimodal, reasoning)");
  expect(minimal("    reasoning: {multi_turn: {rounds: 3}}\n"), "rounds",
         "unknown key \"clients[0].reasoning.multi_turn.rounds\" (expected one of: max_rounds, think_time_us, "
         "context_growth, single_session)");
  expect(minimal("    lifecycle: {windows: [{start: 1}]}\n"), "start:",
         "unknown key \"clients[0].lifecycle.windows[0].start\" (expected one of: start_us, end_us)");
  expect(minimal("    rate_fraction: 2\n"), "rate_fraction: 2",
         "duplicate key \"clients[0].rate_fraction\" (first given at line 5)");
  expect(minimal("", "seed: forty-two\n"), "forty-two", "seed must be an integer, got \"forty-two\"");
  expect(minimal("", "seed: \"42\"\n"), "\"42\"", "seed must be an integer, got \"42\"");
  expect(minimal("", "seed: 9223372036854775808\n"), "9223372036854775808",
         "seed is out of range for a 64-bit integer: 9223372036854775808");
  expect(minimal("", "horizon: 1e19\n"), "1e19", "horizon is out of range for a 64-bit integer: 1e19");
  expect(minimal("    streaming: maybe\n"), "maybe", "clients[0].streaming must be true or false, got \"maybe\"");
  expect(minimal("    prefix_length: [1]\n"), "[1]", "clients[0].prefix_length must be an integer");
  expect(minimal("    network: fast\n"), "fast", "clients[0].network must be a mapping");
  expect(minimal("    model: {name: x}\n"), "{name", "clients[0].model must be a string");
  expect(minimal("", "cohorts: {id: x}\n"), "{id", "cohorts must be a list");
  std::string word = minimal();
  word.replace(word.find("{value: 10}"), 11, "{value: high}");
  expect(word, "high", "clients[0].input_distribution.params.value must be a number, got \"high\"");
  expect("- a\n", "- a", "the workload spec must be a mapping");
  const std::string broken = minimal("    tenant_id: [x\n");
  CHECK(spec_error(dir, broken).rfind(path + ":", 0) == 0);
  CHECK(spec_error(dir, "") == path + ": empty workload spec (no YAML document)");
  CHECK(spec_error(dir, "# only a comment\n") == path + ": empty workload spec (no YAML document)");
  CHECK(error_of([] { blis::load_workload_spec("/nonexistent/spec.yaml"); }) ==
        "/nonexistent/spec.yaml: cannot read workload spec: No such file or directory");
}

TEST_CASE("workload spec: every validation rule names the file position and the field",
          "[workload][spec][yaml][validation]") {
  TempDir dir("blis-spec");
  const std::string path = dir.str() + "/spec.yaml";
  const auto expect = [&](const std::string& text, const std::string& at, const std::string& message) {
    INFO(text);
    const std::string where = at.empty() ? path : path + ":" + pos_of(text, at);
    CHECK(spec_error(dir, text) == where + ": " + message);
  };
  const std::string tail = std::string("clients:\n  - id: a\n    rate_fraction: 1\n") + kClientTail;
  // 1. category
  expect("category: video\naggregate_rate: 10\nnum_requests: 5\n" + tail, "video",
         "category: unknown category 'video' (expected language, multimodal, reasoning or empty)");
  // 2. aggregate_rate: absent (the file), zero, NaN
  expect("num_requests: 5\n" + tail, "", "aggregate_rate: must be a finite number > 0, got 0");
  expect("aggregate_rate: -1\n" + tail, "-1", "aggregate_rate: must be a finite number > 0, got -1");
  expect("aggregate_rate: .nan\n" + tail, ".nan", "aggregate_rate: must be a finite number > 0, got nan");
  // 3. nothing to generate
  expect("aggregate_rate: 1\nclients: []\n", "[]", "clients: the workload has no clients and no cohorts");
  // 4. clients
  expect(minimal("    slo_class: gold\n"), "gold",
         "clients[0].slo_class: unknown SLO class 'gold' (expected critical, standard, sheddable, batch, "
         "background or empty)");
  const std::string no_fraction = "aggregate_rate: 10\nclients:\n  - id: a\n" + std::string(kClientTail);
  expect(no_fraction, "id: a", "clients[0].rate_fraction: must be a finite number > 0, got 0");
  std::string t = minimal();
  t.replace(t.find("rate_fraction: 1"), 16, "rate_fraction: .inf");
  expect(t, ".inf", "clients[0].rate_fraction: must be a finite number > 0, got inf");
  const std::string process =
      "aggregate_rate: 10\nclients:\n  - rate_fraction: 1\n    arrival: {process: Poisson}\n"
      "    input_distribution: {type: constant, params: {value: 1}}\n"
      "    output_distribution: {type: constant, params: {value: 1}}\n";
  expect(process, "Poisson",
         "clients[0].arrival.process: unknown arrival process 'Poisson' (expected poisson, gamma, weibull or "
         "constant)");
  const std::string no_arrival =
      "aggregate_rate: 10\nclients:\n  - rate_fraction: 1\n"
      "    input_distribution: {type: constant, params: {value: 1}}\n"
      "    output_distribution: {type: constant, params: {value: 1}}\n";
  expect(no_arrival, "rate_fraction",
         "clients[0].arrival.process: unknown arrival process '' (expected poisson, gamma, weibull or constant)");
  auto with_arrival = [&](const std::string& arrival) {
    std::string t = minimal();
    return t.replace(t.find("{process: poisson}"), 18, arrival);
  };
  t = with_arrival("{process: weibull, cv: 10.5}");
  expect(t, "10.5", "clients[0].arrival.cv: weibull cv must lie in [0.01, 10.4], got 10.5");
  t = with_arrival("{process: gamma, cv: 0}");
  expect(t, "0}", "clients[0].arrival.cv: must be a finite number > 0, got 0");
  t = with_arrival("{process: poisson, cv: -.inf}");
  expect(t, "-.inf", "clients[0].arrival.cv: must be a finite number > 0, got -inf");
  expect(minimal("    prefix_length: -1\n"), "-1", "clients[0].prefix_length: must be >= 0, got -1");
  t = minimal();
  t.replace(t.find("{type: constant, params: {value: 10}}"), 37, "{type: normal}");
  expect(t, "normal",
         "clients[0].input_distribution.type: unknown distribution type 'normal' (expected gaussian, "
         "exponential, pareto_lognormal, constant or empirical)");
  t = minimal();
  t.replace(t.find("{value: 5}"), 10, "{value: .inf}");
  expect(t, ".inf", "clients[0].output_distribution.params.value: must be finite");
  // 5. cohorts
  const std::string cohort_head = "aggregate_rate: 10\nnum_requests: 5\ncohorts:\n  - id: c\n";
  const std::string cohort_tail =
      "    arrival: {process: poisson}\n"
      "    input_distribution: {type: constant, params: {value: 1}}\n"
      "    output_distribution: {type: constant, params: {value: 1}}\n";
  const auto cohort = [&](const std::string& fields) { return cohort_head + fields + cohort_tail; };
  expect(cohort("    population: 100001\n    rate_fraction: 1\n"), "100001",
         "cohorts[0].population: must be between 1 and 100000, got 100001");
  expect(cohort("    rate_fraction: 1\n"), "id: c", "cohorts[0].population: must be between 1 and 100000, got 0");
  expect(cohort("    population: 2\n    rate_fraction: -2\n"), "-2",
         "cohorts[0].rate_fraction: must be a finite number > 0, got -2");
  expect(cohort("    population: 2\n    rate_fraction: 1\n    slo_class: interactive\n"), "interactive",
         "cohorts[0].slo_class: unknown SLO class 'interactive' (expected critical, standard, sheddable, "
         "batch, background or empty)");
  t = cohort("    population: 2\n    rate_fraction: 1\n");
  t.replace(t.find("poisson"), 7, "uniform");
  expect(t, "uniform",
         "cohorts[0].arrival.process: unknown arrival process 'uniform' (expected poisson, gamma, weibull or "
         "constant)");
  t = cohort("    population: 2\n    rate_fraction: 1\n");
  t.replace(t.find("{value: 1}"), 10, "{value: .nan}");
  expect(t, ".nan", "cohorts[0].input_distribution.params.value: must be finite");
  const std::string pop = "    population: 2\n    rate_fraction: 1\n";
  expect(cohort(pop + "    diurnal: {peak_hour: 3, peak_to_trough_ratio: 0.5}\n"), "0.5",
         "cohorts[0].diurnal.peak_to_trough_ratio: must be a finite number >= 1, got 0.5");
  expect(cohort(pop + "    diurnal: {peak_hour: 24, peak_to_trough_ratio: 2}\n"), "24",
         "cohorts[0].diurnal.peak_hour: must be between 0 and 23, got 24");
  expect(cohort(pop + "    spike: {start_time_us: -5, duration_us: 2}\n"), "-5",
         "cohorts[0].spike.start_time_us: must be >= 0, got -5");
  expect(cohort(pop + "    spike: {start_time_us: 5}\n"), "{start_time_us: 5}",
         "cohorts[0].spike.duration_us: must be > 0, got 0");
  expect(cohort(pop + "    drain: {start_time_us: -1, ramp_duration_us: 2}\n"), "-1",
         "cohorts[0].drain.start_time_us: must be >= 0, got -1");
  expect(cohort(pop + "    drain: {start_time_us: 1, ramp_duration_us: -3}\n"), "-3",
         "cohorts[0].drain.ramp_duration_us: must be > 0, got -3");
  // The first failure wins: clients are checked before cohorts.
  expect(minimal("    slo_class: gold\n") + "cohorts:\n  - id: c\n", "gold",
         "clients[0].slo_class: unknown SLO class 'gold' (expected critical, standard, sheddable, batch, "
         "background or empty)");
}

TEST_CASE("workload spec: generation-time errors name the file position too", "[workload][spec][yaml][validation]") {
  TempDir dir("blis-spec");
  const std::string path = dir.str() + "/spec.yaml";
  std::string t = minimal();
  t.replace(t.find("{type: constant, params: {value: 5}}"), 36, "{type: gaussian, params: {mean: 5}}");
  CHECK(spec_error(dir, t) == path + ":" + pos_of(t, "{mean: 5}") +
                                         ": clients[0].output_distribution.params.std_dev: missing required "
                                         "parameter of the gaussian distribution");
  // A multimodal distribution is built at the client's first request.
  t = minimal("    multimodal: {image_distribution: {type: exponential}, image_count_distribution: {type: "
              "constant, params: {value: 2}}}\n");
  CHECK(spec_error(dir, t) == path + ":" + pos_of(t, "{type: exponential}") +
                                         ": clients[0].multimodal.image_distribution.params.mean: missing "
                                         "required parameter of the exponential distribution");
  // inference_perf is checked when it is expanded.
  const std::string ip = "inference_perf:\n  stages: [{rate: 8, duration: 0}]\n";
  CHECK(spec_error(dir, "num_requests: 3\n" + ip) ==
        path + ":" + pos_of("num_requests: 3\n" + ip, "0}") +
            ": inference_perf.stages[0].duration: must be > 0 seconds, got 0");
  const std::string ip2 = "num_requests: 3\ninference_perf:\n  stages: [{rate: 8, duration: 10}]\n";
  CHECK(spec_error(dir, ip2) == path + ":" + pos_of(ip2, "stages") + ": inference_perf.shared_prefix: is required");
  const std::string sg = "aggregate_rate: 1\nnum_requests: 3\nservegen_data: {path: /nonexistent}\n";
  CHECK(spec_error(dir, sg) == path + ":" + pos_of(sg, "/nonexistent") +
                                   ": servegen_data.path: no chunk-*-trace.csv files in /nonexistent");
}
