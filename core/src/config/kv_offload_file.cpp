#include "config/kv_offload_file.hpp"
#include "config/strict_yaml.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>

namespace blis::config {

const std::vector<KvOffloadDevice>& kv_offload_devices() {
  // HEAD's defaults.yaml (f90a1e3a), kv_offload_devices: bytes per µs, µs.
  static const std::vector<KvOffloadDevice> devices = {
      {"cpu_dram", 2.0e4, 2.0e4, 1.0},
      {"nvme_gen3", 3.5e3, 3.0e3, 100.0},
      {"nvme_gen4", 7.0e3, 5.0e3, 80.0},
      {"s3", 1.0e3, 1.0e3, 30000.0},
      {"sata_ssd", 5.5e2, 5.0e2, 150.0},
  };
  return devices;
}

namespace {

constexpr std::array<std::string_view, 9> kBlockKeys = {
    "cpu_bytes_to_use", "block_size",          "blocks_per_chunk",          "tokens_per_hash", "eviction_policy",
    "offload_prompt_only", "self_describing_kv_events", "store_threshold", "secondary_tiers"};
constexpr std::array<std::string_view, 11> kTierKeys = {
    "type",      "root_dir",     "n_read_threads", "n_write_threads", "locality",       "enable_kv_events",
    "direct_io", "device_class", "read_bandwidth", "write_bandwidth", "base_latency"};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ConfigError(where, "kv_offload: " + what);
}

std::string known_devices() {
  std::string s;
  for (const KvOffloadDevice& d : kv_offload_devices()) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

// A field given (non-null), with its position.
struct Field {
  YAML::Node node;
  std::string where;
};

// The resolved tier's checks; where(key) places a field, has(key) says if it was given.
template <class Where, class Has>
void check_tier(const KvOffloadTier& t, const std::string& name, Where where, Has has, const std::string& at) {
  if (!t.locality.empty() && t.locality != "LOCAL" && t.locality != "REMOTE")
    fail(where("locality"), fmt::format("{}.locality must be LOCAL or REMOTE (or unset), got \"{}\"", name, t.locality));
  if (t.n_read_threads <= 0)
    fail(where("n_read_threads"), fmt::format("{}.n_read_threads must be > 0, got {}", name, t.n_read_threads));
  if (t.n_write_threads <= 0)
    fail(where("n_write_threads"), fmt::format("{}.n_write_threads must be > 0, got {}", name, t.n_write_threads));
  auto positive = [&](const char* k, double x) {
    if (!(std::isfinite(x) && x > 0))
      fail(where(has(k) ? k : "device_class"), fmt::format("{}.{} must be a finite value > 0, got {}", name, k, x));
  };
  positive("read_bandwidth", t.read_bandwidth);
  positive("write_bandwidth", t.write_bandwidth);
  if (!(std::isfinite(t.base_latency) && t.base_latency >= 0))
    fail(where("base_latency"), fmt::format("{}.base_latency must be a finite value >= 0, got {}", name, t.base_latency));
  // Bounds of blis's own: transfer times stay exact in 64-bit microseconds.
  if (t.base_latency > 1e12)
    fail(where("base_latency"), fmt::format("{}.base_latency must be at most 1e12 µs, got {}", name, t.base_latency));
  if (t.n_read_threads > 1'000'000 || t.n_write_threads > 1'000'000)
    fail(at, name + ": at most 1000000 read and write threads");
}

KvOffloadTier read_tier(const StrictYaml& y, const YAML::Node& v, size_t i) {
  const std::string path = "kv_offload.secondary_tiers[" + std::to_string(i) + "]";
  const std::string name = "secondary_tiers[" + std::to_string(i) + "]";
  const std::string at = y.where(v.Mark());
  std::map<std::string, Field> f;
  for (const auto& [key, w] : y.entries(y.mapping(v, path), path, kTierKeys))
    if (!w.IsNull()) f[key] = Field{w, y.where(w.Mark())};
  auto has = [&](const char* k) { return f.count(k) != 0; };
  auto str = [&](const char* k) { return y.string(f[k].node, child_path(path, k)); };
  auto num = [&](const char* k) { return y.number(f[k].node, child_path(path, k)); };
  auto integer = [&](const char* k) { return y.integer(f[k].node, child_path(path, k)); };
  auto where = [&](const char* k) { return has(k) ? f[k].where : at; };

  KvOffloadTier t;
  if (!has("type")) fail(at, name + ".type is required");
  t.type = str("type");
  if (t.type != "fs")
    fail(where("type"), fmt::format("{}.type \"{}\" is not supported (only \"fs\" tiers are modelled)", name, t.type));
  if (has("root_dir")) t.root_dir = str("root_dir");
  if (t.root_dir.empty()) fail(where("root_dir"), name + ".root_dir is required for an \"fs\" tier");
  if (has("n_read_threads")) t.n_read_threads = integer("n_read_threads");
  if (has("n_write_threads")) t.n_write_threads = integer("n_write_threads");
  if (has("locality")) t.locality = str("locality");
  if (has("enable_kv_events")) t.enable_kv_events = y.boolean(f["enable_kv_events"].node, path + ".enable_kv_events");
  if (!has("direct_io"))
    fail(at, name + ".direct_io must be set (true: O_DIRECT, false: buffered I/O; the two are different physics)");
  t.direct_io = y.boolean(f["direct_io"].node, path + ".direct_io");
  if (has("device_class")) {
    t.device_class = str("device_class");
    const KvOffloadDevice* dev = nullptr;
    for (const KvOffloadDevice& d : kv_offload_devices())
      if (t.device_class == d.name) dev = &d;
    if (dev == nullptr)
      fail(where("device_class"),
           fmt::format("{}.device_class \"{}\" is unknown (known: {})", name, t.device_class, known_devices()));
    // The built-in classes have one regime: direct and buffered I/O alike.
    t.read_bandwidth = dev->read_bandwidth;
    t.write_bandwidth = dev->write_bandwidth;
    t.base_latency = dev->base_latency;
  }
  if (has("read_bandwidth")) t.read_bandwidth = num("read_bandwidth");
  if (has("write_bandwidth")) t.write_bandwidth = num("write_bandwidth");
  if (has("base_latency")) t.base_latency = num("base_latency");
  if (!has("device_class") && !(has("read_bandwidth") && has("write_bandwidth") && has("base_latency")))
    fail(at, name + " needs a device_class or all of read_bandwidth, write_bandwidth and base_latency");
  check_tier(t, name, [&](const char* k) { return where(k); }, [&](const char* k) { return has(k); }, at);
  return t;
}

}  // namespace

namespace {

// The block's fields that were given (non-null), with their positions.
struct BlockFields {
  const StrictYaml& y;
  std::string at;  // the block's position
  std::map<std::string, Field> f;
  bool has(const char* k) const { return f.count(k) != 0; }
  std::string where(const char* k) const { return has(k) ? f.at(k).where : at; }
  int64_t integer(const char* k) const { return y.integer(f.at(k).node, child_path("kv_offload", k)); }
  bool boolean(const char* k) const { return y.boolean(f.at(k).node, child_path("kv_offload", k)); }
};

// block_size XOR blocks_per_chunk, and tokens_per_hash.
void read_chunking(const BlockFields& b, int64_t gpu_block_size, KvOffloadFile& out) {
  if (b.has("block_size") && b.has("blocks_per_chunk"))
    fail(b.where("blocks_per_chunk"), "block_size and blocks_per_chunk are mutually exclusive (block_size = "
                                      "blocks_per_chunk x the GPU block size); set at most one");
  out.blocks_per_chunk = 1;
  out.block_size = gpu_block_size;
  if (b.has("block_size")) {
    const int64_t bs = b.integer("block_size");
    if (bs <= 0 || bs % gpu_block_size != 0)
      fail(b.where("block_size"),
           fmt::format("block_size ({}) must be a positive multiple of the GPU block size ({})", bs, gpu_block_size));
    out.block_size = bs;
    out.blocks_per_chunk = bs / gpu_block_size;
  } else if (b.has("blocks_per_chunk")) {
    const int64_t bpc = b.integer("blocks_per_chunk");
    if (bpc <= 0) fail(b.where("blocks_per_chunk"), fmt::format("blocks_per_chunk must be > 0, got {}", bpc));
    if (bpc > INT64_MAX / gpu_block_size)
      fail(b.where("blocks_per_chunk"), fmt::format("blocks_per_chunk ({}) is too large", bpc));
    out.blocks_per_chunk = bpc;
    out.block_size = bpc * gpu_block_size;
  }
  out.tokens_per_hash = gpu_block_size;
  if (b.has("tokens_per_hash")) {
    out.tokens_per_hash = b.integer("tokens_per_hash");
    if (out.tokens_per_hash <= 0)
      fail(b.where("tokens_per_hash"), fmt::format("tokens_per_hash must be > 0, got {}", out.tokens_per_hash));
  }
}

// The resolved block's checks, then what the tier model implements (HEAD
// accepts the latter two, then stops with an internal error when it builds
// the tiers: docs/differences.md row 43).
void check_block(const BlockFields& b, const KvOffloadFile& out) {
  if (out.cpu_bytes_to_use <= 0)
    fail(b.where("cpu_bytes_to_use"), fmt::format("cpu_bytes_to_use must be > 0, got {}", out.cpu_bytes_to_use));
  if (out.eviction_policy.empty())
    fail(b.where("eviction_policy"), "eviction_policy must name an offload-eviction plugin (lru, the default)");
  if (out.blocks_per_chunk != 1)
    fail(b.where(b.has("block_size") ? "block_size" : "blocks_per_chunk"),
         fmt::format("blocks_per_chunk {} (block_size {}) is not supported: offload is block by block "
                     "(blocks_per_chunk 1, block_size = the GPU block size)",
                     out.blocks_per_chunk, out.block_size));
  if (out.eviction_policy == "arc")
    fail(b.where("eviction_policy"),
         "eviction_policy \"arc\" is not supported: the CPU tier evicts least recently used blocks (lru) or "
         "as an offload-eviction plugin chooses (docs/kv-offload.md)");
}

std::optional<YAML::Node> top_block(const StrictYaml& y, const std::string& text) {
  const auto doc = y.first_document(text);
  std::optional<YAML::Node> block;
  if (!doc || doc->IsNull()) return block;
  static constexpr std::array<std::string_view, 1> kTop = {"kv_offload"};
  for (const auto& [key, v] : y.entries(y.mapping(*doc, ""), "", kTop))
    if (!v.IsNull()) block = v;
  return block;
}

}  // namespace

KvOffloadFile read_kv_offload_file(const std::string& path, int64_t gpu_block_size) {
  const std::string text = read_text_file(path, "--kv-offload-config file");
  const StrictYaml y(path, StrictYaml::Position::kLineColumn);
  const std::optional<YAML::Node> block = top_block(y, text);
  if (!block) fail(path, "the file has no top-level kv_offload: block");
  KvOffloadFile out;
  out.path = path;
  BlockFields b{y, y.where(block->Mark()), {}};
  out.where_block = b.at;
  for (const auto& [key, w] : y.entries(y.mapping(*block, "kv_offload"), "kv_offload", kBlockKeys))
    if (!w.IsNull()) b.f[key] = Field{w, y.where(w.Mark())};

  if (!b.has("cpu_bytes_to_use")) fail(b.at, "cpu_bytes_to_use is required");
  out.cpu_bytes_to_use = b.integer("cpu_bytes_to_use");
  out.where_cpu_bytes = b.where("cpu_bytes_to_use");
  if (b.has("store_threshold")) {
    const int64_t s = b.integer("store_threshold");
    if (s < 0) fail(b.where("store_threshold"), fmt::format("store_threshold must be >= 0, got {}", s));
    if (s >= 2)
      fail(b.where("store_threshold"),
           fmt::format("store_threshold={} is not supported with tiered offload (only 0 or 1, which change nothing)", s));
  }
  read_chunking(b, gpu_block_size, out);
  if (b.has("eviction_policy")) {
    out.eviction_policy = y.string(b.f.at("eviction_policy").node, "kv_offload.eviction_policy");
    out.where_eviction = b.where("eviction_policy");
  }
  if (b.has("offload_prompt_only")) out.offload_prompt_only = b.boolean("offload_prompt_only");
  if (b.has("self_describing_kv_events")) out.self_describing_kv_events = b.boolean("self_describing_kv_events");
  if (b.has("secondary_tiers")) {
    const YAML::Node& seq = y.sequence(b.f.at("secondary_tiers").node, "kv_offload.secondary_tiers");
    if (seq.size() > 64) fail(b.where("secondary_tiers"), "at most 64 secondary tiers");
    for (size_t i = 0; i < seq.size(); ++i) out.tiers.push_back(read_tier(y, seq[i], i));
  }
  check_block(b, out);
  return out;
}

}  // namespace blis::config
