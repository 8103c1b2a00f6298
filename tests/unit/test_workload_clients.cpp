// Workload-spec clients beyond the plain ones: lifecycle windows (spec
// workload §5.6, §6.6), multimodal inputs (§6.7), multi-turn sessions (§6.8),
// cohorts (§5.10) and the inference-perf shorthand (§5.12), against the
// spec's worked numbers and draw-by-draw replays of the reference's order.
#include "catch.hpp"
#include "error_of.hpp"
#include "temp_dir.hpp"

#include <blis/errors.hpp>
#include <blis/go_rand.hpp>
#include <blis/workload.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "workload/samplers.hpp"
#include "workload/spec_internal.hpp"

using blis::ClientSpec;
using blis::DistSpec;
using blis::GoRand;
using blis::WorkloadRequest;
using blis::WorkloadSpec;

namespace {

using blis::test::error_of;

std::vector<WorkloadRequest> generate(const WorkloadSpec& spec, int64_t horizon, int64_t max_requests,
                                      int32_t block_size = 16) {
  auto src = blis::make_spec_workload(spec, horizon, max_requests, block_size);
  std::vector<WorkloadRequest> out;
  WorkloadRequest r;
  while (src->next(r)) {
    out.push_back(r);
    blis::extend_content(r, out.back().block_hashes, blis::content_blocks(r, block_size));  // as when scheduled
  }
  return out;
}

DistSpec constant(double v) { return {"constant", {{"value", v}}}; }
DistSpec gaussian(double mean, double sd, double lo, double hi) {
  return {"gaussian", {{"mean", mean}, {"std_dev", sd}, {"min", lo}, {"max", hi}}};
}
DistSpec exponential(double mean) { return {"exponential", {{"mean", mean}}}; }

ClientSpec client(const std::string& tenant, double fraction, const std::string& process, DistSpec in,
                  DistSpec out) {
  ClientSpec c;
  c.tenant_id = tenant;
  c.rate_fraction = fraction;
  c.arrival.process = process;
  c.input_distribution = std::move(in);
  c.output_distribution = std::move(out);
  return c;
}

WorkloadSpec one_client(double rate, ClientSpec c, int64_t seed = 42) {
  WorkloadSpec spec;
  spec.seed = seed;
  spec.aggregate_rate = rate;
  spec.clients = {std::move(c)};
  return spec;
}

blis::MultiTurnSpec turns(int64_t rounds, int64_t think, bool accumulate, bool single = false) {
  blis::MultiTurnSpec mt;
  mt.max_rounds = rounds;
  mt.think_time_us = think;
  mt.context_growth = accumulate ? "accumulate" : "";
  mt.single_session = single;
  return mt;
}

// The stream of the spec's only client (spec workload §7.3), no prefix.
GoRand client_stream(int64_t seed) {
  GoRand w(blis::derive_seed(seed, "workload-gen"));
  return GoRand(w.int63());
}

void skip_ids(GoRand& c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c.int31n(blis::kMaxTokenId);
}

using Row = std::tuple<int64_t, int32_t, int32_t>;  // arrival, input, output

std::vector<Row> rows(const std::vector<WorkloadRequest>& reqs) {
  std::vector<Row> out;
  for (const auto& r : reqs) out.emplace_back(r.arrival_us, r.input_tokens, r.output_tokens);
  return out;
}


}  // namespace

// ---- multi-turn sessions (spec workload §5.15, §6.8) ----

TEST_CASE("example B: multi-turn chat matches the reference's totals", "[workload][session]") {
  const auto spec =
      blis::load_workload_spec(std::string(BLIS_TEST_SOURCE_DIR) + "/examples/workload-spec/multiturn-chat-demo.yaml");
  const auto reqs = generate(spec, blis::kNoHorizon, spec.num_requests);
  REQUIRE(reqs.size() == 500);
  int64_t in = 0, out = 0;
  for (const auto& r : reqs) {
    in += r.input_tokens;
    out += r.output_tokens;
  }
  CHECK(in == 142429);
  CHECK(out == 32206);
  CHECK(reqs[0].arrival_us == 1012);
  CHECK(reqs[0].input_tokens == 154);
  CHECK(reqs[0].output_tokens == 50);
  CHECK(reqs[0].tenant_id == "chat-users");
  for (size_t i = 1; i < reqs.size(); ++i) CHECK(reqs[i - 1].arrival_us <= reqs[i].arrival_us);
}

