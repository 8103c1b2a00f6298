// Workload generation: samplers (spec workload §6.10, §6.11), the default
// workload's reference values (§2), spec workloads (§5.13, §5.14, §6), content
// hashes, and exact trace replay.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "blis/block_hash.hpp"
#include "blis/errors.hpp"
#include "blis/go_rand.hpp"
#include "blis/plugin.h"
#include "blis/workload.hpp"
#include "catch.hpp"
#include "workload/request_streams.hpp"
#include "workload/samplers.hpp"

using blis::GoRand;
using blis::WorkloadRequest;

namespace {

// The requests of a source, their lazy content made complete (as the engine
// makes it when it schedules them).
std::vector<WorkloadRequest> drain(blis::WorkloadSource& src, size_t limit = 10'000'000, int32_t block_size = 16) {
  std::vector<WorkloadRequest> out;
  WorkloadRequest r;
  while (out.size() < limit && src.next(r)) {
    out.push_back(r);
    blis::extend_content(r, out.back().block_hashes, blis::content_blocks(r, block_size));
  }
  return out;
}

std::vector<WorkloadRequest> run_spec(const blis::WorkloadSpec& spec, int64_t horizon,
                                      int64_t max_requests, int32_t block_size = 16) {
  auto src = blis::make_spec_workload(spec, horizon, max_requests, block_size);
  return drain(*src, 10'000'000, block_size);
}

// The own part of lazy content: blocks [first, blocks) chained from `prev`.
std::vector<uint64_t> own_chain(uint64_t prev, uint64_t seed, int64_t first, int64_t blocks) {
  std::vector<uint64_t> out;
  for (int64_t k = first; k < blocks; ++k) out.push_back(prev = blis::own_block_hash(prev, seed, k));
  return out;
}

std::vector<WorkloadRequest> run_default(double rate, int64_t n, int64_t prefix = 0,
                                         int32_t block_size = 16) {
  blis::DistributionWorkload w;
  w.rate = rate;
  w.num_requests = n;
  w.prefix_tokens = prefix;
  const auto spec = blis::synthesize_distribution_spec(w, 42);
  return run_spec(spec, blis::kNoHorizon, spec.num_requests, block_size);
}

// Chained block hashes of a token sequence, computed independently of the
// generator (complete blocks only).
std::vector<uint64_t> hash_blocks(const std::vector<uint32_t>& tokens, int32_t block_size) {
  std::vector<uint64_t> out;
  uint64_t prev = blis::kEmptyPrefixHash;
  for (size_t start = 0; start + static_cast<size_t>(block_size) <= tokens.size();
       start += static_cast<size_t>(block_size)) {
    blis::BlockHasher h(prev);
    for (size_t k = start; k < start + static_cast<size_t>(block_size); ++k) h.add(tokens[k]);
    prev = h.finish();
    out.push_back(prev);
  }
  return out;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const blis::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

blis::DistSpec gaussian(double mean, double sd, double lo, double hi) {
  return {"gaussian", {{"mean", mean}, {"std_dev", sd}, {"min", lo}, {"max", hi}}};
}
blis::DistSpec exponential(double mean) { return {"exponential", {{"mean", mean}}}; }

// Example A of spec workload §5.14.
blis::WorkloadSpec example_a() {
  blis::WorkloadSpec spec;
  spec.version = "2";
  spec.seed = 42;
  spec.category = "language";
  spec.aggregate_rate = 500.0;
  spec.num_requests = 200;
  blis::ClientSpec a;
  a.id = "chat-with-system-prompt";
  a.tenant_id = "tenant-A";
  a.slo_class = "standard";
  a.rate_fraction = 0.8;
  a.streaming = true;
  a.prefix_group = "long-system-prompt";
  a.prefix_length = 256;
  a.arrival.process = "poisson";
  a.input_distribution = gaussian(64, 20, 16, 256);
  a.output_distribution = exponential(128);
  blis::ClientSpec b;
  b.id = "unique-requests";
  b.tenant_id = "tenant-B";
  b.slo_class = "batch";
  b.rate_fraction = 0.2;
  b.arrival.process = "poisson";
  b.input_distribution = exponential(512);
  b.output_distribution = exponential(256);
  spec.clients = {a, b};
  return spec;
}

std::vector<int64_t> iats(const blis::ArrivalSpec& spec, double rate, int n) {
  blis::workload::ArrivalSampler sampler(spec, rate, "test");
  GoRand r(42);
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.next(r));
  return out;
}

std::vector<int64_t> lengths(const blis::DistSpec& spec, int n) {
  blis::workload::LengthSampler sampler(spec, "test");
  GoRand r(42);
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.sample(r));
  return out;
}

}  // namespace

// ---- samplers (spec workload §6.10, §6.11) ----

TEST_CASE("weibull shape from cv matches the reference bisection", "[workload][sampler]") {
  using blis::workload::weibull_shape_from_cv;
  CHECK(weibull_shape_from_cv(0.05) == 25.075);
  CHECK(weibull_shape_from_cv(0.1) == 12.197265625);
  CHECK(weibull_shape_from_cv(0.5) == 2.0999511718750004);
  CHECK(weibull_shape_from_cv(1) == 0.99936828613281237);
  CHECK(weibull_shape_from_cv(2) == 0.54282455444335942);
  CHECK(weibull_shape_from_cv(3.5) == 0.37533626556396482);
  CHECK(weibull_shape_from_cv(10) == 0.2332141637802124);
  CHECK(weibull_shape_from_cv(10.4) == 0.2299510955810547);
  bool converged = true;
  CHECK(std::fabs(weibull_shape_from_cv(0.01, &converged) - 100) < 1e-9);
  CHECK_FALSE(converged);
}

