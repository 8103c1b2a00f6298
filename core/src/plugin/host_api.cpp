#include "plugin/host_api.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <variant>

namespace blis {
namespace {

HostConfig* host_config(const blis_config* cfg) {
  // The host made `cfg` from a mutable HostConfig (as_blis_config).
  return reinterpret_cast<HostConfig*>(const_cast<blis_config*>(cfg));
}

const ConfigValue* lookup(const blis_config* cfg, const char* key) {
  if (cfg == nullptr || key == nullptr) return nullptr;
  return host_config(cfg)->table->find(key);
}

// A NULL `out` is a bug in the plugin: the call fails instead of crashing the
// host, and create() is failed with this text afterwards.
bool null_out(const blis_config* cfg, const char* call, const char* key, const void* out) {
  if (out != nullptr) return false;
  if (cfg != nullptr) {
    HostConfig* c = host_config(cfg);
    if (c->misuse.empty())
      c->misuse = fmt::format("passed a NULL out pointer to host->{}(\"{}\")", call,
                              key != nullptr ? key : "");
  }
  return true;
}

int32_t config_f64(const blis_config* cfg, const char* key, double* out) {
  if (null_out(cfg, "config_f64", key, out)) return BLIS_CONFIG_WRONG_TYPE;
  const ConfigValue* v = lookup(cfg, key);
  if (v == nullptr) return BLIS_CONFIG_MISSING;
  if (auto d = std::get_if<double>(v)) *out = *d;
  else if (auto i = std::get_if<int64_t>(v)) *out = static_cast<double>(*i);
  else return BLIS_CONFIG_WRONG_TYPE;
  return BLIS_CONFIG_OK;
}

int32_t config_i64(const blis_config* cfg, const char* key, int64_t* out) {
  if (null_out(cfg, "config_i64", key, out)) return BLIS_CONFIG_WRONG_TYPE;
  const ConfigValue* v = lookup(cfg, key);
  if (v == nullptr) return BLIS_CONFIG_MISSING;
  auto i = std::get_if<int64_t>(v);
  if (i == nullptr) return BLIS_CONFIG_WRONG_TYPE;
  *out = *i;
  return BLIS_CONFIG_OK;
}

int32_t config_bool(const blis_config* cfg, const char* key, int32_t* out) {
  if (null_out(cfg, "config_bool", key, out)) return BLIS_CONFIG_WRONG_TYPE;
  const ConfigValue* v = lookup(cfg, key);
  if (v == nullptr) return BLIS_CONFIG_MISSING;
  auto b = std::get_if<bool>(v);
  if (b == nullptr) return BLIS_CONFIG_WRONG_TYPE;
  *out = *b ? 1 : 0;
  return BLIS_CONFIG_OK;
}

int32_t config_str(const blis_config* cfg, const char* key, const char** out) {
  if (null_out(cfg, "config_str", key, out)) return BLIS_CONFIG_WRONG_TYPE;
  const ConfigValue* v = lookup(cfg, key);
  if (v == nullptr) return BLIS_CONFIG_MISSING;
  auto s = std::get_if<std::string>(v);
  if (s == nullptr) return BLIS_CONFIG_WRONG_TYPE;
  *out = s->c_str();
  return BLIS_CONFIG_OK;
}

int32_t config_f64_array(const blis_config* cfg, const char* key, const double** out,
                         size_t* count) {
  if (null_out(cfg, "config_f64_array", key, out) ||
      null_out(cfg, "config_f64_array", key, count))
    return BLIS_CONFIG_WRONG_TYPE;
  const ConfigValue* v = lookup(cfg, key);
  if (v == nullptr) return BLIS_CONFIG_MISSING;
  auto a = std::get_if<std::vector<double>>(v);
  if (a == nullptr) return BLIS_CONFIG_WRONG_TYPE;
  *out = a->data();
  *count = a->size();
  return BLIS_CONFIG_OK;
}

void log_message(void* ctx, int32_t level, const char* message) {
  const auto* c = static_cast<const PluginLogContext*>(ctx);
  const std::string& name = c != nullptr ? c->name : std::string();
  // A plugin's text may lack its NUL: read at most kMaxPluginText bytes.
  const std::string msg =
      message != nullptr ? std::string(message, ::strnlen(message, kMaxPluginText)) : std::string();
  switch (level) {
    case BLIS_LOG_DEBUG: spdlog::debug("[{}] {}", name, msg); break;
    case BLIS_LOG_INFO: spdlog::info("[{}] {}", name, msg); break;
    case BLIS_LOG_WARN: spdlog::warn("[{}] {}", name, msg); break;
    default: spdlog::error("[{}] {}", name, msg); break;
  }
}

uint64_t rng_u64(void* ctx) { return static_cast<GoRand*>(ctx)->uint64(); }
double rng_f64(void* ctx) { return static_cast<GoRand*>(ctx)->float64(); }
int64_t rng_below(void* ctx, int64_t n) {
  return n <= 0 ? 0 : static_cast<GoRand*>(ctx)->int63n(n);
}

}  // namespace

blis_host make_host(PluginLogContext* log_ctx) {
  blis_host h{};
  h.struct_size = sizeof(blis_host);
  h.abi_minor = BLIS_ABI_MINOR;
  h.ctx = log_ctx;
  h.config_f64 = &config_f64;
  h.config_i64 = &config_i64;
  h.config_bool = &config_bool;
  h.config_str = &config_str;
  h.config_f64_array = &config_f64_array;
  h.log = &log_message;
  return h;
}

PluginRng::PluginRng(int64_t seed, const std::string& stream_name)
    : rand_(derive_seed(seed, stream_name)) {
  view_.ctx = &rand_;
  view_.next_u64 = &rng_u64;
  view_.next_f64 = &rng_f64;
  view_.next_below = &rng_below;
}

}  // namespace blis