TEST_CASE("sessions draw in the reference's order", "[workload][session]") {
  // Sessions far apart (mean 1 s) with short rounds: generation order is
  // arrival order, so the requests can be replayed draw by draw.
  ClientSpec c = client("t", 1, "poisson", gaussian(100, 30, 10, 400), gaussian(20, 5, 1, 60));
  c.reasoning = blis::ReasoningSpec{gaussian(30, 10, 0, 100), turns(4, 10, true)};
  const auto spec = one_client(1.0, c, 7);
  const auto reqs = generate(spec, blis::kNoHorizon, 20);
  REQUIRE(reqs.size() == 20);

  GoRand rng = client_stream(7);
  blis::workload::ArrivalSampler arrival(c.arrival, 1.0 / 1e6, "t");
  blis::workload::LengthSampler in(c.input_distribution, "in"), out(c.output_distribution, "out"),
      ratio(c.reasoning->reason_ratio_distribution, "ratio");
  std::vector<Row> expected;
  int64_t start = 0;
  while (expected.size() < 20) {
    start += arrival.next(rng);
    rng.int63();  // session id
    int64_t t = start, context = 0;
    for (int r = 0; r < 4; ++r) {
      const int64_t il = in.sample(rng), ol = out.sample(rng);
      skip_ids(rng, il + ol);
      ratio.sample(rng);
      expected.emplace_back(t, static_cast<int32_t>(context + il), static_cast<int32_t>(ol));
      context += il + ol;
      t += 10 + ol;
    }
  }
  CHECK(rows(reqs) == expected);
}

TEST_CASE("accumulated context: each round repeats the conversation so far", "[workload][session]") {
  ClientSpec c = client("t", 1, "constant", constant(10), constant(5));
  c.prefix_group = "system";
  c.prefix_length = 20;
  c.reasoning = blis::ReasoningSpec{{}, turns(3, 100, true)};
  const auto reqs = generate(one_client(1.0, c), blis::kNoHorizon, 3, 4);
  REQUIRE(reqs.size() == 3);
  // One session at 1 s: rounds 105 µs apart (think 100 + 5 output tokens).
  CHECK(rows(reqs) == std::vector<Row>{{1000000, 30, 5}, {1000105, 45, 5}, {1000210, 60, 5}});
  // Round r's whole sequence (input + output) is the start of round r + 1's input.
  for (size_t r = 0; r + 1 < reqs.size(); ++r) {
    const auto& a = reqs[r].block_hashes;
    const auto& b = reqs[r + 1].block_hashes;
    REQUIRE(a.size() == static_cast<size_t>(reqs[r].input_tokens + reqs[r].output_tokens) / 4);
    CHECK(std::equal(a.begin(), a.end(), b.begin()));
  }
  // Independent rounds share only the prefix.
  c.reasoning = blis::ReasoningSpec{{}, turns(3, 100, false)};
  const auto flat = generate(one_client(1.0, c), blis::kNoHorizon, 3, 4);
  CHECK(rows(flat) == std::vector<Row>{{1000000, 30, 5}, {1000105, 30, 5}, {1000210, 30, 5}});
  CHECK(flat[0].block_hashes[4] == flat[1].block_hashes[4]);  // 20-token prefix = 5 blocks
  CHECK(flat[0].block_hashes[5] != flat[1].block_hashes[5]);
}

TEST_CASE("overlapping sessions leave in arrival order", "[workload][session]") {
  // A session starts every ms; its three rounds are 1.5 ms apart.
  ClientSpec c = client("t", 1, "constant", constant(3), constant(1));
  c.reasoning = blis::ReasoningSpec{{}, turns(3, 1499, false)};
  const auto reqs = generate(one_client(1000.0, c), blis::kNoHorizon, 8);
  std::vector<int64_t> arrivals;
  for (const auto& r : reqs) arrivals.push_back(r.arrival_us);
  CHECK(arrivals == std::vector<int64_t>{1000, 2000, 2500, 3000, 3500, 4000, 4000, 4500});
  for (size_t i = 0; i < reqs.size(); ++i) CHECK(reqs[i].id == i);
}