TEST_CASE("arrival samplers reproduce the reference draws", "[workload][sampler]") {
  const double rate = 1e-5;  // 10 req/s in req/µs
  blis::ArrivalSpec poisson{"poisson", std::nullopt};
  CHECK(iats(poisson, rate, 6) == std::vector<int64_t>{49573, 13054, 15323, 33844, 11596, 105565});
  blis::ArrivalSpec gamma2{"gamma", 2.0};
  CHECK(iats(gamma2, rate, 6) == std::vector<int64_t>{8069, 797, 290133, 10134, 8822, 11371});
  blis::ArrivalSpec gamma05{"gamma", 0.5};
  CHECK(iats(gamma05, rate, 6) == std::vector<int64_t>{187969, 69978, 98130, 64855, 188889, 41929});
  blis::ArrivalSpec weibull2{"weibull", 2.0};
  CHECK(iats(weibull2, rate, 6) ==
        std::vector<int64_t>{56082, 363104, 16288, 131528, 470256, 53297});
  // Constant spacing draws nothing and truncates 1/rate (spec workload §2).
  blis::ArrivalSpec constant{"constant", std::nullopt};
  CHECK(iats(constant, 10 / 1e6, 3) == std::vector<int64_t>{99999, 99999, 99999});
  // A gamma cv above 10 falls back to poisson.
  blis::ArrivalSpec gamma11{"gamma", 11.0};
  CHECK(iats(gamma11, rate, 6) == iats(poisson, rate, 6));
}

TEST_CASE("length samplers reproduce the reference draws", "[workload][sampler]") {
  CHECK(lengths(gaussian(512, 256, 2, 7000), 8) ==
        std::vector<int64_t>{910, 544, 385, 830, 546, 821, 352, 673});
  CHECK(lengths(exponential(128), 8) == std::vector<int64_t>{63, 17, 20, 43, 15, 135, 110, 19});
  blis::DistSpec pareto{
      "pareto_lognormal",
      {{"alpha", 1.5}, {"xm", 50}, {"mu", 5.5}, {"sigma", 1.2}, {"mix_weight", 0.3}}};
  CHECK(lengths(pareto, 8) == std::vector<int64_t>{284, 1089, 95, 521, 90, 699, 370, 2093});
  blis::DistSpec empirical{"empirical", {{"100", 0.2}, {"200", 0.5}, {"400", 0.3}}};
  CHECK(lengths(empirical, 8) == std::vector<int64_t>{200, 100, 200, 200, 100, 200, 400, 200});
}

TEST_CASE("length samplers handle the edge cases of the reference", "[workload][sampler]") {
  // min == max returns min without a draw and without the floor at 1.
  CHECK(lengths(gaussian(0, 0, 0, 0), 3) == std::vector<int64_t>{0, 0, 0});
  CHECK(lengths(gaussian(5, 1, 7, 7), 2) == std::vector<int64_t>{7, 7});
  // min > max always yields max.
  CHECK(lengths(gaussian(512, 256, 100, 50), 3) == std::vector<int64_t>{50, 50, 50});
  // constant truncates and floors at 1.
  CHECK(lengths({"constant", {{"value", 2.5}}}, 2) == std::vector<int64_t>{2, 2});
  CHECK(lengths({"constant", {{"value", 0}}}, 1) == std::vector<int64_t>{1});
  // Values too large for int64 become 1.
  CHECK(lengths(exponential(1e300), 3) == std::vector<int64_t>{1, 1, 1});
  // Empirical: keys keep their leading integer, non-positive weights are
  // skipped but count in the total, one bin draws nothing.
  CHECK(lengths({"empirical", {{"12abc", 1.0}}}, 2) == std::vector<int64_t>{12, 12});
  CHECK(lengths({"empirical", {{"7", 1.0}, {"9", -1.0}}}, 2) == std::vector<int64_t>{7, 7});
  CHECK(lengths({"empirical", {{"7", 0.0}}}, 2) == std::vector<int64_t>{1, 1});
  CHECK(lengths({"empirical", {{"100.5", 0.2}, {"200", 0.5}, {"400", 0.3}}}, 2) ==
        std::vector<int64_t>{200, 100});
  // Build-time errors name the parameter.
  CHECK(error_of([] { blis::workload::LengthSampler s(gaussian(1, 1, 1, 1), "d"); }) ==
        "(no error)");
  CHECK(error_of([] {
          blis::workload::LengthSampler s({"gaussian", {{"mean", 1}}},
                                          "clients[0].input_distribution");
        }).find("clients[0].input_distribution.params.std_dev") == 0);
  CHECK(error_of([] {
          blis::workload::LengthSampler s({"empirical", {}}, "x");
        }).find("x.params") == 0);
  CHECK(error_of([] {
          blis::workload::LengthSampler s({"empirical", {{"abc", 1}}}, "x");
        }).find("x.params.abc") == 0);
}

TEST_CASE("go_trunc converts like Go on x86-64", "[workload][sampler]") {
  using blis::workload::go_trunc;
  CHECK(go_trunc(2.9) == 2);
  CHECK(go_trunc(-2.9) == -2);
  CHECK(go_trunc(9.3e18) == std::numeric_limits<int64_t>::min());
  CHECK(go_trunc(std::nan("")) == std::numeric_limits<int64_t>::min());
  CHECK(go_trunc(-9223372036854775808.0) == std::numeric_limits<int64_t>::min());
}

