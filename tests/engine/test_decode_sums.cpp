// Steps priced from the plain decodes' sums (latency-model ABI 1.5): the
// instance gathers the sums and the other members while it forms the batch;
// the run must come out exactly as when every step is priced member by member.
#include "catch.hpp"

#include "engine_harness.hpp"

#include <blis/model_data.hpp>

#include <memory>
#include <string>

using namespace blis;
using namespace blis::test;

namespace {

struct Calls {
  int64_t members = 0;      // step_time
  int64_t decode_only = 0;  // decode_step_time, no other member
  int64_t mixed = 0;        // decode_step_time with others listed
};

// A built-in model, its aggregate entry on or hidden; counts the calls.
class Counting final : public LatencyModel {
 public:
  Counting(std::unique_ptr<LatencyModel> inner, bool sums, Calls& calls)
      : inner_(std::move(inner)), sums_(sums), calls_(calls) {}
  int64_t step_time(const blis_step_batch& b) override {
    ++calls_.members;
    return inner_->step_time(b);
  }
  bool prices_decode_aggregates() const override { return sums_ && inner_->prices_decode_aggregates(); }
  bool decode_step_time(const blis_decode_batch& b, int64_t& out) override {
    REQUIRE(sums_);
    ++(b.others_count > 0 ? calls_.mixed : calls_.decode_only);
    return inner_->decode_step_time(b, out);
  }
  int64_t queueing_time(const blis_request_view& r) override { return inner_->queueing_time(r); }
  int64_t output_token_time() override { return inner_->output_token_time(); }
  int64_t post_decode_overhead() override { return inner_->post_decode_overhead(); }

 private:
  std::unique_ptr<LatencyModel> inner_;
  bool sums_;
  Calls& calls_;
};

ConfigTable arch_config(const std::string& model) {
  static const DataCatalog catalog = DataCatalog::load(std::string(BLIS_TEST_STAGE) + "/share/blis/data");
  const ModelArch m = *catalog.bundled_model("qwen/qwen3-14b");
  const HardwareSpec hw = catalog.hardware("H100");
  std::vector<double> alpha{0, 0, 0}, beta{0, 0, 0};
  if (model != "roofline") {
    const auto& c = *catalog.plugin_coefficients(model);
    alpha = c.alpha;
    beta = c.beta;
  }
  ConfigTable cfg;
  put_latency_config(cfg, &m, &hw, 1, alpha, beta, 16);
  return cfg;
}

// 300 requests 4 ms apart, 100-799 input and 20-319 output tokens.
std::vector<WorkloadRequest> requests() {
  std::vector<WorkloadRequest> reqs;
  reqs.reserve(300);
  for (int i = 0; i < 300; ++i)
    reqs.push_back(make_request(static_cast<uint64_t>(i), i * 4000, 100 + (i * 37) % 700, 20 + (i * 53) % 300,
                                static_cast<uint32_t>(i) * 1000));
  return reqs;
}

std::string run(const ClusterConfig& c, const std::string& model, bool sums, Calls& calls) {
  const ConfigTable cfg = arch_config(model);
  VectorSource src(requests());
  ClusterSimulation sim(c, src, [&](int32_t) -> std::unique_ptr<LatencyModel> {
    return std::make_unique<Counting>(builtin_registries().latency.create(model, CreateArgs{&cfg, 42}), sums, calls);
  });
  return metrics_json(cluster_metrics(sim.run()), "cluster", true);
}

}  // namespace

TEST_CASE("steps priced from the plain decodes' sums match member-by-member pricing", "[engine]") {
  ClusterConfig c;
  c.num_instances = 2;
  c.keep_records = true;
  c.engine.max_scheduled_tokens = 512;  // budgets run out: stalled members
  c.engine.long_prefill_threshold = 128;
  SECTION("ample KV") { c.engine.total_kv_blocks = 100000; }
  SECTION("scarce KV: preemptions while batches form") { c.engine.total_kv_blocks = 400; }
  for (const std::string model : {"roofline", "trained-physics", "trained-roofline"}) {
    INFO(model);
    Calls member, summed;
    const std::string exact = run(c, model, false, member);
    const std::string fast = run(c, model, true, summed);
    CHECK(fast == exact);
    CHECK(member.decode_only + member.mixed == 0);
    // Both kinds of aggregate steps happened, and they replaced member-by-member calls.
    CHECK(summed.decode_only > 0);
    CHECK(summed.mixed > 0);
    CHECK(summed.members < member.members);
  }
}

TEST_CASE("a decoding member is handled member by member only at its block boundaries and its end", "[engine]") {
  // 300 requests of up to 320 output tokens with blocks of 16: a member that
  // only decodes is advanced implicitly between its new blocks, so far
  // fewer than a fifth of the batch-member steps touch the member.
  ClusterConfig c;
  c.num_instances = 2;
  c.engine.total_kv_blocks = 100000;
  Calls calls;
  const ConfigTable cfg = arch_config("roofline");
  const std::vector<WorkloadRequest> reqs = requests();
  for (const bool sums : {true, false}) {
    VectorSource src(reqs);
    ClusterSimulation sim(c, src, [&](int32_t) -> std::unique_ptr<LatencyModel> {
      return std::make_unique<Counting>(builtin_registries().latency.create("roofline", CreateArgs{&cfg, 42}), sums,
                                        calls);
    });
    const ClusterResult r = sim.run();
    REQUIRE(r.member_steps > 0);
    if (sums) {
      CHECK(r.member_updates * 5 < r.member_steps);
    } else {
      CHECK(r.member_updates == r.member_steps);  // without the aggregate entry, every member every step
    }
  }
}
