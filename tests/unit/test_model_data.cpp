// The bundled data catalog, config.json extraction, KV capacity and
// max-model-len derivation (spec engine.md §4.2, §5.2, §5.7, §10.2).
#include "catch.hpp"
#include "temp_dir.hpp"

#include <blis/config_table.hpp>
#include <blis/errors.hpp>
#include <blis/model_data.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

namespace fs = std::filesystem;

namespace {

const blis::DataCatalog& catalog() {
  static const blis::DataCatalog c =
      blis::DataCatalog::load(std::string(BLIS_TEST_STAGE) + "/share/blis/data");
  return c;
}

using blis::test::TempDir;

const std::string kHardwareToml = R"([H100]
TFlopsPeak = 989.5
BwPeakTBs = 3.35
mfuPrefill = 0.45
mfuDecode = 0.3
MemoryGiB = 80.0
)";

blis::ModelArch qwen3() { return *catalog().bundled_model("qwen/qwen3-14b"); }

}  // namespace

TEST_CASE("data catalog: model defaults and coefficient lookup (spec §5.2, §10.3)", "[latency]") {
  const auto d = catalog().defaults_for("Qwen/Qwen3-14B");
  REQUIRE(d);
  CHECK(d->gpu == "H100");
  CHECK(d->tensor_parallelism == 1);
  CHECK(d->vllm_version == "vllm/vllm-openai:v0.11.0");
  CHECK(d->hf_repo == "Qwen/Qwen3-14B");
  CHECK_FALSE(catalog().defaults_for("nobody/nothing"));
  const auto oss = catalog().defaults_for("openai/gpt-oss-20b");
  REQUIRE(oss);
  CHECK(oss->hf_repo.empty());

  const auto q = catalog().coefficients("qwen/qwen3-14b", "H100", 1, "vllm/vllm-openai:v0.11.0");
  REQUIRE(q);
  CHECK(q->total_kv_blocks == 17600);

  const auto l = catalog().coefficients("meta-llama/llama-3.1-8b-instruct", "H100", 2,
                                        "vllm/vllm-openai:v0.8.4");
  REQUIRE(l);
  CHECK(l->alpha == std::vector<double>{1601.350510688092, 3.512476196805965, 1805.5430360826988});
  CHECK(l->beta == std::vector<double>{6910.420479880494, 17.67057489844186, 2.8377471109943855});
  CHECK(l->total_kv_blocks == 132139);
  // Only the v0.8.4 entry exists for TP2; the model's default version finds nothing.
  CHECK_FALSE(catalog().coefficients("meta-llama/llama-3.1-8b-instruct", "H100", 2,
                                     "vllm/vllm-openai:v0.11.0"));

  // Duplicate keys exist in the table: the first entry wins.
  const auto dup = catalog().coefficients("redhatai/phi-4-fp8-dynamic", "H100", 1,
                                          "vllm/vllm-openai:v0.8.4");
  REQUIRE(dup);
  CHECK(dup->alpha[0] == 6933.519704638618);
}

TEST_CASE("data catalog: global coefficients and presets", "[latency]") {
  CHECK((*catalog().plugin_coefficients("crossmodel")).beta == std::vector<double>{116.110, 1226.868, 19.943, 9445.157});
  CHECK((*catalog().plugin_coefficients("crossmodel")).alpha == std::vector<double>{13732.0, 0.0, 860.6});
  CHECK((*catalog().plugin_coefficients("trained-roofline")).beta ==
        std::vector<double>{0.7726491335309499, 1.127489556719325, 1.0559901872766853, 0.0,
                            43.500541908701074, 48.80613214319187, 0.0});
  CHECK((*catalog().plugin_coefficients("trained-roofline")).alpha ==
        std::vector<double>{9315.338771116985, 1849.5902371340574, 1.7079389122469397});

  CHECK(catalog().preset_names() ==
        std::vector<std::string>{"chatbot", "contentgen", "multidoc", "summarization"});
  const auto chat = catalog().preset("chatbot");
  REQUIRE(chat);
  CHECK(chat->prompt_tokens == 256);
  CHECK(chat->prompt_tokens_stdev == 100);
  CHECK(chat->prompt_tokens_min == 2);
  CHECK(chat->prompt_tokens_max == 800);
  CHECK(chat->output_tokens_max == 1024);
  const auto multi = catalog().preset("multidoc");
  REQUIRE(multi);
  CHECK(multi->prefix_tokens == 0);  // absent in the data
  CHECK(multi->prompt_tokens == 10240);
  CHECK_FALSE(catalog().preset("nope"));
}