// ---- the default workload (spec workload §2) ----

TEST_CASE("default workload matches the reference values", "[workload][default]") {
  const auto reqs = run_default(1.0, 100);
  REQUIRE(reqs.size() == 100);
  CHECK(reqs[0].arrival_us == 1000000);
  CHECK(reqs[0].input_tokens == 185);
  CHECK(reqs[0].output_tokens == 1208);
  CHECK(reqs[0].max_output_tokens == 1208);
  CHECK(reqs[1].arrival_us == 2000000);
  CHECK(reqs[1].input_tokens == 478);
  CHECK(reqs[1].output_tokens == 689);
  CHECK(reqs[2].arrival_us == 3000000);
  CHECK(reqs[2].input_tokens == 321);
  CHECK(reqs[2].output_tokens == 251);
  CHECK(reqs[99].arrival_us == 100000000);
  CHECK(reqs[99].input_tokens == 247);
  CHECK(reqs[99].output_tokens == 490);
  int64_t in = 0, out = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].id == i);
    CHECK(reqs[i].slo_class == BLIS_SLO_DEFAULT);
    CHECK(reqs[i].tenant_id.empty());
    in += reqs[i].input_tokens;
    out += reqs[i].output_tokens;
  }
  CHECK(in == 54508);
  CHECK(out == 54117);
}

TEST_CASE("default workload at rate 10 keeps the lengths", "[workload][default]") {
  const auto base = run_default(1.0, 100);
  const auto reqs = run_default(10.0, 100);
  REQUIRE(reqs.size() == 100);
  CHECK(reqs[0].arrival_us == 99999);
  CHECK(reqs[1].arrival_us == 199998);
  CHECK(reqs[2].arrival_us == 299997);
  CHECK(reqs[99].arrival_us == 9999900);
  for (size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].input_tokens == base[i].input_tokens);
    CHECK(reqs[i].output_tokens == base[i].output_tokens);
    CHECK(reqs[i].block_hashes == base[i].block_hashes);
  }
}

TEST_CASE("constant inter-arrival time is trunc(1/(R/1e6))", "[workload][default]") {
  const std::vector<std::pair<double, int64_t>> table = {{5, 199999}, {20, 49999},  {1, 1000000},
                                                         {3, 333333}, {100, 10000}, {0.3, 3333333}};
  for (const auto& [rate, iat] : table) {
    const auto reqs = run_default(rate, 3);
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[0].arrival_us == iat);
    CHECK(reqs[2].arrival_us == 3 * iat);
  }
}

TEST_CASE("default workload content hashes follow the client stream", "[workload][default]") {
  const int32_t block = 16;
  const auto reqs = run_default(1.0, 2, 0, block);
  REQUIRE(reqs.size() == 2);
  // Re-derive the client stream by hand (spec workload §6.6, §7.3): W gives
  // the client seed; the client draws two lengths, then input and output ids.
  GoRand w(blis::derive_seed(42, "workload-gen"));
  GoRand c(w.int63());
  c.norm_float64();
  c.norm_float64();
  std::vector<uint32_t> tokens;
  for (int i = 0; i < 185 + 1208; ++i) tokens.push_back(static_cast<uint32_t>(c.intn(128000)));
  CHECK(tokens[0] == 3222);
  CHECK(tokens[1] == 106002);
  CHECK(tokens[2] == 43089);
  CHECK(reqs[0].block_hashes.size() == (185 + 1208) / 16);
  // Those tokens are the client's own: drawn (request_1's lengths below come
  // after them in the stream) but not hashed. The content is a chain seeded
  // by the request's own seed.
  CHECK(reqs[0].shareable_blocks == 0);
  REQUIRE(reqs[0].own_content != 0);
  CHECK(reqs[1].own_content != reqs[0].own_content);
  CHECK(reqs[0].block_hashes == own_chain(blis::kEmptyPrefixHash, reqs[0].own_content, 0, (185 + 1208) / 16));
  // Different block sizes give (I+O)/B hashes.
  const auto coarse = run_default(1.0, 1, 0, 64);
  CHECK(coarse[0].block_hashes.size() == (185 + 1208) / 64);
  CHECK(reqs[1].block_hashes.size() == (478 + 689) / 16);
}

TEST_CASE("prefix tokens are shared by every request", "[workload][default][prefix]") {
  const int32_t block = 16;
  const auto reqs = run_default(1.0, 100, 100, block);
  REQUIRE(reqs.size() == 100);
  CHECK(reqs[0].input_tokens == 602);
  CHECK(reqs[0].output_tokens == 561);
  // The prefix is the first 100 ids of the workload-gen stream.
  GoRand w(blis::derive_seed(42, "workload-gen"));
  std::vector<uint32_t> prefix;
  for (int i = 0; i < 100; ++i) prefix.push_back(static_cast<uint32_t>(w.intn(128000)));
  CHECK(prefix[0] == 113163);
  CHECK(prefix[1] == 118499);
  const auto prefix_hashes = hash_blocks(prefix, block);
  REQUIRE(prefix_hashes.size() == 6);
  for (const auto& r : reqs) {
    REQUIRE(r.block_hashes.size() >= 7);
    CHECK(std::equal(prefix_hashes.begin(), prefix_hashes.end(), r.block_hashes.begin()));
  }
  // Block 6 holds 4 prefix tokens and 12 own tokens: it differs.
  CHECK(reqs[0].block_hashes[6] != reqs[1].block_hashes[6]);
  // Full content of request_0: the prefix's complete blocks (shareable),
  // then its own part from its seed, from block 6 on.
  CHECK(reqs[0].shareable_blocks == 6);
  auto content = prefix_hashes;
  const auto own = own_chain(prefix_hashes.back(), reqs[0].own_content, 6, (602 + 561) / block);
  content.insert(content.end(), own.begin(), own.end());
  CHECK(reqs[0].block_hashes == content);
}

