#include "run/pd_setup.hpp"

#include "config/pool_text.hpp"
#include "util/compact_text.hpp"

#include <blis/config_keys.h>
#include <blis/errors.hpp>
#include <blis/policy_config.hpp>
#include <blis/registry.hpp>
#include <blis/settings.hpp>

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <spdlog/spdlog.h>

namespace blis {
namespace {

constexpr const char* kPrefill = "prefill";
constexpr const char* kDecode = "decode";
constexpr const char* kShared = "prefill-decode";
constexpr const char* kEncode = "encode";

// " key=value" when the role's own setting is given (0 = the run's).
template <class T>
std::string pool_key(const char* key, const std::optional<T>& v) {
  if (!v) return "";
  if constexpr (std::is_same_v<T, int64_t>) {
    if (*v == 0) return "";
    return fmt::format(" {}={}", key, *v);
  } else {
    return fmt::format(" {}={}", key, compact::quote(*v, compact::kSpaced));
  }
}

std::unique_ptr<Router> pool_router(const std::string& list, const std::string& where, const ResolvedRun& r,
                                    RunContext& ctx, bool& cache_query) {
  std::vector<ScorerWeight> scorers = parse_scorer_list(list);
  if (scorers.empty()) throw InputError(where, "no scorer given; use \"name:weight,...\" (blis plugins list)");
  std::vector<WeightedScorer> weighted;
  ConfigTable base;
  base.set(BLIS_KEY_BLOCK_SIZE, r.config.pool().engine.block_size);
  for (const auto& sw : scorers) {
    const auto* entry = ctx.env.registries->scorers.find(sw.name);
    if (entry == nullptr)
      throw InputError(where, fmt::format("unknown scorer '{}'; blis plugins list shows the scorers", sw.name));
    cache_query = cache_query || (entry->needs & BLIS_NEED_PREFIX_CACHE) != 0;
    const ConfigTable cfg = r.overrides.config_for(sw.name, base);
    weighted.push_back({sw.name, sw.weight,
                        ctx.env.registries->scorers.create(sw.name, CreateArgs{&cfg, r.seed}),
                        route_reads(entry->needs)});
  }
  return std::make_unique<Router>(RoutingPolicy::Weighted, std::move(weighted), r.seed);
}

bool has_role_pools(const RunConfig& config) {
  for (const Given<PoolSpec>& pool : config.pool_specs)
    if (!pool.value.role.empty()) return true;
  return false;
}

// P/D pools given as --pool entries with role keys: each pool needs a role,
// and the cluster a prefill and a decode instance at least. The role flags'
// deployment settings belong to the pools then.
void check_role_pools(const RunConfig& config, const std::string& decider) {
  const std::string where = config.where("pools");
  int64_t prefill = 0, decode = 0;
  for (const Given<PoolSpec>& pool : config.pool_specs) {
    const std::string& role = pool.value.role;
    if (role.empty())
      throw InputError(where, fmt::format("pool '{}': the other pools have a P/D role, so this one needs "
                                          "role=prefill, role=decode, role=mixed or role=encode",
                                          pool.text));
    const int64_t n = pool.value.count;
    if (role == "encode") continue;
    if (role != "decode") prefill += n;
    if (role != "prefill") decode += n;
  }
  if (prefill == 0 || decode == 0)
    throw InputError(where, fmt::format("P/D pools of {} prefill and {} decode instance(s): both need at least one "
                                        "(role=mixed counts for both)",
                                        prefill, decode));
  for (const char* key : {"prefill_tp", "decode_tp", "prefill_hardware", "decode_hardware", "prefill_latency_model",
                          "decode_latency_model", "prefill_max_model_len", "decode_max_model_len"})
    if (config.origins.count(key))
      throw InputError(config.where(key), "the P/D pools are --pool entries: give the pool's own key (tp=, "
                                          "hardware=, latency_model=, max_model_len=) instead");
  if (config.origins.count("pd_prefix_threshold") && decider != "prefix-threshold")
    spdlog::warn("{} has no effect with --pd-decider {}", config.where("pd_prefix_threshold"), decider);
}

// Without P/D pools: settings that would change nothing are refused rather
// than ignored (the reference warns on `run`), or warned about.
void check_settings_without_pools(const RunConfig& config, const std::string& decider) {
  const PdSettings& pd = config.pd;
  for (const char* key : {"pd_decider", "pd_transfer_contention", "prefill_routing_scorers",
                          "decode_routing_scorers", "prefill_tp", "decode_tp", "prefill_hardware",
                          "decode_hardware", "prefill_latency_model", "decode_latency_model",
                          "prefill_max_model_len", "decode_max_model_len"}) {
    if (!config.origins.count(key)) continue;
    if (std::string(key) == "pd_decider" && decider == "never") continue;
    if (std::string(key) == "pd_transfer_contention" && !pd.transfer_contention.value_or(false)) continue;
    throw InputError(config.where(key), "needs P/D pools: give --prefill-instances and --decode-instances "
                                        "(or --prefill-decode-instances)");
  }
  for (const char* key : {"pd_prefix_threshold", "pd_transfer_bandwidth", "pd_transfer_base_latency"})
    if (config.origins.count(key))
      spdlog::warn("{} has no effect without P/D pools (--prefill-instances, --decode-instances)", config.where(key));
}

// E/P/D (docs/epd.md): the encode pool goes with P/D pools, and a decider
// other than never with an encode pool. `encode_pools`: instances of
// --pool entries with role=encode.
void check_encode(const RunConfig& config, bool pd_pools, int64_t encode_pools) {
  const int64_t e = config.pd.encode_instances.value_or(0);
  const std::string decider = config.pd.encode_decider.value_or("never");
  if (e > 0 && encode_pools > 0)
    throw InputError(config.where("encode_instances"), "the pools are --pool entries: give the encode pool as one, "
                                                       "with role=encode");
  if (e > 0 && !pd_pools)
    throw InputError(config.where("encode_instances"), "the encode pool needs P/D pools (a decode pool at least): "
                                                       "give --prefill-instances and --decode-instances (or "
                                                       "--prefill-decode-instances)");
  if (decider != "never" && e + encode_pools == 0)
    throw InputError(config.where("encode_decider"),
                     fmt::format("{} needs an encode pool: give --encode-instances > 0", decider));
  if (e + encode_pools > 0 && decider == "never")
    spdlog::warn("{}: the encode pool of {} instance(s) gets no request with --encode-decider never; give "
                 "--encode-decider multimodal or always",
                 config.where(e > 0 ? "encode_instances" : "pools"), e + encode_pools);
}

int64_t encode_pool_instances(const RunConfig& config) {
  int64_t n = 0;
  for (const Given<PoolSpec>& pool : config.pool_specs)
    if (pool.value.role == "encode") n += pool.value.count;
  return n;
}

}  // namespace

bool pd_configured(const RunConfig& config) { return config.pd.configured() || has_role_pools(config); }

RunConfig with_pd_pools(const RunConfig& config) {
  const PdSettings& pd = config.pd;
  const std::string decider = pd.decider.value_or("never");
  if (!pd.configured() && has_role_pools(config)) {
    check_role_pools(config, decider);
    check_encode(config, true, encode_pool_instances(config));
    return config;
  }
  if (!pd.configured()) {
    check_settings_without_pools(config, decider);
    check_encode(config, false, 0);
    return config;
  }
  check_encode(config, true, 0);
  const int64_t p = pd.prefill_instances.value_or(0), d = pd.decode_instances.value_or(0),
                s = pd.prefill_decode_instances.value_or(0), e = pd.encode_instances.value_or(0);
  const std::string where = config.where(p > 0 ? "prefill_instances" : s > 0 ? "prefill_decode_instances"
                                                                             : "decode_instances");
  if (s == 0 && (p == 0 || d == 0))
    throw InputError(where, fmt::format("P/D pools of {} prefill and {} decode instance(s): both need at least one "
                                        "(or add --prefill-decode-instances)",
                                        p, d));
  if (p + d + s + e > 100000) throw InputError(where, "more than 100000 instances in all");
  if (!config.pool_specs.empty())
    throw InputError(config.where("pools"), "--pool and the P/D pools (--prefill-instances, ...) cannot be combined; give the P/D pools as --pool "
                                                "entries with role=prefill|decode|mixed instead");
  // docs/differences.md: the cluster is the P/D pools; the reference leaves
  // the instances beyond them idle.
  if (config.origins.count("num_instances") && config.pool().instances != p + d + s + e)
    throw InputError(config.where("num_instances"),
                     fmt::format("{} instance(s), but the P/D pools have {} ({} prefill + {} decode + {} "
                                 "prefill-decode{}); leave --num-instances out, or make them agree",
                                 config.pool().instances, p + d + s + e, p, d, s,
                                 e > 0 ? fmt::format(" + {} encode", e) : ""));
  if (config.origins.count("pd_prefix_threshold") && decider != "prefix-threshold")
    spdlog::warn("{} has no effect with --pd-decider {}", config.where("pd_prefix_threshold"), decider);
  RunConfig out = config;
  // Each role's pool, read as a --pool text would be.
  auto add = [&](const std::string& text) {
    out.pool_specs.push_back({config::read_pool_text(text, where), text});
  };
  if (p > 0)
    add(fmt::format("name={} count={} role=prefill", kPrefill, p) + pool_key("tp", pd.prefill_tp) +
        pool_key("hardware", pd.prefill_hardware) + pool_key("latency_model", pd.prefill_latency_model) +
        pool_key("max_model_len", pd.prefill_max_model_len));
  if (d > 0)
    add(fmt::format("name={} count={} role=decode", kDecode, d) + pool_key("tp", pd.decode_tp) +
        pool_key("hardware", pd.decode_hardware) + pool_key("latency_model", pd.decode_latency_model) +
        pool_key("max_model_len", pd.decode_max_model_len));
  if (s > 0) add(fmt::format("name={} count={} role=mixed", kShared, s));
  // HEAD's encode pool has the run's deployment, and its instances follow the P/D pools'.
  if (e > 0) add(fmt::format("name={} count={} role=encode", kEncode, e));
  out.pool().instances = p + d + s + e;
  return out;
}

namespace {

// The encode pool's decider (docs/epd.md), with its --plugin-config keys.
std::shared_ptr<EncodeDecider> make_encode_decider(const ResolvedRun& r, RunContext& ctx) {
  const ConfigTable cfg = r.overrides.config_for(r.encode_decider, ConfigTable{});
  std::shared_ptr<EncodeDecider> decider = ctx.env.registries->encode.create(r.encode_decider, CreateArgs{&cfg, r.seed});
  r.overrides.warn_unread(r.encode_decider, cfg);
  return decider;
}

}  // namespace

void setup_pd(const RunConfig& config, const std::vector<ResolvedPool>& pools, const ResolvedRun& r, RunContext& ctx,
              ClusterConfig& cc, ClusterPolicies& policies) {
  const PdSettings& pd = config.pd;
  if (!pd_configured(config)) return;
  PdConfig& out = cc.pd;
  const ResolvedPool* prefill = nullptr;
  std::vector<uint8_t> pool_roles;
  for (const ResolvedPool& pool : pools) {
    const uint8_t role = pool.role == "prefill"  ? kPdPrefill
                         : pool.role == "decode" ? kPdDecode
                         : pool.role == "encode" ? kPdEncode
                                                 : kPdPrefill | kPdDecode;
    if (prefill == nullptr && (role & kPdPrefill)) prefill = &pool;
    pool_roles.push_back(role);
  }
  // Every instance slot's, the reserve slots of add events and the
  // autoscaler included; each role's pools scale on their own.
  for (const int32_t p : cc.pool_of) out.roles.push_back(pool_roles[static_cast<size_t>(p)]);
  for (size_t p = 0; p < cc.fleet.pools.size() && p < pool_roles.size(); ++p) cc.fleet.pools[p].pd_role = pool_roles[p];
  parse_pd_decider(pd.decider.value_or("never"), out.decider);
  if (std::find(pool_roles.begin(), pool_roles.end(), kPdEncode) != pool_roles.end())
    out.encode_decider = make_encode_decider(r, ctx);
  out.prefix_threshold = pd.prefix_threshold.value_or(16);
  out.bytes_per_us = pd.transfer_bandwidth.value_or(25.0) * 1000;
  out.base_latency_us = pd.transfer_base_latency.value_or(0.05) * 1000;
  out.contention = pd.transfer_contention.value_or(false);
  // spec head §5.3: the KV on the wire is the prefill instances' (their TP).
  const ResolvedRun& pr = prefill->run;
  if (!pr.arch)
    throw InputError(config.where(pd.configured() ? "prefill_instances" : "pools"),
                     fmt::format("P/D needs the architecture of '{}' for the KV bytes on the wire, and blis has none; "
                                 "give --model-config-folder (a HuggingFace config.json)",
                                 pr.config.pool().model.name.value_or("?")));
  const ModelArch& a = *pr.arch;
  out.kv_bytes_per_token = pd_kv_bytes_per_token(a.num_layers, a.hidden_size, a.num_heads, a.num_kv_heads,
                                                 a.bytes_per_param, *pr.config.pool().model.tp);
  // prefix-threshold asks the decode instance's cache (spec head §5.2).
  if (out.decider == PdDecider::PrefixThreshold) cc.cache_query = true;
  if (pd.prefill_routing_scorers && !pd.prefill_routing_scorers->empty())
    policies.prefill_router = pool_router(*pd.prefill_routing_scorers, config.where("prefill_routing_scorers"), r, ctx,
                                          cc.cache_query);
  if (pd.decode_routing_scorers && !pd.decode_routing_scorers->empty())
    policies.decode_router =
        pool_router(*pd.decode_routing_scorers, config.where("decode_routing_scorers"), r, ctx, cc.cache_query);
}

}  // namespace blis