TEST_CASE("data catalog: the FP8 peak, L40S, H200 and B200; HEAD's table beside", "[latency]") {
  // The c9ca689b figures stay; the FP8 peak is an added column.
  const auto h100 = catalog().hardware("H100");
  CHECK(h100.tflops_fp8 == 1979.0);
  CHECK(h100.mfu_prefill == 0.45);
  const auto a100 = catalog().hardware("A100-SXM");
  CHECK(a100.tflops_fp8 == 0);
  CHECK(a100.mfu_prefill == 0.45);
  CHECK(a100.mfu_decode == 0.30);
  const auto l40s = catalog().hardware("l40s");
  CHECK(l40s.tflops_peak == 362.05);
  CHECK(l40s.tflops_fp8 == 1466.0);
  CHECK(l40s.bw_peak_tbs == 0.864);
  CHECK(l40s.mfu_decode == 0.08);
  CHECK(l40s.memory_gib == 48.0);
  const auto h200 = catalog().hardware("H200");
  CHECK(h200.tflops_peak == 989.5);
  CHECK(h200.bw_peak_tbs == 4.8);
  CHECK(h200.memory_gib == 141.0);
  const auto b200 = catalog().hardware("B200");
  CHECK(b200.tflops_fp8 == 4500.0);
  CHECK(b200.bw_peak_tbs == 8.0);

  // HEAD's table: the A100 MFUs it changed, for runs that reproduce HEAD.
  const std::string head = catalog().dir() + "/hardware-head.toml";
  const auto head_a100 = catalog().hardware("A100-80", head);
  CHECK(head_a100.mfu_prefill == 0.38);
  CHECK(head_a100.mfu_decode == 0.18);
  CHECK(catalog().hardware("H100", head).mfu_prefill == 0.45);
  CHECK_THROWS_AS(catalog().hardware("H200", head), blis::InputError);

  // The reference's JSON at HEAD reads the same.
  TempDir dir("blis-model-data-fp8");
  const std::string json = dir.write("hw.json", R"({
    "L40S": {"TFlopsPeak": 362.05, "TFlopsFP8": 1466.0, "BwPeakTBs": 0.864, "mfuPrefill": 0.32,
             "mfuDecode": 0.08, "MemoryGiB": 48.0, "_comment": "x"}})");
  CHECK(catalog().hardware("L40S", json).tflops_fp8 == 1466.0);
}