TEST_CASE("num_requests 0 with a horizon yields all arrivals before it", "[workload][default]") {
  blis::DistributionWorkload w;
  w.rate = 10;
  const auto spec = blis::synthesize_distribution_spec(w, 42);
  const auto reqs = run_spec(spec, 1'000'000, 0);
  REQUIRE(reqs.size() == 10);  // 99999 ... 999990 < 1e6
  CHECK(reqs.back().arrival_us == 999990);
  CHECK(run_spec(spec, 999990, 0).size() == 9);  // the horizon is exclusive
  CHECK(run_spec(spec, 0, 5).empty());
  CHECK(run_spec(spec, -5, 5).empty());
}

TEST_CASE("synthesized distribution spec has the reference shape", "[workload][default]") {
  blis::DistributionWorkload w;
  w.rate = 7;
  w.num_requests = 12;
  w.prefix_tokens = 33;
  const auto spec = blis::synthesize_distribution_spec(w, 9);
  CHECK(spec.version == "2");
  CHECK(spec.category == "language");
  CHECK(spec.seed == 9);
  CHECK(spec.aggregate_rate == 7);
  CHECK(spec.num_requests == 12);
  REQUIRE(spec.clients.size() == 1);
  const auto& c = spec.clients[0];
  CHECK(c.id == "distribution");
  CHECK(c.rate_fraction == 1.0);
  CHECK(c.arrival.process == "constant");
  CHECK(c.input_distribution.type == "gaussian");
  CHECK(c.input_distribution.params.at("mean") == 512);
  CHECK(c.input_distribution.params.at("std_dev") == 256);
  CHECK(c.input_distribution.params.at("min") == 2);
  CHECK(c.output_distribution.params.at("max") == 7000);
  CHECK(c.prefix_group == "shared");
  CHECK(c.prefix_length == 33);
  w.prefix_tokens = 0;
  CHECK(blis::synthesize_distribution_spec(w, 9).clients[0].prefix_group.empty());
}

// ---- spec workloads (spec workload §5, §6) ----

TEST_CASE("example A merges two poisson clients like the reference", "[workload][spec]") {
  const auto spec = example_a();
  const auto reqs = run_spec(spec, blis::kNoHorizon, spec.num_requests);
  REQUIRE(reqs.size() == 200);
  int64_t in = 0, out = 0;
  for (const auto& r : reqs) {
    in += r.input_tokens;
    out += r.output_tokens;
  }
  CHECK(in == 68467);
  CHECK(out == 30706);
  CHECK(reqs[0].arrival_us == 1068);
  CHECK(reqs[0].tenant_id == "tenant-B");
  CHECK(reqs[0].slo_class == BLIS_SLO_BATCH);
  CHECK(reqs[0].input_tokens == 390);
  CHECK(reqs[0].output_tokens == 1028);
  CHECK(reqs[1].arrival_us == 2994);
  CHECK(reqs[1].tenant_id == "tenant-A");
  CHECK(reqs[1].slo_class == BLIS_SLO_STANDARD);
  CHECK(reqs[1].input_tokens == 295);
  CHECK(reqs[199].arrival_us == 420383);
  for (size_t i = 1; i < reqs.size(); ++i) CHECK(reqs[i - 1].arrival_us <= reqs[i].arrival_us);
}

TEST_CASE("requests of one prefix group share their prefix blocks", "[workload][spec][prefix]") {
  const auto spec = example_a();
  const auto reqs = run_spec(spec, blis::kNoHorizon, spec.num_requests, 16);
  std::vector<const WorkloadRequest*> group;
  for (const auto& r : reqs) {
    if (r.tenant_id == "tenant-A") group.push_back(&r);
  }
  REQUIRE(group.size() >= 2);
  const auto& a = group[0]->block_hashes;
  const auto& b = group[1]->block_hashes;
  REQUIRE(a.size() > 16);
  REQUIRE(b.size() > 16);
  // 256 prefix tokens = 16 whole blocks, then the requests diverge.
  CHECK(std::equal(a.begin(), a.begin() + 16, b.begin()));
  CHECK(a[16] != b[16]);
  // A request of the other client shares nothing.
  for (const auto& r : reqs) {
    if (r.tenant_id == "tenant-B" && !r.block_hashes.empty()) {
      CHECK(r.block_hashes[0] != a[0]);
      break;
    }
  }
}

