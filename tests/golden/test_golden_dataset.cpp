// The reference's golden dataset (spec engine.md §13.1): five blackbox runs
// over the reference's legacy test-only generator (spec workload.md §7.5),
// driven through the real cluster driver with the built-in blackbox plugin.
//
// Every number must match the reference to a relative 1e-9, except
// total_output_tokens: the reference excluded each request's first token
// (quirk Q6); blis counts every token, so it reports the golden value plus
// one per request.
#include "catch.hpp"

#include "../engine/engine_harness.hpp"

#include <blis/go_rand.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace blis;
using namespace blis::test;

namespace {

struct LengthParams {
  double mean, stdev;
  int64_t lo, hi;
};

struct GoldenCase {
  const char* name;
  int64_t total_kv_blocks;
  int64_t prefix_tokens;
  LengthParams prompt, output;
  int64_t num_requests;
  std::vector<double> alpha, beta;
  // Expected values.
  int64_t completed, input_tokens, output_tokens;  // output as the reference reports it
  double duration_s;
  double e2e[4], ttft[4], itl[4];  // mean, p90, p95, p99 (ms)
  double sched_p99;
  double responses_per_sec, tokens_per_sec;
};

// gauss(mean, sd, lo, hi) of the legacy generator: lo == hi takes no draw;
// otherwise the clamped normal draw rounded half away from zero, no floor.
int64_t legacy_gauss(GoRand& rng, const LengthParams& p) {
  if (p.lo == p.hi) return p.lo;
  double v = rng.norm_float64() * p.stdev + p.mean;
  v = std::min(static_cast<double>(p.hi), std::max(static_cast<double>(p.lo), v));
  return static_cast<int64_t>(std::round(v));
}

struct LegacyWorkload {
  std::vector<WorkloadRequest> requests;
  int64_t output_sum = 0;
};

// spec workload.md §7.5, with block hashes computed exactly as the real
// generator does: one chained hash per complete block of input ++ output.
LegacyWorkload legacy_generate(const GoldenCase& c, int64_t seed, double rate, int32_t block_size) {
  GoRand rng(seed);
  std::vector<uint32_t> prefix;
  for (int64_t k = 0; k < c.prefix_tokens; ++k)
    prefix.push_back(static_cast<uint32_t>(rng.intn(kMaxTokenId)));
  LegacyWorkload out;
  int64_t t = 0;
  const auto step = static_cast<int64_t>(1 / (rate / 1e6));  // rate 10 -> 99999
  for (int64_t i = 0; i < c.num_requests; ++i) {
    std::vector<uint32_t> seq = prefix;
    const int64_t p = legacy_gauss(rng, c.prompt);
    for (int64_t k = 0; k < p; ++k) seq.push_back(static_cast<uint32_t>(rng.intn(kMaxTokenId)));
    const int64_t o = legacy_gauss(rng, c.output);
    const auto input = static_cast<int32_t>(seq.size());
    for (int64_t k = 0; k < o; ++k) seq.push_back(static_cast<uint32_t>(rng.intn(kMaxTokenId)));

    WorkloadRequest r;
    r.id = static_cast<uint64_t>(i);
    r.arrival_us = t;
    r.input_tokens = input;
    r.output_tokens = static_cast<int32_t>(o);
    r.max_output_tokens = 0;  // unset: the engine's auto-fill applies
    r.block_hashes = block_hashes_of(seq, block_size);
    out.output_sum += o;
    out.requests.push_back(std::move(r));
    t += step;
  }
  return out;
}

// A number of the metrics JSON (Go's shortest round-trip formatting parses
// back to the exact double).
double json_number(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\": ";
  const auto at = json.find(needle);
  if (at == std::string::npos) {
    FAIL("key " << key << " missing from\n" << json);
  }
  return std::strtod(json.c_str() + at + needle.size(), nullptr);
}

std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool close(double actual, double expected, double rel = 1e-9) {
  if (expected == 0) return actual == 0;
  return std::fabs(actual - expected) <= rel * std::fabs(expected);
}

#define CHECK_REL(json, key, expected)                                                     \
  do {                                                                                     \
    const double actual_ = json_number(json, key);                                         \
    INFO(key << ": actual " << g17(actual_) << ", expected " << g17(expected));           \
    CHECK(close(actual_, (expected)));                                                     \
  } while (0)

const LengthParams kShortPrompt{70, 35, 2, 200}, kShortOutput{215, 80, 1, 512};
const LengthParams kLongPrompt{2048, 1974, 2, 3500}, kLongOutput{28, 60, 6, 200};

const std::vector<double> kAlpha1{232.46191091038054, 1.752360364195244, 3357.4400353290152};
const std::vector<double> kBeta1{5752.705191348184, 17.25086436834028, 5.999143920128404};

const GoldenCase kCases[] = {
    {"case 1: llama-3.1-8b TP1, prefix 284",
     7463, 284, kShortPrompt, kShortOutput, 300, kAlpha1, kBeta1,
     300, 106250, 64740, 31.667365,
     {2013.2948066666665, 2901.3757, 3103.7452999999996, 3851.81679},
     {14.329006666666666, 16.7517, 17.1321, 17.75328},
     {9.263048192771084, 9.199, 9.808, 11.142},
     6.61048, 9.473475295465853, 2044.3759687615309},
    {"case 2: llama-3.1-8b TP1, long prompts",
     7463, 0, kLongPrompt, kLongOutput, 300, kAlpha1, kBeta1,
     300, 545758, 12541, 30.670642,
     {526.5159966666668, 1232.7828000000002, 1357.6208499999996, 1930.9053299999998},
     {49.43404666666667, 84.6269, 86.36115, 86.91102000000001},
     {11.412533689498444, 9.168, 34.25, 44.405},
     11.62414, 9.781340736199784, 408.8926472422716},
    {"case 3: qwen2.5-7b TP4, prefix 284",
     1281766, 284, kShortPrompt, kShortOutput, 500,
     {6748.565706303843, 1.60068623289796, 1952.6809484593186},
     {2206.931356893263, 16.799213648645086, 218.0953180138298},
     500, 177729, 106904, 50.911304,
     {1351.413114, 2011.0411000000001, 2241.06085, 2673.94055},
     {16.859764, 18.8275, 19.3495, 19.84727},
     {6.241830754695802, 6.776, 6.994, 8.036},
     11.578489999999999, 9.821001638457345, 2099.808718315288},
    {"case 4: granite-3.1-8b TP2, long prompts",
     105497, 0, kLongPrompt, kLongOutput, 300,
     {10024.457261493666, 2.110235670377125, 5822.543580863752},
     {2395.9072629127068, 11.768985404449758, 8.894510818868516},
     300, 545758, 12541, 30.203003,
     {408.50021000000004, 931.6143, 1010.4696499999999, 1444.15346},
     {45.454480000000004, 69.9684, 70.507, 71.48877},
     {8.684611992664061, 8.244, 8.253, 31.458399999999877},
     19.64895, 9.932787147026406, 415.2236120361939},
    {"case 5: codellama-34b TP1, prefix 284, tight KV",
     2537, 284, kShortPrompt, kShortOutput, 500,
     {13450.510995636703, 0.041813767451373045, 0.0},
     {26595.2781995357, 96.28441960829817, 56.58626882402723},
     500, 177729, 106904, 60.291181,
     {7070.746886, 10414.3517, 11438.30385, 13903.15664},
     {66.844266, 78.7379, 80.93005, 84.44441},
     {32.75790718775724, 39.839, 41.659, 44.438},
     43.46654, 8.293086844658093, 1773.1283120826577},
};

void run_case(const GoldenCase& c) {
  INFO(c.name);
  LegacyWorkload w = legacy_generate(c, 42, 10.0, 16);
  REQUIRE(static_cast<int64_t>(w.requests.size()) == c.num_requests);
  // The generator itself (spec workload.md §7.5 check values).
  CHECK(w.output_sum == c.output_tokens + c.num_requests);

  ClusterConfig cfg;
  cfg.engine.total_kv_blocks = c.total_kv_blocks;
  cfg.engine.block_size = 16;
  cfg.engine.max_running = 256;
  cfg.engine.max_scheduled_tokens = 2048;
  cfg.engine.long_prefill_threshold = 0;
  cfg.engine.max_model_len = 4096;
  VectorSource src(std::move(w.requests));
  auto out = run_cluster(cfg, src, "blackbox", blackbox_config(c.alpha, c.beta));
  const std::string& j = out.json;
  INFO(j);

  CHECK(out.cluster.completed == c.completed);
  CHECK(out.cluster.still_queued == 0);
  CHECK(out.cluster.still_running == 0);
  CHECK(out.cluster.dropped_unservable == 0);
  CHECK(out.cluster.length_capped == 0);
  CHECK(out.cluster.input_tokens == c.input_tokens);
  // Quirk Q6 fixed: every request's first token counts too.
  CHECK(out.cluster.output_tokens == c.output_tokens + c.num_requests);
  CHECK(json_number(j, "total_output_tokens") == c.output_tokens + c.num_requests);
  CHECK(json_number(j, "completed_requests") == c.completed);
  CHECK(json_number(j, "total_input_tokens") == c.input_tokens);
  CHECK(out.cluster.preemptions == 0);
  CHECK(json_number(j, "preemption_count") == 0);
  CHECK(out.cluster.kv_allocation_failures == 0);
  for (const auto& inst : out.result.instances) CHECK(inst.final_kv_blocks == 0);

  CHECK_REL(j, "vllm_estimated_duration_s", c.duration_s);
  CHECK_REL(j, "responses_per_sec", c.responses_per_sec);
  CHECK_REL(j, "tokens_per_sec",
            static_cast<double>(c.output_tokens + c.num_requests) / c.duration_s);
  const char* pct[4] = {"mean", "p90", "p95", "p99"};
  for (int k = 0; k < 4; ++k) {
    CHECK_REL(j, std::string("e2e_") + pct[k] + "_ms", c.e2e[k]);
    CHECK_REL(j, std::string("ttft_") + pct[k] + "_ms", c.ttft[k]);
    CHECK_REL(j, std::string("itl_") + pct[k] + "_ms", c.itl[k]);
  }
  CHECK_REL(j, "scheduling_delay_p99_ms", c.sched_p99);
}

}  // namespace

