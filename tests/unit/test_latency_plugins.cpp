// The five built-in latency-model plugins, loaded from the staged .so files
// through the real plugin loader, against the numbers of spec engine.md
// §5.2–§5.6 and head.md §1 (Qwen3-14B on H100 unless stated).
#include "catch.hpp"

#include <blis/config_table.hpp>
#include <blis/model_data.hpp>
#include <blis/plugin.h>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>

#include "splitmix.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace {

// ---- loading a latency model through the real plugin loader -------------------

std::string plugin_path(const std::string& name) {
  return std::string(BLIS_TEST_STAGE) + "/lib/blis/plugins/libblis-latency-" + name + ".so";
}

class LatencyPlugin {
 public:
  LatencyPlugin(const std::string& name, const blis::ConfigTable& cfg)
      : lib_(blis::open_plugin_library(plugin_path(name))), info_(find(name)) {
    blis::register_library(reg_, lib_);
    model_ = reg_.latency.create(name, blis::CreateArgs{&cfg, 42});
  }

  const blis::PluginInfo& info() const { return info_; }

  double step(const std::vector<blis_batch_entry>& entries) {
    blis_step_batch b{sizeof(blis_step_batch), sizeof(blis_batch_entry), 0,
                      static_cast<int64_t>(entries.size()), entries.data()};
    return static_cast<double>(model_->step_time(b));
  }
  // The decode-only step priced from the aggregates of `entries` (ABI 1.5),
  // false when the model has no aggregate entry or declines.
  // The plain decodes (decode phase, one new token) become sums, the other
  // members are listed in batch order, as the host does.
  bool decode_sums(const std::vector<blis_batch_entry>& entries, int64_t& out) {
    blis_decode_batch b{sizeof(blis_decode_batch), sizeof(blis_batch_entry), 0, 0, 0, 0, 0, 0, nullptr};
    std::vector<blis_batch_entry> others;
    for (const auto& e : entries) {
      if (e.phase == BLIS_PHASE_DECODE && e.new_tokens == 1 && e.cached_tokens == 0) {
        ++b.count;
        b.progress_sum += e.progress;
        b.progress_max = std::max(b.progress_max, e.progress);
        b.input_tokens_sum += e.input_tokens;
      } else {
        others.push_back(e);
      }
    }
    b.others_count = static_cast<int64_t>(others.size());
    b.others = others.empty() ? nullptr : others.data();
    return decode_sums(b, out);
  }
  bool decode_sums(const blis_decode_batch& b, int64_t& out) { return model_->decode_step_time(b, out); }
  bool prices_sums() const { return model_->prices_decode_aggregates(); }
  double queueing(int64_t input_tokens) {
    blis_request_view r{};
    r.struct_size = sizeof r;
    r.block_size = 16;
    r.input_tokens = input_tokens;
    return static_cast<double>(model_->queueing_time(r));
  }
  double output_token() { return static_cast<double>(model_->output_token_time()); }
  double post_decode() { return static_cast<double>(model_->post_decode_overhead()); }

 private:
  blis::PluginInfo find(const std::string& name) const {
    for (const auto& p : blis::describe(*lib_).plugins)
      if (p.name == name) return p;
    throw std::runtime_error(plugin_path(name) + ": no latency model named " + name);
  }

  std::shared_ptr<blis::LoadedLibrary> lib_;
  blis::PluginInfo info_;
  blis::Registries reg_;
  std::unique_ptr<blis::LatencyModel> model_;
};