TEST_CASE("appending a client leaves earlier client streams unchanged", "[workload][spec]") {
  auto spec = example_a();
  spec.num_requests = 0;
  const auto alone = run_spec(spec, 200'000, 0);
  auto more = spec;
  more.aggregate_rate = 1000.0;  // keeps the first two clients' absolute rates
  for (auto& c : more.clients) c.rate_fraction /= 2;
  blis::ClientSpec extra = spec.clients[1];
  extra.tenant_id = "tenant-C";
  extra.rate_fraction = 0.5;
  more.clients.push_back(extra);
  const auto with = run_spec(more, 200'000, 0);
  std::vector<std::pair<int64_t, int32_t>> x, y;
  for (const auto& r : alone) x.emplace_back(r.arrival_us, r.input_tokens);
  for (const auto& r : with) {
    if (r.tenant_id != "tenant-C") y.emplace_back(r.arrival_us, r.input_tokens);
  }
  CHECK(x == y);
}

TEST_CASE("client streams are isolated from clients appended after them", "[workload][spec]") {
  // spec workload §7.4: seed 1, poisson at 10 req/s, exponential lengths.
  blis::ClientSpec c;
  c.rate_fraction = 1;
  c.arrival.process = "poisson";
  c.input_distribution = exponential(100);
  c.output_distribution = exponential(50);
  c.tenant_id = "first";
  blis::WorkloadSpec spec;
  spec.seed = 1;
  spec.aggregate_rate = 10;
  spec.clients = {c};
  const std::vector<int64_t> expected = {6573, 98168, 136800, 296129};
  auto arrivals_of_first = [](const std::vector<WorkloadRequest>& reqs) {
    std::vector<int64_t> out;
    for (const auto& r : reqs) {
      if (r.tenant_id == "first" && out.size() < 4) out.push_back(r.arrival_us);
    }
    return out;
  };
  CHECK(arrivals_of_first(run_spec(spec, blis::kNoHorizon, 4)) == expected);
  blis::ClientSpec second = c;
  second.tenant_id = "second";
  spec.aggregate_rate = 20;  // both at 10 req/s
  spec.clients = {c, second};
  CHECK(arrivals_of_first(run_spec(spec, blis::kNoHorizon, 20)) == expected);
  spec.clients = {second, c};  // prepending shifts the first client's seed
  CHECK(arrivals_of_first(run_spec(spec, blis::kNoHorizon, 20)) != expected);
}

TEST_CASE("truncation keeps the first max_requests arrivals of the merge", "[workload][spec]") {
  const auto spec = example_a();
  const auto all = run_spec(spec, 1'000'000, 0);
  const auto some = run_spec(spec, 1'000'000, 50);
  REQUIRE(some.size() == 50);
  REQUIRE(all.size() > 50);
  for (size_t i = 0; i < some.size(); ++i) {
    CHECK(some[i].arrival_us == all[i].arrival_us);
    CHECK(some[i].tenant_id == all[i].tenant_id);
    CHECK(some[i].block_hashes == all[i].block_hashes);
    CHECK(some[i].id == i);
  }
}

TEST_CASE("ties in arrival go to the earlier client", "[workload][spec]") {
  blis::WorkloadSpec spec;
  spec.aggregate_rate = 2;
  for (const char* tenant : {"first", "second"}) {
    blis::ClientSpec c;
    c.tenant_id = tenant;
    c.model = std::string("m-") + tenant;
    c.rate_fraction = 1;
    c.arrival.process = "constant";
    c.input_distribution = {"constant", {{"value", 3}}};
    c.output_distribution = {"constant", {{"value", 4}}};
    spec.clients.push_back(c);
  }
  const auto reqs = run_spec(spec, blis::kNoHorizon, 6);
  REQUIRE(reqs.size() == 6);
  for (size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].arrival_us == static_cast<int64_t>(i / 2 + 1) * 1000000);
    CHECK(reqs[i].tenant_id == (i % 2 == 0 ? "first" : "second"));
    CHECK(reqs[i].model == (i % 2 == 0 ? "m-first" : "m-second"));
    CHECK(reqs[i].input_tokens == 3);
    CHECK(reqs[i].output_tokens == 4);
    CHECK(reqs[i].block_hashes.empty());  // 7 tokens < one block of 16
  }
}

TEST_CASE("the generator is lazy", "[workload][spec]") {
  // An effectively unbounded request count: an eager generator would never return.
  auto spec = example_a();
  auto src = blis::make_spec_workload(spec, blis::kNoHorizon, int64_t{1} << 50, 16);
  const auto first = drain(*src, 1000);
  CHECK(first.size() == 1000);
  const auto reference = run_spec(spec, blis::kNoHorizon, 200);
  for (size_t i = 0; i < reference.size(); ++i)
    CHECK(first[i].arrival_us == reference[i].arrival_us);
}

TEST_CASE("v1 SLO class names are upgraded", "[workload][spec]") {
  auto spec = example_a();
  // std::string temporaries (move assignment): GCC 12 warns falsely
  // (-Wrestrict) on assigning literals here.
  spec.version = std::string("1");
  spec.clients[0].slo_class = std::string("realtime");
  spec.clients[1].slo_class = std::string("interactive");
  CHECK_NOTHROW(blis::validate_workload_spec(spec));
  const auto reqs = run_spec(spec, blis::kNoHorizon, 10);
  for (const auto& r : reqs) {
    CHECK(r.slo_class == (r.tenant_id == "tenant-A" ? BLIS_SLO_CRITICAL : BLIS_SLO_STANDARD));
  }
  spec.version = std::string("2");
  CHECK_THROWS_AS(blis::validate_workload_spec(spec), blis::InputError);
}