TEST_CASE("a session client stops at 2 x num_requests generated rounds", "[workload][session]") {
  // Client A starts a session every ms whose later rounds come a second
  // later; client B sends one request every 4 ms. With 3 requests, A may
  // generate 6 rounds: two sessions of five, so its session at 3 ms never
  // exists; with 6 requests it generates three.
  ClientSpec a = client("A", 0.8, "constant", constant(3), constant(1));
  a.reasoning = blis::ReasoningSpec{{}, turns(5, 1000000, false)};
  ClientSpec b = client("B", 0.2, "constant", constant(3), constant(1));
  WorkloadSpec spec;
  spec.aggregate_rate = 1250;
  spec.clients = {a, b};
  auto tenants = [](const std::vector<WorkloadRequest>& reqs) {
    std::vector<std::string> out;
    for (const auto& r : reqs) out.push_back(r.tenant_id.str() + "@" + std::to_string(r.arrival_us));
    return out;
  };
  CHECK(tenants(generate(spec, blis::kNoHorizon, 3)) == std::vector<std::string>{"A@1000", "A@2000", "B@4000"});
  CHECK(tenants(generate(spec, blis::kNoHorizon, 6)) ==
        std::vector<std::string>{"A@1000", "A@2000", "A@3000", "B@4000", "B@8000", "B@12000"});
}

TEST_CASE("single-session clients run one session from the first window", "[workload][session]") {
  ClientSpec c = client("t", 1, "constant", constant(2), constant(3));
  c.reasoning = blis::ReasoningSpec{{}, turns(4, 1000, false, true)};
  c.lifecycle = std::vector<blis::LifecycleWindow>{{5000000, 5002010}};
  // Start = window start + one interval (1 s at 1 req/s); rounds 1003 µs
  // apart; the fourth (at +3009) falls outside the window and is dropped.
  const auto reqs = generate(one_client(1.0, c), blis::kNoHorizon, 100);
  CHECK(rows(reqs) == std::vector<Row>{});  // 6000000 is outside [5000000, 5002010)
  c.lifecycle = std::vector<blis::LifecycleWindow>{{5000000, 6002010}};
  CHECK(rows(generate(one_client(1.0, c), blis::kNoHorizon, 100)) ==
        std::vector<Row>{{6000000, 2, 3}, {6001003, 2, 3}, {6002006, 2, 3}});
  // Rounds from the first one at or past the horizon on are dropped.
  CHECK(rows(generate(one_client(1.0, c), 6001003, 100)) == std::vector<Row>{{6000000, 2, 3}});
}

TEST_CASE("session clients: what blis refuses and what produces nothing", "[workload][session]") {
  ClientSpec c = client("t", 1, "poisson", constant(2), constant(3));
  c.reasoning = blis::ReasoningSpec{{}, turns(0, 10, false)};
  // No rounds: nothing, and no endless loop on an unbounded horizon.
  CHECK(generate(one_client(1.0, c), blis::kNoHorizon, 5).empty());
  c.reasoning = blis::ReasoningSpec{{}, turns(3, -1, false)};
  CHECK(error_of([&] { generate(one_client(1.0, c), blis::kNoHorizon, 5); }) ==
        "clients[0].reasoning.multi_turn.think_time_us: a negative think time (-1) is not supported by blis yet");
  // A reasoning block without multi_turn changes nothing.
  ClientSpec plain = client("t", 1, "poisson", exponential(50), exponential(20));
  ClientSpec with = plain;
  with.reasoning = blis::ReasoningSpec{gaussian(30, 10, 0, 100), std::nullopt};
  const auto a = generate(one_client(10.0, plain), blis::kNoHorizon, 20);
  const auto b = generate(one_client(10.0, with), blis::kNoHorizon, 20);
  CHECK(rows(a) == rows(b));
}

// ---- lifecycle windows (spec workload §5.6, §6.12) ----

