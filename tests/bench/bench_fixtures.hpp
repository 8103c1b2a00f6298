// Inputs and paths shared by the benchmarks.
#pragma once

#include "engine/instance.hpp"

#include <blis/config_table.hpp>
#include <blis/model_data.hpp>
#include <blis/plugin.h>
#include <blis/plugin_loader.hpp>
#include <blis/registry.hpp>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace blis::bench {

// `n` instances with varied, deterministic loads.
inline std::vector<blis_instance_snapshot> varied_snapshots(int n) {
  std::vector<blis_instance_snapshot> snaps(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    snaps[i].index = i;
    snaps[i].queue_depth = (i * 7) % 5;
    snaps[i].batch_size = (i * 3) % 8;
    snaps[i].in_flight = i % 4;
    snaps[i].total_kv_blocks = 1000;
    snaps[i].free_kv_blocks = 1000 - 37 * i;
  }
  return snaps;
}

// The build's stage directory: $BLIS_TEST_STAGE, else <build>/stage beside
// this binary (<build>/tests/bench/blis_bench).
inline std::string stage_dir() {
  if (const char* s = std::getenv("BLIS_TEST_STAGE"); s != nullptr && s[0] != '\0') return s;
  namespace fs = std::filesystem;
  return (fs::path(blis::executable_dir()) / ".." / ".." / "stage").lexically_normal().string();
}

// A script shipped under scripts/. The bench target has no source-directory
// definition; this file's own path (absolute under CMake) leads there.
inline std::string shipped_script(const std::string& relative) {
  auto root = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  return (root / "scripts" / relative).string();
}

// Roofline Qwen3-14B on one H100 (TP 1), as `blis run --model qwen/qwen3-14b`
// sets it up: the stage's plugins into `registries`, the latency model's
// configuration, and the engine's KV blocks, block size and max-model-len.
inline void qwen3_14b_on_h100(Registries& registries, ConfigTable& latency, EngineConfig& engine,
                              int64_t kv_blocks, int32_t block_size) {
  const std::string stage = stage_dir();
  scan_plugin_dirs(registries, {stage + "/lib/blis/plugins"});
  const auto data = DataCatalog::load(stage + "/share/blis/data");
  const auto arch = data.bundled_model("qwen/qwen3-14b");
  if (!arch) throw std::runtime_error("qwen3-14b is not bundled in " + stage);
  const HardwareSpec hw = data.hardware("H100");
  put_latency_config(latency, &*arch, &hw, 1, {0, 0, 0}, {0, 0, 0}, block_size);
  engine.total_kv_blocks = kv_blocks;
  engine.block_size = block_size;
  engine.max_model_len = cap_max_model_len(derive_max_model_len(*arch), kv_blocks, block_size);
}

}  // namespace blis::bench