TEST_CASE("data catalog: hardware (spec §5.7)", "[latency]") {
  const auto h = catalog().hardware("H100");
  CHECK(h.name == "H100");
  CHECK(h.tflops_peak == 989.5);
  CHECK(h.bw_peak_tbs == 3.35);
  CHECK(h.mfu_prefill == 0.45);
  CHECK(h.mfu_decode == 0.30);
  CHECK(h.memory_gib == 80.0);
  const auto a = catalog().hardware("A100-80");
  CHECK(a.tflops_peak == 312);
  CHECK(a.bw_peak_tbs == 2.039);

  try {
    catalog().hardware("GB300");
    FAIL("expected an InputError");
  } catch (const blis::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("\"GB300\"") &&
                             Catch::Contains("available: [A100-80 A100-SXM B200 H100 H200 L40S]"));
  }

  TempDir dir("blis-model-data");
  const std::string json = dir.write("hw.json", R"({
    "X1": {"TFlopsPeak": 100, "BwPeakTBs": 1.5, "mfuPrefill": 0.5, "mfuDecode": 0.25,
           "MemoryGiB": 40.0, "_comment": "ignored"},
    "Y2": {"TFlopsPeak": 1}
  })");
  const auto x = catalog().hardware("X1", json);
  CHECK(x.tflops_peak == 100);
  CHECK(x.bw_peak_tbs == 1.5);
  CHECK(x.mfu_decode == 0.25);
  CHECK(x.memory_gib == 40.0);
  CHECK(catalog().hardware("Y2", json).memory_gib == 0);
  CHECK_THROWS_AS(catalog().hardware("H100", json), blis::InputError);

  const std::string toml = dir.write("hw.toml", kHardwareToml);
  CHECK(catalog().hardware("H100", toml).tflops_peak == 989.5);
  const std::string bad = dir.write("bad.toml", "[G]\nTFlopsPeak = 1\nBwPeakTBs = 1\nmfuPrefill = 1\n"
                                                "mfuDecode = 1\nMemoryGB = 8\n");
  try {
    catalog().hardware("G", bad);
    FAIL("expected a ConfigError");
  } catch (const blis::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith(bad + ":6:1") && Catch::Contains("MemoryGB"));
  }
}

// The tables are read once per process and folder (a sweep opens a run per
// configuration): a file whose bytes changed is read again, even at the same size.
TEST_CASE("data catalog: a changed data file is read again", "[latency]") {
  TempDir dir("blis-model-data");
  dir.write("hardware.toml", kHardwareToml);
  dir.write("defaults.toml", "[defaults.\"a/b\"]\nGPU = \"H100\"\ntensor_parallelism = 2\n");
  CHECK(blis::DataCatalog::load(dir.str()).defaults_for("a/b")->gpu == "H100");
  CHECK(blis::DataCatalog::load(dir.str()).defaults_for("a/b")->gpu == "H100");
  dir.write("defaults.toml", "[defaults.\"a/b\"]\nGPU = \"A100\"\ntensor_parallelism = 2\n");
  CHECK(blis::DataCatalog::load(dir.str()).defaults_for("a/b")->gpu == "A100");
  // A file that no longer reads is refused, not served from what was read before.
  dir.write("defaults.toml", "surprise = 1\n");
  CHECK_THROWS_WITH(blis::DataCatalog::load(dir.str()), Catch::Contains("surprise"));
}

TEST_CASE("data catalog: strict loading names file:line:col", "[latency]") {
  TempDir dir("blis-model-data");
  dir.write("hardware.toml", kHardwareToml);
  const std::string defaults = dir.write("defaults.toml", R"([defaults."a/b"]
GPU = "H100"
tensor_paralelism = 2
)");
  try {
    blis::DataCatalog::load(dir.str());
    FAIL("expected a ConfigError");
  } catch (const blis::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith(defaults + ":3:1") &&
                             Catch::Contains("tensor_paralelism"));
  }

  dir.write("defaults.toml", "[[models]]\nid = \"a/b\"\nGPU = \"H100\"\ntensor_parallelism = \"1\"\n"
                             "vllm_version = \"v\"\n");
  CHECK_THROWS_WITH(blis::DataCatalog::load(dir.str()),
                    Catch::StartsWith(defaults + ":4:") && Catch::Contains("integer"));

  dir.write("defaults.toml", "surprise = 1\n");
  CHECK_THROWS_WITH(blis::DataCatalog::load(dir.str()), Catch::Contains("surprise"));

  dir.write("defaults.toml", "[defaults\n");
  CHECK_THROWS_AS(blis::DataCatalog::load(dir.str()), blis::ConfigError);

  dir.write("defaults.toml", "[[models]]\nid = \"a/b\"\nGPU = \"H100\"\ntensor_parallelism = 1\n"
                             "vllm_version = \"v\"\nalpha_coeffs = [1, 2.5, 3]\n"
                             "beta_coeffs = [4.0, 5, 6]\n");
  const auto c = blis::DataCatalog::load(dir.str());
  const auto e = c.coefficients("A/B", "H100", 1, "v");
  REQUIRE(e);
  CHECK(e->alpha == std::vector<double>{1, 2.5, 3});
  CHECK(e->total_kv_blocks == 0);
}