// The message create() fails with, or "" when it succeeds.
std::string create_error(const std::string& name, const blis::ConfigTable& cfg) {
  try {
    LatencyPlugin p(name, cfg);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// ---- inputs -----------------------------------------------------------------

const blis::DataCatalog& catalog() {
  static const blis::DataCatalog c =
      blis::DataCatalog::load(std::string(BLIS_TEST_STAGE) + "/share/blis/data");
  return c;
}

blis::ConfigTable qwen3_h100(int64_t tp, const std::vector<double>& alpha = {0, 0, 0},
                             const std::vector<double>& beta = {0, 0, 0}) {
  static const blis::ModelArch m = *catalog().bundled_model("qwen/qwen3-14b");
  static const blis::HardwareSpec hw = catalog().hardware("H100");
  blis::ConfigTable cfg;
  blis::put_latency_config(cfg, &m, &hw, tp, alpha, beta, 16);
  return cfg;
}

blis_batch_entry decode(int64_t context) {
  return {1024, context, 1024, 0, 1, BLIS_PHASE_DECODE};
}
blis_batch_entry prefill(int64_t input, int64_t progress, int32_t n) {
  return {input, progress, input, 0, n, BLIS_PHASE_PREFILL};
}

// The batches of spec engine.md §5.6: decode members I = PI = 1024; the
// prefill member I = 512, PI = 0, 512 new tokens.
std::vector<blis_batch_entry> decodes(int n) { return std::vector<blis_batch_entry>(n, decode(1024)); }
std::vector<blis_batch_entry> prefill512() { return {prefill(512, 0, 512)}; }
std::vector<blis_batch_entry> mixed() {
  std::vector<blis_batch_entry> b{prefill(512, 0, 512)};
  for (int i = 0; i < 63; ++i) b.push_back(decode(1024));
  return b;
}

}  // namespace

TEST_CASE("latency plugins: manifests name their models", "[latency]") {
  const auto& cross = (*catalog().plugin_coefficients("crossmodel"));
  const auto& trained = (*catalog().plugin_coefficients("trained-roofline"));
  const auto& physics_c = (*catalog().plugin_coefficients("trained-physics"));
  const std::vector<std::pair<std::string, blis::ConfigTable>> cases{
      {"roofline", qwen3_h100(1)},
      {"blackbox", qwen3_h100(1, {0, 0, 0}, {1, 1, 1})},
      {"crossmodel", qwen3_h100(1, cross.alpha, cross.beta)},
      {"trained-roofline", qwen3_h100(1, trained.alpha, trained.beta)},
      {"trained-physics", qwen3_h100(1, physics_c.alpha, physics_c.beta)}};
  for (const auto& [name, cfg] : cases) {
    LatencyPlugin p(name, cfg);
    CHECK(p.info().kind == blis::PluginKind::LatencyModel);
    CHECK(p.info().name == name);
    CHECK(p.info().version == "1.0.0");
    CHECK(!p.info().summary.empty());
  }
}

TEST_CASE("roofline: spec §5.3 worked example, Qwen3-14B H100 TP1", "[latency]") {
  LatencyPlugin r("roofline", qwen3_h100(1));
  CHECK(r.step(decodes(1)) == 5810);
  CHECK(r.step(decodes(64)) == 8975);
  CHECK(r.step(prefill512()) == 22428);
  CHECK(r.step({prefill(2048, 0, 2048)}) == 92636);
  CHECK(r.step(mixed()) == 26703);
  CHECK(r.step({prefill(1024, 512, 512)}) == 22915);
  CHECK(r.step({}) == 0);  // the host floors it to 1
  // The CLI hands roofline α = 0: no queueing or per-token overheads.
  CHECK(r.queueing(512) == 0);
  CHECK(r.output_token() == 0);
  CHECK(r.post_decode() == 0);
}

TEST_CASE("roofline: spec §5.3/§5.6 TP2", "[latency]") {
  LatencyPlugin r("roofline", qwen3_h100(2));
  CHECK(r.step(decodes(1)) == 2905);
  CHECK(r.step(decodes(64)) == 4488);
  CHECK(r.step(prefill512()) == 11214);
  CHECK(r.step(mixed()) == 13352);
  CHECK(r.step({}) == 0);
}

TEST_CASE("roofline: stalled requests cost nothing (Q7 fixed)", "[latency]") {
  LatencyPlugin r("roofline", qwen3_h100(1));
  auto b = decodes(1);
  b.push_back(prefill(512, 256, 0));  // admitted but given no tokens this step
  CHECK(r.step(b) == 5810);
  CHECK(r.step({prefill(512, 256, 0)}) == 0);
}

TEST_CASE("roofline: alpha terms use the blackbox formulas", "[latency]") {
  LatencyPlugin r("roofline", qwen3_h100(1, {100.5, 2.25, 7.9}));
  CHECK(r.queueing(10) == 123);  // trunc(100.5 + 22.5)
  CHECK(r.output_token() == 7);
  CHECK(r.post_decode() == 0);
}

TEST_CASE("roofline: construction-time validation (spec §5.3)", "[latency]") {
  auto cfg = qwen3_h100(1);
  cfg.set("model.bytes_per_param", 0.0);
  CHECK_THAT(create_error("roofline", cfg), Catch::Contains("model.bytes_per_param"));

  cfg = qwen3_h100(1);
  cfg.set("tp", int64_t{0});
  CHECK_THAT(create_error("roofline", cfg), Catch::Contains("tp"));

  cfg = qwen3_h100(1);
  cfg.set("hardware.mfu_decode", -0.3);
  CHECK_THAT(create_error("roofline", cfg), Catch::Contains("hardware.mfu_decode"));

  cfg = qwen3_h100(1);
  cfg.set("model.num_experts", int64_t{8});
  cfg.set("model.experts_per_token", int64_t{9});
  CHECK_THAT(create_error("roofline", cfg), Catch::Contains("experts_per_token"));

  cfg = qwen3_h100(1);
  cfg.set("model.experts_per_token", int64_t{2});  // dense model with a top-k
  CHECK_THAT(create_error("roofline", cfg), Catch::Contains("experts_per_token"));

  cfg = qwen3_h100(1);
  cfg.set("hardware.memory_gib", -1.0);
  CHECK_THAT(create_error("roofline", cfg), Catch::Contains("hardware.memory_gib"));

  cfg = qwen3_h100(1, {0, -1, 0});
  CHECK_THAT(create_error("roofline", cfg), Catch::Contains("alpha_coeffs[1]"));
}

TEST_CASE("blackbox: spec §5.2 worked example (llama-3.1-8b H100 TP2 v0.8.4)", "[latency]") {
  const auto e = catalog().coefficients("meta-llama/llama-3.1-8b-instruct", "H100", 2,
                                        "vllm/vllm-openai:v0.8.4");
  REQUIRE(e);
  LatencyPlugin exact("blackbox", qwen3_h100(2, e->alpha, e->beta));
  LatencyPlugin rounded("blackbox", qwen3_h100(2, e->alpha, {6910.42, 17.67, 2.84}));
  for (LatencyPlugin* b : {&exact, &rounded}) {
    CHECK(b->step(decodes(1)) == 6913);
    CHECK(b->step(decodes(64)) == 7092);
    CHECK(b->step(prefill512()) == 15957);
    CHECK(b->step(mixed()) == 16136);
    CHECK(b->step({}) == 6910);
  }
  CHECK(exact.queueing(512) == 3399);
  CHECK(exact.output_token() == 1805);
  CHECK(exact.post_decode() == 0);
}

TEST_CASE("blackbox: floor of one tick and coefficient validation", "[latency]") {
  LatencyPlugin b("blackbox", qwen3_h100(1, {0, 0, 0}, {0.5, 0, 0}));
  CHECK(b.step({}) == 1);
  CHECK_THAT(create_error("blackbox", qwen3_h100(1, {0, 0, 0}, {1, 2})),
             Catch::Contains("beta_coeffs needs at least 3 values"));
  CHECK_THAT(create_error("blackbox", qwen3_h100(1, {0, 0}, {1, 2, 3})),
             Catch::Contains("alpha_coeffs needs at least 3 values"));
  CHECK_THAT(create_error("blackbox", qwen3_h100(1, {0, 0, 0}, {1, -2, 3})),
             Catch::Contains("beta_coeffs[1]"));
  CHECK_THAT(create_error("blackbox", qwen3_h100(1, {0, 0, std::nan("")}, {1, 2, 3})),
             Catch::Contains("alpha_coeffs[2]"));
}

TEST_CASE("crossmodel: spec §5.4/§5.6 Qwen3-14B H100", "[latency]") {
  const auto& g = (*catalog().plugin_coefficients("crossmodel"));
  LatencyPlugin tp1("crossmodel", qwen3_h100(1, g.alpha, g.beta));
  CHECK(tp1.step(decodes(1)) == 4694);
  CHECK(tp1.step(decodes(64)) == 7860);
  CHECK(tp1.step(prefill512()) == 4644);
  CHECK(tp1.step(mixed()) == 7810);
  CHECK(tp1.step({}) == 4644);
  CHECK(tp1.queueing(512) == 13732);
  CHECK(tp1.output_token() == 860);
  CHECK(tp1.post_decode() == 0);

  LatencyPlugin tp2("crossmodel", qwen3_h100(2, g.alpha, g.beta));
  CHECK(tp2.step(decodes(1)) == 14114);
  CHECK(tp2.step(decodes(64)) == 15697);
  CHECK(tp2.step(prefill512()) == 14089);

  CHECK_THAT(create_error("crossmodel", qwen3_h100(1, g.alpha, {1, 2, 3})),
             Catch::Contains("beta_coeffs needs at least 4 values"));
}

TEST_CASE("trained-roofline: spec §5.5/§5.6 Qwen3-14B H100", "[latency]") {
  const auto& g = (*catalog().plugin_coefficients("trained-roofline"));
  LatencyPlugin tp1("trained-roofline", qwen3_h100(1, g.alpha, g.beta));
  CHECK(tp1.step(decodes(1)) == 10174);
  CHECK(tp1.step(decodes(64)) == 16810);
  CHECK(tp1.step(prefill512()) == 20933);
  CHECK(tp1.step(mixed()) == 27569);
  CHECK(tp1.step({}) == 1);
  CHECK(tp1.queueing(512) == 9315);
  CHECK(tp1.queueing(4096) == 9315);  // constant, not per token
  CHECK(tp1.post_decode() == 1849);
  CHECK(tp1.output_token() == 1);

  LatencyPlugin tp2("trained-roofline", qwen3_h100(2, g.alpha, g.beta));
  CHECK(tp2.step(decodes(1)) == 5981);
  CHECK(tp2.step(decodes(64)) == 10837);
  CHECK(tp2.step(prefill512()) == 11361);
  CHECK(tp2.step(mixed()) == 16216);
}

TEST_CASE("trained-roofline: a stalled request only adds its per-request term", "[latency]") {
  const auto& g = (*catalog().plugin_coefficients("trained-roofline"));
  LatencyPlugin t("trained-roofline", qwen3_h100(1, g.alpha, g.beta));
  auto b = decodes(1);
  b.push_back(prefill(512, 256, 0));
  const double with_stalled = t.step(b);
  // β6 = 48.806… µs per running request, whether or not it got tokens.
  CHECK(with_stalled >= 10174 + 48);
  CHECK(with_stalled <= 10174 + 49);
}

TEST_CASE("trained-roofline: validation (spec §5.5)", "[latency]") {
  const auto& g = (*catalog().plugin_coefficients("trained-roofline"));
  CHECK_THAT(create_error("trained-roofline", qwen3_h100(3, g.alpha, g.beta)),
             Catch::Contains("divisible"));
  auto cfg = qwen3_h100(1, g.alpha, g.beta);
  cfg.set("model.intermediate_size", int64_t{0});
  CHECK_THAT(create_error("trained-roofline", cfg), Catch::Contains("model.intermediate_size"));
  CHECK_THAT(create_error("trained-roofline", qwen3_h100(1, g.alpha, {1, 2, 3, 4, 5, 6})),
             Catch::Contains("beta_coeffs needs at least 7 values"));
}

// ---- trained-physics (spec head.md §1) ----------------------------------------

namespace {

blis::ConfigTable physics(const std::string& model, const std::string& gpu, int64_t tp) {
  const blis::ModelArch m = *catalog().bundled_model(model);
  const blis::HardwareSpec hw = catalog().hardware(gpu);
  const auto& c = *catalog().plugin_coefficients("trained-physics");
  blis::ConfigTable cfg;
  blis::put_latency_config(cfg, &m, &hw, tp, c.alpha, c.beta, 16);
  return cfg;
}

blis_batch_entry decode_at(int64_t input, int64_t progress) {
  return {input, progress, input, 0, 1, BLIS_PHASE_DECODE};
}

struct PhysicsCase {
  const char* batch;
  std::vector<blis_batch_entry> entries;
  double tp1, tp2;
};

std::vector<PhysicsCase> physics_table() {
  auto repeat = [](int n, blis_batch_entry e) { return std::vector<blis_batch_entry>(n, e); };
  auto prefill_with_decodes = [&](int n) {
    auto b = repeat(n, decode(1024));
    b.insert(b.begin(), prefill(512, 0, 512));
    return b;
  };
  return {
      {"empty", {}, 1, 1},
      {"1 decode, PI=1024", decodes(1), 12259, 6836},
      {"64 decodes, PI=1024", decodes(64), 18686, 10201},
      {"prefill 512", prefill512(), 14291, 7946},
      {"prefill 2048", {prefill(2048, 0, 2048)}, 21274, 11720},
      {"prefill 512 + 63 decodes", prefill_with_decodes(63), 20718, 11311},
      {"chunk I=4096, PI=2048, n=2048", {prefill(4096, 2048, 2048)}, 21802, 11984},
      {"1 decode, I=128, PI=128", {decode_at(128, 128)}, 12173, 6794},
      {"prefill 100", {prefill(100, 0, 100)}, 12569, 7010},
      {"8 decodes, I=500, PI=600", repeat(8, decode_at(500, 600)), 12650, 7049},
      {"stalled prefill member + 1 decode", {prefill(512, 0, 0), decode(1024)}, 12263, 6841},
  };
}

}  // namespace

TEST_CASE("trained-physics: spec head.md §1.5 step times, Qwen3-14B H100", "[latency]") {
  LatencyPlugin tp1("trained-physics", physics("qwen/qwen3-14b", "H100", 1));
  LatencyPlugin tp2("trained-physics", physics("qwen/qwen3-14b", "H100", 2));
  for (const auto& c : physics_table()) {
    INFO(c.batch);
    CHECK(tp1.step(c.entries) == c.tp1);
    CHECK(tp2.step(c.entries) == c.tp2);
  }
}

TEST_CASE("trained-physics: alpha terms (spec head.md §1.4)", "[latency]") {
  LatencyPlugin p("trained-physics", physics("qwen/qwen3-14b", "H100", 1));
  CHECK(p.queueing(1) == 15563);  // constant, whatever the prompt
  CHECK(p.queueing(100000) == 15563);
  CHECK(p.post_decode() == 777);
  CHECK(p.output_token() == 45);
}

// MoE values: spec head.md §1.3 evaluated by hand (an independent script),
// not confirmed against the reference, which gives no MoE vectors.
TEST_CASE("trained-physics: MoE, interleaved MoE, shared experts and the FP8 peak", "[latency]") {
  const std::vector<blis_batch_entry> one_decode = decodes(1);
  // Mixtral: every layer MoE, experts spread over the TP group, the expert
  // layers all-reduce like the attention.
  LatencyPlugin mixtral("trained-physics", physics("mistralai/mixtral-8x7b-v0.1", "H100", 2));
  CHECK(mixtral.step(one_decode) == 20084);
  CHECK(mixtral.step(prefill512()) == 21114);
  LatencyPlugin mixtral1("trained-physics", physics("mistralai/mixtral-8x7b-v0.1", "H100", 1));
  CHECK(mixtral1.step(one_decode) == 39011);

  // Scout: MoE every other layer (24 MoE + 24 dense with the 16384 FFN), the
  // per-MoE-layer overhead, 1-byte weights on the FP8 peak.
  const std::string scout = "redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic";
  LatencyPlugin s("trained-physics", physics(scout, "H100", 2));
  CHECK(s.step(one_decode) == 24963);
  CHECK(s.step(prefill512()) == 25507);
  auto no_fp8 = physics(scout, "H100", 2);
  no_fp8.set("hardware.tflops_fp8", 0.0);
  CHECK(LatencyPlugin("trained-physics", no_fp8).step(prefill512()) == 25997);

  // DeepSeek-V2-Lite: two shared experts (2·1408) beside 64 routed ones.
  LatencyPlugin ds("trained-physics", physics("deepseek-ai/deepseek-v2-lite", "H100", 1));
  CHECK(ds.step(one_decode) == 14037);
  CHECK(ds.step(prefill512()) == 14284);
  LatencyPlugin q("trained-physics", physics("qwen/qwen3-30b-a3b", "H100", 1));
  CHECK(q.step(one_decode) == 25651);
}

TEST_CASE("trained-physics: data parallelism and the MoE comm backend", "[latency]") {
  auto cfg = physics("mistralai/mixtral-8x7b-v0.1", "H100", 2);
  cfg.set("dp", int64_t{2});
  // dp > 1: a dispatch/combine per MoE layer replaces the expert all-reduce;
  // all-gather backends move every token, all-to-all ones the routed copies.
  CHECK(LatencyPlugin("trained-physics", cfg).step(prefill512()) == 11416);
  cfg.set("moe_comm_backend", std::string("allgather_reducescatter"));
  CHECK(LatencyPlugin("trained-physics", cfg).step(prefill512()) == 11416);
  cfg.set("moe_comm_backend", std::string("deepep_low_latency"));
  CHECK(LatencyPlugin("trained-physics", cfg).step(prefill512()) == 11439);
  cfg.set("moe_comm_backend", std::string("nccl-magic"));
  CHECK_THAT(create_error("trained-physics", cfg), Catch::Contains("unknown moe_comm_backend 'nccl-magic'"));

  // The backend only matters with data parallelism.
  auto one = physics("mistralai/mixtral-8x7b-v0.1", "H100", 2);
  one.set("moe_comm_backend", std::string("pplx"));
  CHECK(LatencyPlugin("trained-physics", one).step(prefill512()) == 21114);

  auto dense = physics("qwen/qwen3-14b", "H100", 1);
  dense.set("dp", int64_t{2});
  CHECK_THAT(create_error("trained-physics", dense), Catch::Contains("needs a MoE model"));
  dense.set("dp", int64_t{0});
  CHECK_THAT(create_error("trained-physics", dense), Catch::Contains("dp must be >= 1"));
}

TEST_CASE("trained-physics: coefficient slots and validation (spec head.md §1.2)", "[latency]") {
  // Seven betas: no splits (β1·max, β2·max), no MoE terms; the decode KV time
  // is then costed by β2 = 0, leaving the weights and fixed terms.
  const std::vector<double> seven{0.152128, 0.0, 1.36252915, 0.752037, 32.09546717, 4.41684444,
                                  126.024825};
  auto cfg = physics("qwen/qwen3-14b", "H100", 1);
  cfg.set("beta_coeffs", seven);
  CHECK(LatencyPlugin("trained-physics", cfg).step(decodes(1)) == 12161);  // 12161.611766
  cfg.set("beta_coeffs", std::vector<double>{1, 2, 3});
  CHECK_THAT(create_error("trained-physics", cfg), Catch::Contains("beta_coeffs needs at least 7"));

  cfg = physics("qwen/qwen3-14b", "H100", 1);
  cfg.set("alpha_coeffs", std::vector<double>{1, -2, 3});
  CHECK_THAT(create_error("trained-physics", cfg), Catch::Contains("alpha_coeffs[1]"));

  cfg = physics("qwen/qwen3-14b", "H100", 1);
  cfg.set("tp", int64_t{3});
  CHECK_THAT(create_error("trained-physics", cfg), Catch::Contains("divisible by tp"));

  cfg = physics("mistralai/mixtral-8x7b-v0.1", "H100", 1);
  cfg.set("model.experts_per_token", int64_t{0});
  CHECK_THAT(create_error("trained-physics", cfg), Catch::Contains("experts_per_token"));
}

// ---- decode-only steps priced from aggregates (ABI 1.5) ---------------------

namespace {

blis::ConfigTable arch(const std::string& model, int64_t tp, const std::vector<double>& alpha,
                       const std::vector<double>& beta) {
  const blis::ModelArch m = *catalog().bundled_model(model);
  const blis::HardwareSpec hw = catalog().hardware("H100");
  blis::ConfigTable cfg;
  blis::put_latency_config(cfg, &m, &hw, tp, alpha, beta, 16);
  return cfg;
}

}  // namespace

// The differential test of the aggregate entry: on random batches (decode
// only, or with prefill chunks and stalled members), whenever a built-in
// model prices the step from the plain decodes' sums, the value is exactly
// step_time's over the members. The models whose sums are
// exact never decline; roofline (one rounded term per member) declines only
// where rounding could change the tick, which random batches (almost) never hit.
TEST_CASE("latency plugins: decode steps priced from sums equal the member-by-member price", "[latency]") {
  const auto& cross = *catalog().plugin_coefficients("crossmodel");
  const auto& trained = *catalog().plugin_coefficients("trained-roofline");
  const auto& phys = *catalog().plugin_coefficients("trained-physics");
  struct Case {
    std::string name;
    blis::ConfigTable cfg;
    bool exact;  // never declines
  };
  std::vector<Case> cases;
  for (const std::string model : {"qwen/qwen3-14b", "mistralai/mixtral-8x7b-v0.1", "meta-llama/llama-3.1-70b-instruct"}) {
    for (int64_t tp : {1, 2, 4}) {
      cases.push_back({"roofline", arch(model, tp, {0, 0, 0}, {0, 0, 0}), false});
      cases.push_back({"crossmodel", arch(model, tp, cross.alpha, cross.beta), true});
      cases.push_back({"trained-roofline", arch(model, tp, trained.alpha, trained.beta), true});
      cases.push_back({"trained-physics", arch(model, tp, phys.alpha, phys.beta), true});
    }
  }
  cases.push_back({"blackbox", qwen3_h100(1, {0, 0, 0}, {6910.42, 17.67, 2.84}), true});
  cases.push_back({"blackbox", qwen3_h100(1, {0, 0, 0}, {0.25, 0, 0.5}), true});

  blis::test::SplitMix rng{20261125};
  for (auto& c : cases) {
    INFO(c.name);
    LatencyPlugin p(c.name, c.cfg);
    REQUIRE(p.prices_sums());
    int priced = 0, declined = 0;
    for (int draw = 0; draw < 400; ++draw) {
      // Batch sizes 1..512, contexts short or long (up to 2^20 tokens).
      const int64_t size = 1 + static_cast<int64_t>(rng.below(draw % 4 == 0 ? 8 : 512));
      const int64_t span = int64_t{1} << (4 + rng.below(17));
      // Half the draws decode only; the others mix in prefill chunks (some
      // with cache hits) and stalled members of either phase.
      const bool mixed = draw % 2 == 1;
      std::vector<blis_batch_entry> batch;
      for (int64_t i = 0; i < size; ++i) {
        const int64_t input = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(span)));
        const uint64_t kind = mixed ? rng.below(10) : 0;
        if (kind < 7) {
          batch.push_back(decode_at(input, input + static_cast<int64_t>(rng.below(static_cast<uint64_t>(span)))));
        } else if (kind < 9) {
          const int64_t progress = static_cast<int64_t>(rng.below(static_cast<uint64_t>(input)));
          const int32_t n = static_cast<int32_t>(1 + rng.below(static_cast<uint64_t>(std::min<int64_t>(input - progress, 2048))));
          blis_batch_entry e = prefill(input, progress, n);
          if (kind == 8) e.cached_tokens = progress / 2;
          batch.push_back(e);
        } else {
          blis_batch_entry e = rng.below(2) == 0 ? decode_at(input, input + 5) : prefill(input, 0, 0);
          e.new_tokens = 0;
          batch.push_back(e);
        }
      }
      int64_t sum_price = -1;
      if (p.decode_sums(batch, sum_price)) {
        ++priced;
        INFO("batch of " << size << ", draw " << draw);
        REQUIRE(sum_price == static_cast<int64_t>(p.step(batch)));
      } else {
        ++declined;
      }
    }
    if (c.exact) CHECK(declined == 0);
    CHECK(priced >= 396);
  }
}

TEST_CASE("latency plugins: sums beyond exact doubles are declined", "[latency]") {
  LatencyPlugin p("trained-physics", physics("qwen/qwen3-14b", "H100", 1));
  int64_t out = -1;
  blis_decode_batch b{sizeof(blis_decode_batch), sizeof(blis_batch_entry), 0, 4, (int64_t{1} << 53) + 1,
                      int64_t{1} << 52, 4, 0, nullptr};
  CHECK_FALSE(p.decode_sums(b, out));
  // Exact still; the host checks the answer like step_time's.
  b.progress_sum = int64_t{1} << 53;
  CHECK_THROWS_WITH(p.decode_sums(b, out),
                    Catch::Contains("decode_step_time() returned") &&
                        Catch::Contains("for a batch of 4 requests (0 prefill, 4 decode, 4 new tokens)"));
}
