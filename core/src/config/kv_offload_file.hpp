// The --kv-offload-config file (docs/kv-offload.md): one top-level
// kv_offload: block with HEAD's keys, defaults and checks (vLLM's offload
// config surface). Every error is a ConfigError at the offending node
// ("file:line:col: kv_offload: ...").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blis::config {

// One secondary tier, its device class resolved to numbers.
struct KvOffloadTier {
  std::string type = "fs";
  std::string root_dir;
  int64_t n_read_threads = 16;
  int64_t n_write_threads = 16;
  std::string locality;  // "", LOCAL or REMOTE
  bool enable_kv_events = false;
  bool direct_io = false;
  std::string device_class;  // "" when the three numbers were given
  double read_bandwidth = 0;   // bytes per µs
  double write_bandwidth = 0;  // bytes per µs
  double base_latency = 0;     // µs per access
  int64_t saturation_queue_depth = 1;
  double single_transfer_fraction = 1.0;
};

struct KvOffloadFile {
  std::string path;
  std::string where_block;  // position of the kv_offload: block
  std::string where_cpu_bytes;
  int64_t cpu_bytes_to_use = 0;
  int64_t block_size = 0;  // tokens; = blocks_per_chunk x GPU block size
  int64_t blocks_per_chunk = 1;
  int64_t tokens_per_hash = 0;
  std::string eviction_policy = "lru";  // an offload-eviction plugin (lru: the built-in)
  std::string where_eviction;            // position of eviction_policy, when given
  bool offload_prompt_only = true;
  bool self_describing_kv_events = false;
  std::vector<KvOffloadTier> tiers;
};

// Reads and checks the file; gpu_block_size is --block-size-in-tokens.
KvOffloadFile read_kv_offload_file(const std::string& path, int64_t gpu_block_size);

// The device classes a tier's device_class may name (HEAD's defaults.yaml
// kv_offload_devices), sorted by name.
struct KvOffloadDevice {
  const char* name;
  double read_bandwidth, write_bandwidth, base_latency;
};
const std::vector<KvOffloadDevice>& kv_offload_devices();

}  // namespace blis::config