TEST_CASE("model config: bundled architectures (spec §5.7)", "[latency]") {
  const auto q = qwen3();
  CHECK(q.num_layers == 40);
  CHECK(q.hidden_size == 5120);
  CHECK(q.num_heads == 40);
  CHECK(q.num_kv_heads == 8);
  CHECK(q.intermediate_size == 17408);
  CHECK(q.vocab_size == 151936);
  CHECK(q.bytes_per_param == 2);
  CHECK(q.num_experts == 0);
  CHECK(q.experts_per_token == 0);
  CHECK(q.hidden_act == "silu");
  CHECK(q.model_type == "qwen3");
  CHECK_FALSE(q.tie_word_embeddings);
  CHECK_FALSE(q.moe_count_missing);
  CHECK(q.max_position_embeddings == 40960);
  CHECK_FALSE(q.rope_scaling_present);  // null in config.json

  const auto moe = *catalog().bundled_model("qwen/qwen3-30b-a3b");
  CHECK(moe.num_experts == 128);
  CHECK(moe.experts_per_token == 8);
  CHECK(moe.moe_intermediate_size == 768);
  CHECK(moe.num_kv_heads == 4);

  const auto ds = *catalog().bundled_model("deepseek-ai/deepseek-v2-lite");
  CHECK(ds.num_experts == 64);  // n_routed_experts
  CHECK(ds.n_shared_experts == 2);
  CHECK(ds.shared_expert_dim == 2 * 1408);
  CHECK(ds.rope_type == "yarn");
  CHECK(ds.original_max_position_embeddings == 4096);
  REQUIRE(ds.rope_factor);
  CHECK(*ds.rope_factor == 40);

  // text_config of a multimodal config wins over the top level.
  const auto scout = *catalog().bundled_model("redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic");
  CHECK(scout.model_type == "llama4_text");
  CHECK(scout.num_layers == 48);
  CHECK(scout.hidden_size == 5120);
  CHECK(scout.num_experts == 16);
  CHECK(scout.experts_per_token == 1);
  CHECK(scout.intermediate_size == 8192);

  const auto glm = *catalog().bundled_model("zai/glm-5.2-fp8");
  CHECK(glm.bytes_per_param == 2);  // from "dtype" when torch_dtype is absent

  CHECK(catalog().bundled_model("meta-llama/Llama-2-7b-hf")->bytes_per_param == 2);  // float16
  CHECK_FALSE(catalog().bundled_model("nobody/unknown-model"));
  CHECK_THROWS_AS(catalog().bundled_model("x/../../etc/passwd"), blis::InputError);
}

TEST_CASE("model config: config.json extraction rules (spec §5.7)", "[latency]") {
  TempDir dir("blis-model-data");
  const std::string p = dir.write("config.json", R"({
    "num_hidden_layers": 12.9, "hidden_size": 768, "num_attention_heads": 12,
    "num_kv_heads": 0, "multi_query_group_num": 2, "ffn_hidden_size": 3072,
    "vocab_size": 1000, "torch_dtype": "float32", "num_local_experts": 1,
    "num_experts": 4, "num_experts_per_tok": 2, "shared_expert_intermediate_size": 512,
    "tie_word_embeddings": true, "max_position_embeddings": 2048,
    "rope_scaling": {"rope_type": "linear", "factor": 2}
  })");
  const auto m = blis::load_model_config_json(p);
  CHECK(m.source == p);
  CHECK(m.num_layers == 12);  // truncated
  CHECK(m.num_kv_heads == 2);
  CHECK(m.intermediate_size == 3072);
  CHECK(m.bytes_per_param == 4);
  CHECK(m.num_experts == 4);
  CHECK(m.experts_per_token == 2);
  CHECK(m.shared_expert_dim == 512);
  CHECK(m.tie_word_embeddings);
  CHECK(blis::derive_max_model_len(m) == 4096);
  CHECK(blis::load_model_config_folder(dir.str()).num_layers == 12);

  dir.write("config.json", R"({"num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "torch_dtype": "complex64", "n_shared_experts": 1,
    "text_config": {"hidden_size": 128}})");
  const auto k = blis::load_model_config_folder(dir.str());
  CHECK(k.num_kv_heads == 4);  // all KV-head fields missing → H
  CHECK(k.hidden_size == 128);
  CHECK(k.bytes_per_param == 0);
  CHECK(k.moe_count_missing);

  dir.write("config.json", "{not json");
  CHECK_THROWS_AS(blis::load_model_config_folder(dir.str()), blis::ConfigError);
  CHECK_THROWS(blis::load_model_config_folder(dir.str() + "/missing"));
}