TEST_CASE("lifecycle windows keep only arrivals inside them", "[workload][lifecycle]") {
  ClientSpec c = client("t", 1, "constant", constant(3), constant(2));
  c.lifecycle = std::vector<blis::LifecycleWindow>{{0, 5000}, {10000, 12500}};
  // One arrival per ms; the unbounded horizon ends at the last window.
  const auto reqs = generate(one_client(1000.0, c), blis::kNoHorizon, 1000);
  std::vector<int64_t> arrivals;
  for (const auto& r : reqs) arrivals.push_back(r.arrival_us);
  CHECK(arrivals == std::vector<int64_t>{1000, 2000, 3000, 4000, 10000, 11000, 12000});
  // Suppressed arrivals draw only their interval: the content of the kept
  // ones is drawn as if the others never were.
  ClientSpec p = client("t", 1, "poisson", exponential(30), exponential(10));
  p.lifecycle = std::vector<blis::LifecycleWindow>{{100000, 300000}};
  const auto kept = generate(one_client(100.0, p, 3), blis::kNoHorizon, 1000);
  GoRand rng = client_stream(3);
  blis::workload::ArrivalSampler arrival(p.arrival, 100.0 / 1e6, "t");
  blis::workload::LengthSampler in(p.input_distribution, "in"), out(p.output_distribution, "out");
  std::vector<Row> expected;
  for (int64_t t = arrival.next(rng); t < 300000; t += arrival.next(rng)) {
    if (t < 100000) continue;
    const int64_t il = in.sample(rng), ol = out.sample(rng);
    skip_ids(rng, il + ol);
    expected.emplace_back(t, static_cast<int32_t>(il), static_cast<int32_t>(ol));
  }
  CHECK_FALSE(expected.empty());
  CHECK(rows(kept) == expected);
  // An empty window list never emits (and does not spin).
  c.lifecycle = std::vector<blis::LifecycleWindow>{};
  CHECK(generate(one_client(1000.0, c), blis::kNoHorizon, 10).empty());
}

// ---- multimodal inputs (spec workload §6.7) ----

TEST_CASE("multimodal inputs add up their modalities", "[workload][multimodal]") {
  ClientSpec c = client("t", 1, "constant", constant(999), constant(7));
  blis::MultimodalSpec mm;
  mm.text_distribution = constant(10);
  mm.image_distribution = constant(100);
  mm.image_count_distribution = constant(2);
  mm.audio_distribution = constant(40);  // no count distribution: no audio
  mm.video_distribution = constant(5);
  mm.video_count_distribution = constant(3);
  c.multimodal = mm;
  c.prefix_group = "p";
  c.prefix_length = 4;
  const auto reqs = generate(one_client(1.0, c), blis::kNoHorizon, 2);
  CHECK(rows(reqs) == std::vector<Row>{{1000000, 4 + 225, 7}, {2000000, 4 + 225, 7}});
  // Nothing at all still makes one token.
  c.multimodal = blis::MultimodalSpec{};
  CHECK(std::get<1>(rows(generate(one_client(1.0, c), blis::kNoHorizon, 1))[0]) == 4 + 1);
}

TEST_CASE("multimodal inputs draw in the reference's order", "[workload][multimodal]") {
  ClientSpec c = client("t", 1, "constant", constant(1), exponential(20));
  blis::MultimodalSpec mm;
  mm.text_distribution = gaussian(50, 10, 1, 100);
  mm.image_distribution = exponential(30);
  mm.image_count_distribution = {"empirical", {{"1", 0.5}, {"3", 0.5}}};
  c.multimodal = mm;
  const auto reqs = generate(one_client(1.0, c, 11), blis::kNoHorizon, 10);
  GoRand rng = client_stream(11);
  blis::workload::LengthSampler text(mm.text_distribution, "a"), count(mm.image_count_distribution, "b"),
      image(mm.image_distribution, "c"), out(c.output_distribution, "d");
  std::vector<Row> expected;
  for (int k = 1; k <= 10; ++k) {
    int64_t total = text.sample(rng);
    for (int64_t n = count.sample(rng); n > 0; --n) total += image.sample(rng);
    skip_ids(rng, total);  // input ids come before the output length
    const int64_t ol = out.sample(rng);
    skip_ids(rng, ol);
    expected.emplace_back(k * int64_t{1000000}, static_cast<int32_t>(total), static_cast<int32_t>(ol));
  }
  CHECK(rows(reqs) == expected);
}

TEST_CASE("a request is multimodal when it drew image, audio or video tokens", "[workload][multimodal][epd]") {
  ClientSpec c = client("t", 1, "constant", constant(999), constant(7));
  blis::MultimodalSpec mm;
  mm.text_distribution = constant(10);
  mm.image_distribution = constant(100);
  mm.image_count_distribution = {"empirical", {{"0", 0.5}, {"1", 0.5}}};
  c.multimodal = mm;
  const auto reqs = generate(one_client(1.0, c, 3), blis::kNoHorizon, 40);
  int64_t with = 0;
  for (const WorkloadRequest& r : reqs) {
    CHECK(multimodal(r) == (r.input_tokens > 10));  // an image of 100 tokens, or none
    CHECK(r.image_tokens == r.input_tokens - 10);
    CHECK(r.audio_tokens + r.video_tokens == 0);
    with += multimodal(r) ? 1 : 0;
  }
  CHECK(with > 0);
  CHECK(with < 40);
  // Text only (no multimodal block): none is.
  const auto text = generate(one_client(1.0, client("t", 1, "constant", constant(99), constant(7))), blis::kNoHorizon, 5);
  for (const WorkloadRequest& r : text) CHECK_FALSE(multimodal(r));
}