TEST_CASE("golden dataset: legacy generator reproduces the reference's token totals", "[golden]") {
  // spec workload.md §7.5: inputs 106250 / 545758 / 177729; output sums
  // 65040 / 12841 / 107404 (the reference printed these minus one per request).
  struct Check {
    size_t index;
    int64_t input, output;
  };
  for (const Check& k : {Check{0, 106250, 65040}, Check{1, 545758, 12841}, Check{2, 177729, 107404}}) {
    LegacyWorkload w = legacy_generate(kCases[k.index], 42, 10.0, 16);
    int64_t in = 0;
    for (const auto& r : w.requests) in += r.input_tokens;
    CHECK(in == k.input);
    CHECK(w.output_sum == k.output);
    CHECK(w.requests[1].arrival_us == 99999);
    CHECK(w.requests.back().arrival_us == 99999 * (kCases[k.index].num_requests - 1));
  }
}

TEST_CASE("golden dataset case 1", "[golden]") { run_case(kCases[0]); }
TEST_CASE("golden dataset case 2", "[golden]") { run_case(kCases[1]); }
TEST_CASE("golden dataset case 3", "[golden]") { run_case(kCases[2]); }
TEST_CASE("golden dataset case 4", "[golden]") { run_case(kCases[3]); }
TEST_CASE("golden dataset case 5", "[golden]") { run_case(kCases[4]); }