TEST_CASE("model config: interleaved MoE layers, dense FFN and quantised weights (head.md §1.2)",
          "[latency]") {
  const auto scout = *catalog().bundled_model("redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic");
  CHECK(scout.interleave_moe_layer_step == 1);
  CHECK(scout.intermediate_size_mlp == 16384);
  CHECK(scout.bytes_per_param == 2);              // bfloat16 activations...
  CHECK(scout.weight_bytes_per_param == 1.0);     // ...8-bit compressed-tensors weights
  CHECK(catalog().bundled_model("zai/glm-5.2-fp8")->weight_bytes_per_param == 1.0);  // quant_method fp8
  const auto qwen = qwen3();
  CHECK(qwen.weight_bytes_per_param == 0);  // not quantised
  CHECK(qwen.interleave_moe_layer_step == 0);
  CHECK(qwen.intermediate_size_mlp == 0);

  TempDir dir("blis-model-quant");
  auto weight_bytes = [&](const std::string& quantization_config) {
    dir.write("config.json", R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "torch_dtype": "bfloat16", "quantization_config": )" + quantization_config + "}");
    return blis::load_model_config_folder(dir.str()).weight_bytes_per_param;
  };
  CHECK(weight_bytes(R"({"quant_method": "gptq", "bits": 4})") == 0.5);
  CHECK(weight_bytes(R"({"quant_method": "awq", "bits": "8"})") == 1.0);
  CHECK(weight_bytes(R"({"quant_method": "FP8"})") == 1.0);
  CHECK(weight_bytes(R"({"quant_method": "compressed-tensors", "config_groups": {
      "group_1": {"weights": {"num_bits": 8}}, "group_0": {"weights": {"num_bits": 4}}}})") == 0.5);
  CHECK(weight_bytes(R"({"quant_method": "compressed-tensors"})") == 0);
  CHECK(weight_bytes(R"({"quant_method": "bitsandbytes", "bits": "four"})") == 0);
  CHECK(weight_bytes("null") == 0);

  // The model name speaks when quantization_config does not.
  CHECK(blis::weight_bytes_from_model_name("redhatai/llama-3.3-70b-instruct-quantized.w4a16") == 0.5);
  CHECK(blis::weight_bytes_from_model_name("RedHatAI/phi-4-quantized.W8A8") == 1.0);
  CHECK(blis::weight_bytes_from_model_name("redhatai/phi-4-FP8-dynamic") == 1.0);
  CHECK(blis::weight_bytes_from_model_name("meta-llama/llama-4-maverick-17b-128e-instruct-fp8") == 1.0);
  CHECK(blis::weight_bytes_from_model_name("qwen/qwen3-14b") == 0);
  CHECK(blis::weight_bytes_from_model_name("someone/fp80-model") == 0);
}

TEST_CASE("kv capacity: Qwen3-14B on H100 (spec §4.2)", "[latency]") {
  const auto h100 = catalog().hardware("H100");
  CHECK(blis::auto_kv_blocks(qwen3(), h100, 1, 16) == 15909);
  CHECK(blis::auto_kv_blocks(qwen3(), h100, 2, 16) == 89941);
  CHECK(blis::auto_kv_blocks(qwen3(), h100, 4, 16) == 413846);
  CHECK(blis::auto_kv_blocks(qwen3(), h100, 8, 16) == 1763547);
}