// ---- cohorts (spec workload §5.10) ----

TEST_CASE("cohort windows match the reference's values", "[workload][cohort]") {
  const auto d = blis::workload::diurnal_windows({14, 3.0});
  REQUIRE(d.size() == 24);
  CHECK(d[0].start_us == 0);
  CHECK(d[0].end_us == 1360769515);
  CHECK(d[2].start_us == 7200000000);
  CHECK(d[2].end_us == 8400000000);
  CHECK(d[10].start_us == 36000000000);
  CHECK(d[10].end_us == 38999999999);
  CHECK(d[14].start_us == 50400000000);
  CHECK(d[14].end_us == 54000000000);
  const auto w = blis::workload::drain_windows({100, 1005});
  REQUIRE(w.size() == 11);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 100},   {100, 200}, {200, 290}, {300, 380},
                                                             {400, 470}, {500, 560}, {600, 650}, {700, 740},
                                                             {800, 830}, {900, 920}, {1000, 1010}};
  for (size_t i = 0; i < w.size(); ++i) {
    CHECK(w[i].start_us == expected[i].first);
    CHECK(w[i].end_us == expected[i].second);
  }
}

TEST_CASE("cohort members are clients after the explicit ones", "[workload][cohort]") {
  // A cohort of 4 sharing 0.8 behaves as 4 clients of 0.2 each, appended
  // after the explicit clients, with the spike and drain windows.
  WorkloadSpec with_cohort;
  with_cohort.seed = 5;
  with_cohort.aggregate_rate = 50;
  with_cohort.clients = {client("x", 0.4, "poisson", exponential(40), exponential(10))};
  blis::CohortSpec cohort;
  cohort.id = "crowd";
  cohort.population = 4;
  cohort.tenant_id = "crowd";
  cohort.slo_class = "critical";
  cohort.rate_fraction = 0.8;
  cohort.arrival.process = "gamma";
  cohort.arrival.cv = -3.0;  // not validated for cohorts: becomes 1
  cohort.input_distribution = exponential(60);
  cohort.output_distribution = exponential(15);
  cohort.prefix_group = "shared";
  cohort.spike = blis::SpikeSpec{100000, 400000};
  cohort.drain = blis::DrainSpec{300000, 100000};
  with_cohort.cohorts = {cohort};

  WorkloadSpec explicit_spec = with_cohort;
  explicit_spec.cohorts.clear();
  for (int j = 0; j < 4; ++j) {
    ClientSpec m = client("crowd", 0.2, "gamma", exponential(60), exponential(15));
    m.slo_class = "critical";
    m.arrival.cv = 1.0;
    m.prefix_group = "shared";
    m.lifecycle = std::vector<blis::LifecycleWindow>{{100000, 500000}};
    for (const auto& w : blis::workload::drain_windows(*cohort.drain)) m.lifecycle->push_back(w);
    explicit_spec.clients.push_back(m);
  }
  const auto a = generate(with_cohort, blis::kNoHorizon, 200);
  const auto b = generate(explicit_spec, blis::kNoHorizon, 200);
  REQUIRE(a.size() == b.size());
  REQUIRE(a.size() > 20);
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].arrival_us == b[i].arrival_us);
    CHECK(a[i].tenant_id == b[i].tenant_id);
    CHECK(a[i].slo_class == b[i].slo_class);
    CHECK(a[i].block_hashes == b[i].block_hashes);
  }
  // A NaN cv would hang the reference's gamma sampler: refused.
  with_cohort.cohorts[0].arrival.cv = std::nan("");
  CHECK(error_of([&] { generate(with_cohort, blis::kNoHorizon, 10); }) ==
        "cohorts[0].arrival.cv: a NaN cv can never yield a gamma arrival");
}

// ---- inference-perf shorthand (spec workload §5.12) ----

