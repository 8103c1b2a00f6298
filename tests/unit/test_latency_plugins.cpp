// The four built-in latency-model plugins, loaded from the staged .so files
// through the real plugin loader, against the numbers of spec engine.md
// §5.2–§5.6 (Qwen3-14B on H100 unless stated).
#include "catch.hpp"

#include <blis/config_table.hpp>
#include <blis/model_data.hpp>
#include <blis/plugin.h>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>

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
  const std::vector<std::pair<std::string, blis::ConfigTable>> cases{
      {"roofline", qwen3_h100(1)},
      {"blackbox", qwen3_h100(1, {0, 0, 0}, {1, 1, 1})},
      {"crossmodel", qwen3_h100(1, cross.alpha, cross.beta)},
      {"trained-roofline", qwen3_h100(1, trained.alpha, trained.beta)}};
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
