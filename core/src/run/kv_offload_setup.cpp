#include "run/kv_offload_setup.hpp"
#include "config/kv_offload_file.hpp"
#include "run/pd_setup.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <cmath>

namespace blis {

std::shared_ptr<const OffloadChainConfig> resolve_kv_offload(const RunConfig& config,
                                                             const std::optional<ModelArch>& arch) {
  const EngineSettings& e = config.pool().engine;
  if (!e.kv_offload_config) {
    if (e.kv_cpu_blocks == 0 || e.kv_cpu_model != "mirror") return nullptr;
    // HEAD's mirror tier (sim/kv/tiered.go): the chain with a CPU tier of
    // --kv-cpu-blocks and nothing behind it; every full block of a running
    // request is copied (decode blocks too); a reload costs the base latency
    // plus the block's transfer at --kv-transfer-bandwidth.
    auto c = std::make_shared<OffloadChainConfig>();
    c->cpu_blocks = e.kv_cpu_blocks;
    c->per_block_bytes = 1;  // no transfer station: never read
    c->prompt_only = false;
    c->tiered = true;
    c->reload_us = CpuTierConfig{e.kv_cpu_blocks, e.kv_offload_threshold, e.kv_transfer_bandwidth,
                                 e.kv_transfer_base_latency}
                       .block_transfer_us(e.block_size);
    return c;
  }
  const config::KvOffloadFile f = config::read_kv_offload_file(*e.kv_offload_config, e.block_size);
  const std::string where = config.where("kv_offload_config");
  if (e.kv_cpu_blocks > 0)
    throw InputError(where, "--kv-offload-config and --kv-cpu-blocks are two offload models; set only one");
  if (pd_configured(config))
    throw InputError(where, "--kv-offload-config is not supported with P/D disaggregation yet");
  if (!arch)
    throw InputError(where, fmt::format("the offload tiers need the KV bytes of a block, from the model's "
                                        "architecture, and blis has none for '{}'; give --model-config-folder",
                                        config.pool().model.name.value_or("?")));
  // HEAD's per-rank KV bytes of one GPU block: layers x 2 x head dim x KV
  // heads x bytes per parameter / TP, times the block size, truncated.
  const ModelArch& a = *arch;
  const int64_t tp = config.pool().model.tp.value_or(1);
  const int64_t kv_heads = a.num_kv_heads > 0 ? a.num_kv_heads : a.num_heads;
  const int64_t head_dim = a.num_heads > 0 ? a.hidden_size / a.num_heads : 0;
  const double per_token = static_cast<double>(a.num_layers) * 2.0 * static_cast<double>(head_dim) *
                           static_cast<double>(kv_heads) * a.bytes_per_param / static_cast<double>(std::max<int64_t>(tp, 1));
  const double per_block = per_token * static_cast<double>(e.block_size);
  if (!(std::isfinite(per_block) && per_block >= 1 && per_block < 9.2e18))
    throw InputError(where, fmt::format("cannot derive the KV bytes of a block from '{}' ({} bytes per token)",
                                        a.source, per_token));
  auto c = std::make_shared<OffloadChainConfig>();
  c->per_block_bytes = static_cast<int64_t>(per_block);
  c->cpu_blocks = f.cpu_bytes_to_use / c->per_block_bytes;
  if (c->cpu_blocks < 1)
    throw ConfigError(f.where_cpu_bytes,
                      fmt::format("kv_offload: cpu_bytes_to_use ({}) is smaller than one block ({} bytes): no CPU "
                                  "block fits",
                                  f.cpu_bytes_to_use, c->per_block_bytes));
  c->prompt_only = f.offload_prompt_only;
  c->eviction_policy = f.eviction_policy;
  c->eviction_where = f.where_eviction.empty() ? where : f.where_eviction;
  for (const config::KvOffloadTier& t : f.tiers) {
    OffloadTierParams p;
    p.n_read = t.n_read_threads;
    p.n_write = t.n_write_threads;
    p.base_us = std::llround(t.base_latency);
    p.read_bytes_per_us = t.read_bandwidth;
    p.write_bytes_per_us = t.write_bandwidth;
    p.saturation_queue_depth = t.saturation_queue_depth;
    p.single_transfer_fraction = t.single_transfer_fraction;
    c->tiers.push_back(p);
  }
  return c;
}

}  // namespace blis