TEST_CASE("inference_perf expands into prefix-sharing clients", "[workload][inference-perf]") {
  WorkloadSpec spec;
  spec.seed = 42;
  blis::InferencePerfSpec ip;
  ip.stages = {{8, 600}, {20, 300}};
  ip.shared_prefix = blis::SharedPrefixSpec{2, 3, 100, 447, 248, false};
  spec.inference_perf = ip;
  WorkloadSpec two = spec;
  blis::workload::expand_inference_perf(two);
  CHECK(two.category == "language");
  CHECK(two.aggregate_rate == 28);
  REQUIRE(two.clients.size() == 12);
  const ClientSpec& c = two.clients[4];  // stage 0, prompt 1, user 1
  CHECK(c.id == "stage-0-prompt-1-user-1");
  CHECK(c.tenant_id == "prompt-1");
  CHECK(c.prefix_group == "prompt-1");
  CHECK(c.prefix_length == 100);
  CHECK(c.slo_class == "batch");
  CHECK(c.rate_fraction == 8.0 / 6);
  CHECK(c.arrival.process == "poisson");
  CHECK(c.input_distribution.params.at("value") == 447);
  CHECK(c.output_distribution.params.at("value") == 248);
  REQUIRE(c.lifecycle);
  CHECK((*c.lifecycle)[0].start_us == 0);
  CHECK((*c.lifecycle)[0].end_us == 600000000);
  CHECK((*two.clients[11].lifecycle)[0].start_us == 600000000);
  CHECK((*two.clients[11].lifecycle)[0].end_us == 900000000);
  CHECK_FALSE(c.reasoning);

  WorkloadSpec one = spec;
  one.inference_perf->stages = {{8, 600}};
  one.inference_perf->shared_prefix->enable_multi_turn_chat = true;
  one.category = "language";  // a category given is kept
  blis::workload::expand_inference_perf(one);
  CHECK(one.category == "language");
  REQUIRE(one.clients.size() == 6);
  CHECK(one.clients[0].id == "prompt-0-user-0");
  CHECK(one.clients[0].rate_fraction == 1.0 / 6);
  CHECK_FALSE(one.clients[0].lifecycle);
  REQUIRE(one.clients[0].reasoning);
  const auto& mt = *one.clients[0].reasoning->multi_turn;
  CHECK(mt.max_rounds == 800);  // ceil(8 x 600 / 6)
  CHECK(mt.think_time_us == 750000);  // 6 / 8 s
  CHECK(mt.single_session);
  CHECK(mt.context_growth.empty());

  WorkloadSpec huge = spec;
  huge.inference_perf->shared_prefix = blis::SharedPrefixSpec{2000, 1000, 100, 447, 248, false};
  CHECK(error_of([&] { blis::workload::expand_inference_perf(huge); }) ==
        "inference_perf.shared_prefix: 2000 x 1000 clients per stage is too many (at most 1000000)");

  // Both stages end: an unbounded horizon still terminates (spec workload §6.12).
  const auto reqs = generate(spec, blis::kNoHorizon, 1000000);
  CHECK(reqs.size() > 10000);
  CHECK(reqs.back().arrival_us < 900000000);
  CHECK(reqs.front().input_tokens == 100 + 447);
}

// ---- ServeGen data (spec workload §5.11) ----