TEST_CASE("spec validation names the offending field", "[workload][spec][validation]") {
  const auto base = example_a();
  auto expect = [&](auto mutate, const std::string& field) {
    auto spec = base;
    mutate(spec);
    const std::string msg = error_of([&] { blis::validate_workload_spec(spec); });
    INFO(msg);
    CHECK(msg.rfind(field + ": ", 0) == 0);
    // make_spec_workload validates too.
    CHECK(error_of([&] { blis::make_spec_workload(spec, blis::kNoHorizon, 10, 16); }) == msg);
  };
  CHECK_NOTHROW(blis::validate_workload_spec(base));
  expect([](auto& s) { s.category = "video"; }, "category");
  expect([](auto& s) { s.aggregate_rate = 0; }, "aggregate_rate");
  expect([](auto& s) { s.aggregate_rate = -1; }, "aggregate_rate");
  expect([](auto& s) { s.aggregate_rate = std::nan(""); }, "aggregate_rate");
  expect([](auto& s) { s.aggregate_rate = INFINITY; }, "aggregate_rate");
  expect([](auto& s) { s.clients.clear(); }, "clients");
  expect([](auto& s) { s.clients[1].slo_class = "gold"; }, "clients[1].slo_class");
  expect([](auto& s) { s.clients[0].slo_class = "realtime"; }, "clients[0].slo_class");
  expect([](auto& s) { s.clients[0].rate_fraction = 0; }, "clients[0].rate_fraction");
  expect([](auto& s) { s.clients[1].rate_fraction = INFINITY; }, "clients[1].rate_fraction");
  expect([](auto& s) { s.clients[0].arrival.process = "Poisson"; }, "clients[0].arrival.process");
  expect([](auto& s) { s.clients[0].arrival = {"weibull", 10.5}; }, "clients[0].arrival.cv");
  expect([](auto& s) { s.clients[0].arrival = {"weibull", 0.005}; }, "clients[0].arrival.cv");
  expect([](auto& s) { s.clients[0].arrival = {"gamma", 0.0}; }, "clients[0].arrival.cv");
  expect([](auto& s) { s.clients[0].arrival = {"poisson", -1.0}; }, "clients[0].arrival.cv");
  expect([](auto& s) { s.clients[0].prefix_length = -1; }, "clients[0].prefix_length");
  expect([](auto& s) { s.clients[1].input_distribution.type = "normal"; },
         "clients[1].input_distribution.type");
  expect([](auto& s) { s.clients[1].output_distribution.params["mean"] = INFINITY; },
         "clients[1].output_distribution.params.mean");
  // The first failure wins.
  expect(
      [](auto& s) {
        s.clients[0].rate_fraction = -1;
        s.clients[0].slo_class = "gold";
      },
      "clients[0].slo_class");
  // Accepted: weibull cv at the bounds, cv on poisson, gamma cv above 10.
  auto ok = base;
  ok.clients[0].arrival = {"weibull", 10.4};
  ok.clients[1].arrival = {"gamma", 12.0};
  CHECK_NOTHROW(blis::validate_workload_spec(ok));
}

TEST_CASE("generation-time errors: missing parameters, bad arguments",
          "[workload][spec][validation]") {
  auto spec = example_a();
  spec.clients[1].output_distribution.params.clear();
  CHECK(error_of([&] {
          blis::make_spec_workload(spec, blis::kNoHorizon, 10, 16);
        }).rfind("clients[1].output_distribution.params.mean: ", 0) == 0);
  CHECK_THROWS_AS(blis::make_spec_workload(example_a(), blis::kNoHorizon, -1, 16),
                  blis::InputError);
  CHECK_THROWS_AS(blis::make_spec_workload(example_a(), blis::kNoHorizon, 10, 0), blis::InputError);
  // horizon <= 0 returns nothing before any validation (spec workload §6.1).
  CHECK(run_spec(spec, 0, 10).empty());
}

// ---- exact trace replay ----