TEST_CASE("kv capacity: --gpu-memory-utilization replaces the 0.9 share (spec head §7.4)", "[latency]") {
  // Qwen3-14B at TP 1 costs 33.16 GiB before KV, and a 16-token block is
  // 2.5 MiB (409.6 blocks per GiB): each 0.1 of 80 GiB is 8 GiB, 3277 blocks.
  const auto h100 = catalog().hardware("H100");
  CHECK(blis::auto_kv_blocks(qwen3(), h100, 1, 16, 0.9) == 15909);
  CHECK(blis::auto_kv_blocks(qwen3(), h100, 1, 16, 1.0) == 19186);
  CHECK(blis::auto_kv_blocks(qwen3(), h100, 1, 16, 0.8) == 12632);
  CHECK(blis::auto_kv_blocks(qwen3(), h100, 1, 16, 0.5) == 2802);
  // 32 GiB cannot hold the weights and activations.
  CHECK_THROWS_WITH(blis::auto_kv_blocks(qwen3(), h100, 1, 16, 0.4), Catch::Contains("80 GiB x 40% x 1 GPUs"));
  CHECK_THROWS_WITH(blis::auto_kv_blocks(qwen3(), h100, 1, 16, 0.0), Catch::Contains("(0, 1]"));
  CHECK_THROWS_WITH(blis::auto_kv_blocks(qwen3(), h100, 1, 16, 1.01), Catch::Contains("(0, 1]"));
}

TEST_CASE("kv capacity: validation and failures (spec §4.2)", "[latency]") {
  const auto h100 = catalog().hardware("H100");
  auto m = qwen3();
  m.hidden_act = "gelu";
  CHECK_THROWS_WITH(blis::auto_kv_blocks(m, h100, 1, 16), Catch::Contains("activation"));
  m = qwen3();
  m.hidden_act.clear();  // absent: SwiGLU assumed
  CHECK(blis::auto_kv_blocks(m, h100, 1, 16) == 15909);
  CHECK_THROWS_AS(blis::auto_kv_blocks(qwen3(), h100, 0, 16), blis::InputError);
  CHECK_THROWS_AS(blis::auto_kv_blocks(qwen3(), h100, 1, 0), blis::InputError);
  CHECK_THROWS_WITH(blis::auto_kv_blocks(qwen3(), h100, 3, 16), Catch::Contains("divisible"));
  auto no_memory = h100;
  no_memory.memory_gib = 0;
  CHECK_THROWS_WITH(blis::auto_kv_blocks(qwen3(), no_memory, 1, 16), Catch::Contains("MemoryGiB"));
  auto small = h100;
  small.memory_gib = 16;
  CHECK_THROWS_WITH(blis::auto_kv_blocks(qwen3(), small, 1, 16), Catch::Contains("GiB"));
  m = qwen3();
  m.bytes_per_param = 0;
  CHECK_THROWS_AS(blis::auto_kv_blocks(m, h100, 1, 16), blis::InputError);
  m = qwen3();
  m.moe_count_missing = true;
  CHECK_THROWS_WITH(blis::auto_kv_blocks(m, h100, 1, 16), Catch::Contains("MoE"));
  // MoE models reserve more activation memory and count every expert's weights.
  const auto moe = *catalog().bundled_model("qwen/qwen3-30b-a3b");
  CHECK(blis::auto_kv_blocks(moe, h100, 1, 16) > 0);
}

