// The host side of the C ABI: a blis_host whose config calls read a
// ConfigTable, and a blis_rng over a private GoRand stream.
#pragma once

#include <blis/config_table.hpp>
#include <blis/go_rand.hpp>
#include <blis/plugin.h>

#include <memory>
#include <string>

namespace blis {

inline const blis_config* as_blis_config(const ConfigTable& t) {
  return reinterpret_cast<const blis_config*>(&t);
}

// The blis_host handed to every create(). Its log ctx is a heap-allocated
// PluginLogContext owned by the object adapter (so the name outlives calls).
struct PluginLogContext {
  std::string name;
};
blis_host make_host(PluginLogContext* log_ctx);

// A seeded stream for one plugin object; the blis_rng view stays valid while
// this object lives.
class PluginRng {
 public:
  PluginRng(int64_t seed, const std::string& stream_name);
  const blis_rng* view() const { return &view_; }

 private:
  GoRand rand_;
  blis_rng view_;
};

}  // namespace blis