namespace {

struct TempFile {
  explicit TempFile(const std::string& content) {
    static int counter = 0;
    path = (std::filesystem::temp_directory_path() /
            ("blis_trace_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".csv"))
               .string();
    std::ofstream(path) << content;
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

std::vector<WorkloadRequest> run_trace(const std::string& csv, int64_t horizon = blis::kNoHorizon,
                                       int64_t max_requests = 0, int32_t block = 4,
                                       int64_t seed = 42) {
  TempFile f(csv);
  auto src = blis::make_trace_workload(f.path, horizon, max_requests, block, seed);
  return drain(*src);
}

std::string trace_error(const std::string& csv, std::string* path_out = nullptr) {
  TempFile f(csv);
  if (path_out) *path_out = f.path;
  return error_of([&] {
    auto src = blis::make_trace_workload(f.path, blis::kNoHorizon, 0, 4, 42);
    drain(*src);
  });
}

}  // namespace

TEST_CASE("trace replay reproduces times and lengths exactly", "[workload][trace]") {
  const auto reqs = run_trace(
      "arrival_time_us,input_tokens,output_tokens\n"
      "0,10,3\n"
      "5,1,1\n"
      "5,7,9\r\n"
      "\n"
      "123456789012,4,100\n");
  REQUIRE(reqs.size() == 4);
  const std::vector<std::tuple<int64_t, int32_t, int32_t>> expected = {
      {0, 10, 3}, {5, 1, 1}, {5, 7, 9}, {123456789012, 4, 100}};
  for (size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].id == i);
    CHECK(reqs[i].arrival_us == std::get<0>(expected[i]));
    CHECK(reqs[i].input_tokens == std::get<1>(expected[i]));
    CHECK(reqs[i].output_tokens == std::get<2>(expected[i]));
    CHECK(reqs[i].max_output_tokens == std::get<2>(expected[i]));
    CHECK(reqs[i].slo_class == BLIS_SLO_DEFAULT);
    CHECK(reqs[i].block_hashes.size() ==
          static_cast<size_t>((std::get<1>(expected[i]) + std::get<2>(expected[i])) / 4));
  }
  // Content comes from the "trace" stream, row by row: input then output ids.
  GoRand r(blis::derive_seed(42, "trace"));
  std::vector<uint32_t> first;
  for (int i = 0; i < 13; ++i) first.push_back(static_cast<uint32_t>(r.intn(128000)));
  CHECK(reqs[0].block_hashes == hash_blocks(first, 4));
  // Same seed, same content; another seed, other content.
  const std::string csv = "arrival_time_us,input_tokens,output_tokens\n0,10,3\n";
  CHECK(run_trace(csv)[0].block_hashes == reqs[0].block_hashes);
  CHECK(run_trace(csv, blis::kNoHorizon, 0, 4, 43)[0].block_hashes != reqs[0].block_hashes);
}

TEST_CASE("trace replay reads the optional columns", "[workload][trace]") {
  const auto reqs = run_trace(
      "arrival_time_us,input_tokens,output_tokens,tenant_id,slo_class,prefix_tokens,prefix_group\n"
      "10,20,4,acme,critical,8,sys\n"
      "20,30,4,\"big, corp\",batch,8,sys\n"
      "30,10,4,,,,\n"
      "40,12,4,x,background,6,sys\n"
      "50,40,4,x,sheddable,12,sys\n"
      "60,40,4,x,standard,8,other\n");
  REQUIRE(reqs.size() == 6);
  CHECK(reqs[0].tenant_id == "acme");
  CHECK(reqs[0].slo_class == BLIS_SLO_CRITICAL);
  CHECK(reqs[1].tenant_id == "big, corp");
  CHECK(reqs[1].slo_class == BLIS_SLO_BATCH);
  CHECK(reqs[2].tenant_id.empty());
  CHECK(reqs[2].slo_class == BLIS_SLO_DEFAULT);
  CHECK(reqs[3].slo_class == BLIS_SLO_BACKGROUND);
  CHECK(reqs[4].slo_class == BLIS_SLO_SHEDDABLE);
  CHECK(reqs[5].slo_class == BLIS_SLO_STANDARD);
  for (const auto& r : reqs) CHECK(r.model.empty());
  // Same group: the first 8 / 4 = 2 blocks agree, the third differs.
  CHECK(reqs[0].block_hashes[0] == reqs[1].block_hashes[0]);
  CHECK(reqs[0].block_hashes[1] == reqs[1].block_hashes[1]);
  CHECK(reqs[0].block_hashes[2] != reqs[1].block_hashes[2]);
  // A shorter use of the group prefix shares its whole blocks (6 tokens: 1 block).
  CHECK(reqs[3].block_hashes[0] == reqs[0].block_hashes[0]);
  CHECK(reqs[3].block_hashes[1] != reqs[0].block_hashes[1]);
  // A longer use extends the group: its first 8 tokens are still the group's.
  CHECK(reqs[4].block_hashes[0] == reqs[0].block_hashes[0]);
  CHECK(reqs[4].block_hashes[1] == reqs[0].block_hashes[1]);
  // Another group, another prefix; no group, no sharing.
  CHECK(reqs[5].block_hashes[0] != reqs[0].block_hashes[0]);
  CHECK(reqs[2].block_hashes[0] != reqs[0].block_hashes[0]);

  // The exact draw order: group prefix on first use, own input ids, output ids.
  GoRand r(blis::derive_seed(42, "trace"));
  std::vector<uint32_t> prefix, t0, t1;
  for (int i = 0; i < 8; ++i) prefix.push_back(static_cast<uint32_t>(r.intn(128000)));
  t0 = prefix;
  for (int i = 0; i < 12 + 4; ++i) t0.push_back(static_cast<uint32_t>(r.intn(128000)));
  t1 = prefix;
  for (int i = 0; i < 22 + 4; ++i) t1.push_back(static_cast<uint32_t>(r.intn(128000)));
  CHECK(reqs[0].block_hashes == hash_blocks(t0, 4));
  CHECK(reqs[1].block_hashes == hash_blocks(t1, 4));
}

TEST_CASE("trace replay honours horizon and max_requests", "[workload][trace]") {
  const std::string csv =
      "arrival_time_us,input_tokens,output_tokens\n1,1,1\n2,1,1\n3,1,1\n4,1,1\n";
  CHECK(run_trace(csv, 3).size() == 2);
  CHECK(run_trace(csv, blis::kNoHorizon, 3).size() == 3);
  CHECK(run_trace(csv, 0).empty());
  // Rows past the cap are not even read.
  CHECK(run_trace(csv + "0,1,1\n", blis::kNoHorizon, 4).size() == 4);
}

TEST_CASE("bad trace files name file and line", "[workload][trace]") {
  const std::string header = "arrival_time_us,input_tokens,output_tokens\n";
  std::string path;
  std::string msg = trace_error(header + "10,5,5\n5,5,5\n", &path);
  CHECK(msg.rfind(path + ":3: ", 0) == 0);
  CHECK(msg.find("sorted") != std::string::npos);
  msg = trace_error(header + "10,5,5\n\n20,abc,5\n", &path);
  CHECK(msg.rfind(path + ":4: input_tokens", 0) == 0);
  msg = trace_error(header + "10,5\n", &path);
  CHECK(msg.rfind(path + ":2: ", 0) == 0);
  msg = trace_error(header + "-1,5,5\n", &path);
  CHECK(msg.rfind(path + ":2: arrival_time_us", 0) == 0);
  msg = trace_error(header + "1,0,5\n", &path);
  CHECK(msg.rfind(path + ":2: input_tokens", 0) == 0);
  msg = trace_error(header + "1,5,0\n", &path);
  CHECK(msg.rfind(path + ":2: output_tokens", 0) == 0);
  msg = trace_error(header + "1,5,5.5\n", &path);
  CHECK(msg.rfind(path + ":2: output_tokens", 0) == 0);
  msg = trace_error(header + "1,\"5,5\n", &path);
  CHECK(msg.rfind(path + ":2: ", 0) == 0);
  msg = trace_error("arrival_time_us,input_tokens,output_tokens,slo_class\n1,5,5,gold\n", &path);
  CHECK(msg.rfind(path + ":2: slo_class", 0) == 0);
  msg = trace_error(
      "arrival_time_us,input_tokens,output_tokens,prefix_group,prefix_tokens\n"
      "1,5,5,g,6\n",
      &path);
  CHECK(msg.rfind(path + ":2: prefix_tokens", 0) == 0);
  msg = trace_error(
      "arrival_time_us,input_tokens,output_tokens,prefix_group,prefix_tokens\n"
      "1,5,5,,3\n",
      &path);
  CHECK(msg.rfind(path + ":2: ", 0) == 0);
  msg = trace_error("input_tokens,arrival_time_us,output_tokens\n1,1,1\n", &path);
  CHECK(msg.rfind(path + ":1: ", 0) == 0);
  msg = trace_error(header.substr(0, header.size() - 1) + ",colour\n1,1,1,red\n", &path);
  CHECK(msg.rfind(path + ":1: unknown column", 0) == 0);
  msg = trace_error("arrival_time_us,input_tokens,output_tokens,prefix_group\n1,1,1,g\n", &path);
  CHECK(msg.rfind(path + ":1: ", 0) == 0);
  msg = trace_error(header, &path);
  CHECK(msg.rfind(path + ": ", 0) == 0);
  msg = trace_error("", &path);
  CHECK(msg.rfind(path + ": ", 0) == 0);
  CHECK_THROWS_AS(blis::make_trace_workload("/nonexistent/trace.csv", blis::kNoHorizon, 0, 16, 1),
                  blis::InputError);
}

TEST_CASE("a client's own blocks are its own only if no other stream shares its random stream",
          "[workload][kv]") {
  // Go reduces seeds modulo 2^31 - 1 (0 becomes 89482311): such seeds draw the
  // same tokens, so neither client may keep its content out of the prefix index.
  const int64_t m = 2147483647;
  CHECK(blis::workload::own_streams({5, 5 + m, 7}, 11) == std::vector<bool>{false, false, true});
  CHECK(blis::workload::own_streams({0, 89482311, -3, m - 3}, 1) == std::vector<bool>{false, false, false, false});
  CHECK(blis::workload::own_streams({4, 9}, 9 + 2 * m) == std::vector<bool>{true, false});

  // The default workload's requests: every block after the prefix is its own.
  blis::WorkloadSpec spec;
  spec.seed = 3;
  spec.aggregate_rate = 10;
  spec.num_requests = 5;
  blis::ClientSpec client;
  client.id = "c";
  client.rate_fraction = 1;
  client.prefix_group = "g";
  client.prefix_length = 40;
  client.input_distribution = {"constant", {{"value", 100}}};
  client.output_distribution = {"constant", {{"value", 20}}};
  spec.clients.push_back(client);
  auto source = blis::make_spec_workload(spec, blis::kNoHorizon, 5, 16);
  blis::WorkloadRequest r;
  REQUIRE(source->next(r));
  CHECK(r.shareable_blocks == 2);  // 40 prefix tokens: 2 complete blocks
}

TEST_CASE("own content is lazy: a generated request holds only its shareable hashes", "[workload][kv]") {
  blis::WorkloadSpec spec;
  spec.seed = 3;
  spec.aggregate_rate = 10;
  spec.num_requests = 50;
  blis::ClientSpec client;
  client.id = "c";
  client.rate_fraction = 0.5;
  client.prefix_group = "g";
  client.prefix_length = 40;
  client.input_distribution = {"constant", {{"value", 100}}};
  client.output_distribution = {"constant", {{"value", 20}}};
  spec.clients.push_back(client);
  client.id = "d";
  client.prefix_group.clear();
  client.prefix_length = 0;
  spec.clients.push_back(client);
  auto source = blis::make_spec_workload(spec, blis::kNoHorizon, 50, 16);
  blis::WorkloadRequest r;
  std::set<uint64_t> seeds, own_hashes;
  int with_prefix = 0;
  while (source->next(r)) {
    const int64_t shareable = r.input_tokens == 140 ? 2 : 0;
    with_prefix += shareable > 0 ? 1 : 0;
    CHECK(r.shareable_blocks == shareable);
    CHECK(static_cast<int64_t>(r.block_hashes.size()) == shareable);
    REQUIRE(r.own_content != 0);
    CHECK(seeds.insert(r.own_content).second);  // unique to the request
    // Completing it keeps the shareable part and adds unique own blocks.
    std::vector<uint64_t> content = r.block_hashes;
    blis::extend_content(r, content, blis::content_blocks(r, 16));
    REQUIRE(static_cast<int64_t>(content.size()) == (r.input_tokens + 20) / 16);
    CHECK(std::equal(r.block_hashes.begin(), r.block_hashes.end(), content.begin()));
    for (size_t k = static_cast<size_t>(shareable); k < content.size(); ++k) CHECK(own_hashes.insert(content[k]).second);
    // A part of it (the router's view of the input) is a prefix of it.
    std::vector<uint64_t> input = r.block_hashes;
    blis::extend_content(r, input, r.input_tokens / 16);
    CHECK(std::equal(input.begin(), input.end(), content.begin()));
  }
  CHECK(seeds.size() == 50);
  CHECK(with_prefix > 10);
  CHECK(with_prefix < 40);
}