TEST_CASE("max-model-len derivation (spec §10.2, cli.md §3.6)", "[latency]") {
  CHECK(blis::derive_max_model_len(qwen3()) == 40960);
  // yarn: base is rope_scaling.original_max_position_embeddings.
  CHECK(blis::derive_max_model_len(*catalog().bundled_model("deepseek-ai/deepseek-v2-lite")) ==
        4096 * 40);
  // llama3 rope already counted in max_position_embeddings.
  CHECK(blis::derive_max_model_len(*catalog().bundled_model("meta-llama/llama-3.1-70b-instruct")) ==
        131072);
  CHECK(blis::derive_max_model_len(*catalog().bundled_model("mistralai/mixtral-8x7b-v0.1")) == 32768);

  blis::ModelArch m;
  CHECK(blis::derive_max_model_len(m) == 0);
  m.max_position_embeddings = 1000;
  m.rope_scaling_present = true;
  m.rope_scaling_is_object = true;
  m.rope_type = "dynamic";
  m.rope_factor = 2.5;
  m.rope_factor_present = true;
  CHECK(blis::derive_max_model_len(m) == 2500);
  m.model_type = "gemma3_text";
  CHECK(blis::derive_max_model_len(m) == 1000);
  m.model_type.clear();
  m.rope_factor = 1.0;
  CHECK(blis::derive_max_model_len(m) == 1000);
  m.rope_factor.reset();
  CHECK(blis::derive_max_model_len(m) == 1000);
  m.rope_factor = 4;
  m.rope_type = "yarn";
  m.original_max_position_embeddings = 0;  // absent: the base stays max_position_embeddings
  CHECK(blis::derive_max_model_len(m) == 4000);
  m.rope_scaling_is_object = false;
  CHECK(blis::derive_max_model_len(m) == 1000);
  m.rope_scaling_is_object = true;
  m.rope_factor = 1e300;  // overflow → unscaled
  CHECK(blis::derive_max_model_len(m) == 1000);

  CHECK(blis::cap_max_model_len(40960, 17600, 16) == 40960);
  CHECK(blis::cap_max_model_len(40960, 2000, 16) == 32000);
  CHECK(blis::cap_max_model_len(0, 10, 16) == 0);
}

TEST_CASE("put_latency_config writes typed keys", "[latency]") {
  const auto m = qwen3();
  const auto hw = catalog().hardware("H100");
  blis::ConfigTable cfg;
  blis::put_latency_config(cfg, &m, &hw, 2, {1, 2, 3}, {4, 5, 6}, 16);
  CHECK(std::get<int64_t>(*cfg.find("model.num_layers")) == 40);
  CHECK(std::get<int64_t>(*cfg.find("model.num_kv_heads")) == 8);
  CHECK(std::get<int64_t>(*cfg.find("model.intermediate_size")) == 17408);
  CHECK(std::get<double>(*cfg.find("model.bytes_per_param")) == 2.0);
  CHECK(std::get<int64_t>(*cfg.find("model.num_experts")) == 0);
  CHECK(std::get<std::string>(*cfg.find("hardware.name")) == "H100");
  CHECK(std::get<double>(*cfg.find("hardware.tflops_peak")) == 989.5);
  CHECK(std::get<double>(*cfg.find("hardware.memory_gib")) == 80.0);
  CHECK(std::get<double>(*cfg.find("hardware.tflops_fp8")) == 1979.0);
  CHECK(std::get<int64_t>(*cfg.find("model.interleave_moe_layer_step")) == 0);
  CHECK(std::get<int64_t>(*cfg.find("model.intermediate_size_mlp")) == 0);
  CHECK(std::get<double>(*cfg.find("model.weight_bytes_per_param")) == 0.0);
  CHECK(std::get<int64_t>(*cfg.find("tp")) == 2);
  CHECK(std::get<int64_t>(*cfg.find("block_size")) == 16);
  CHECK(std::get<std::vector<double>>(*cfg.find("alpha_coeffs")) == std::vector<double>{1, 2, 3});
  CHECK(std::get<std::vector<double>>(*cfg.find("beta_coeffs")) == std::vector<double>{4, 5, 6});

  blis::ConfigTable bare;
  blis::put_latency_config(bare, nullptr, nullptr, 1, {0, 0, 0}, {1, 2, 3}, 16);
  CHECK_FALSE(bare.contains("model.num_layers"));
  CHECK_FALSE(bare.contains("hardware.name"));
  CHECK(bare.contains("tp"));
}