// Windows are visited in key text order: "1200" (no output PMF), then "30".
TEST_CASE("servegen_data: one client per chunk, from its busiest row and first usable window",
          "[workload][servegen]") {
  blis::test::TempDir dir("blis-servegen");
  dir.write("chunk-10-trace.csv",
            "0, 1.5, 2.0, Gamma\n600, 3.0, 1.5, Gamma\n1200, 3.0, 9, Weibull\nbad, x, 1, Gamma\n");
  dir.write("chunk-10-dataset.json",
            R"({"600": {"input_tokens": "{8: 1}", "output_tokens": "{8: 1}"},
                "1200": {"input_tokens": "{5: 1}", "output_tokens": ""},
                "30": {"input_tokens": "{100: 0.5, 200.7: 0.5,}", "output_tokens": "{10: 1}"},
                "abc": {"input_tokens": "{7: 1}", "output_tokens": "{7: 1}"}})");
  dir.write("chunk-2-trace.csv", "0,2.0,1.0,-\n700,5.0,2.0,weibull\n");
  dir.write("chunk-2-dataset.json",
            R"({"0": {"input_tokens": "{50: 2, 60: 2e0}", "output_tokens": "{20: 1.0}", "other": "x"}})");
  dir.write("chunk-3-trace.csv", "0,0,1,Gamma\n");  // no traffic: skipped
  blis::ServeGenDataSpec sg;
  sg.path = dir.str();
  auto clients = blis::workload::load_servegen_clients(sg);
  REQUIRE(clients.size() == 2);
  // "chunk-10" sorts before "chunk-2".
  CHECK(clients[0].id == "servegen-chunk-10");
  CHECK(clients[0].tenant_id == "chunk-10");
  CHECK(clients[0].rate_fraction == 3.0);  // the first of the two busiest rows
  CHECK(clients[0].arrival.process == "gamma");
  CHECK(clients[0].arrival.cv == 1.5);
  CHECK(clients[0].input_distribution.type == "empirical");
  CHECK(clients[0].input_distribution.params == std::map<std::string, double>{{"100", 0.5}, {"200", 0.5}});
  CHECK(clients[0].output_distribution.params == std::map<std::string, double>{{"10", 1}});
  CHECK(clients[1].id == "servegen-chunk-2");
  CHECK(clients[1].arrival.process == "weibull");
  CHECK(clients[1].arrival.cv == 2.0);
  CHECK(clients[1].input_distribution.params == std::map<std::string, double>{{"50", 2}, {"60", 2}});
  // Spans are in seconds: before 600 s chunk 2's busiest row is the poisson one.
  sg.span_end = 600;
  clients = blis::workload::load_servegen_clients(sg);
  CHECK(clients[1].arrival.process == "poisson");
  CHECK_FALSE(clients[1].arrival.cv);
  CHECK(clients[1].rate_fraction == 2.0);
  CHECK(clients[0].rate_fraction == 1.5);

  // Through a spec: the chunk rates are weights of aggregate_rate.
  const std::string spec_path = dir.write(
      "spec.yaml", "aggregate_rate: 50\nnum_requests: 40\nservegen_data: {path: " + dir.str() + "}\n");
  const auto spec = blis::load_workload_spec(spec_path);
  const auto reqs = generate(spec, blis::kNoHorizon, spec.num_requests);
  REQUIRE(reqs.size() == 40);
  for (const auto& r : reqs) {
    if (r.tenant_id == "chunk-10") {
      CHECK((r.input_tokens == 100 || r.input_tokens == 200));
      CHECK(r.output_tokens == 10);
    } else {
      CHECK(r.tenant_id == "chunk-2");
      CHECK((r.input_tokens == 50 || r.input_tokens == 60));
      CHECK(r.output_tokens == 20);
    }
  }
}

TEST_CASE("servegen_data: errors name the data", "[workload][servegen]") {
  blis::test::TempDir dir("blis-servegen");
  blis::ServeGenDataSpec sg;
  sg.path = dir.str();
  const auto load = [&] { blis::workload::load_servegen_clients(sg); };
  CHECK(error_of(load) == "servegen_data.path: no chunk-*-trace.csv files in " + dir.str());
  dir.write("chunk-1-trace.csv", "0,1,1,Gamma\n");
  CHECK(error_of(load).rfind("servegen_data.path: " + dir.str() + "/chunk-1-dataset.json: cannot read", 0) == 0);
  dir.write("chunk-1-dataset.json", R"({"0": {"input_tokens": "{1: 1}", "output_tokens": 5}})");
  CHECK(error_of(load) == "servegen_data.path: " + dir.str() +
                              "/chunk-1-dataset.json: window \"0\" field \"output_tokens\" is not a string");
  dir.write("chunk-1-dataset.json", R"({"0": {"input_tokens": "{1: 1}", "output_tokens": "{}"}})");
  CHECK(error_of(load) == "servegen_data.path: " + dir.str() +
                              "/chunk-1-dataset.json window 0 output_tokens: empty PDF dictionary");
  dir.write("chunk-1-trace.csv", "0,1,1,Gamma\n5,2\n");
  CHECK(error_of(load) == "servegen_data.path: " + dir.str() +
                              "/chunk-1-trace.csv:2: 2 fields where the first row has 4");
  dir.write("chunk-1-trace.csv", "0,0,1,Gamma\n");
  CHECK(error_of(load) == "servegen_data.path: no chunk in " + dir.str() + " has a trace row with a rate > 0");
}
