// The host side of the C ABI: a blis_host whose config calls read a
// ConfigTable, and a blis_rng over a private GoRand stream.
#pragma once

#include <blis/config_table.hpp>
#include <blis/go_rand.hpp>
#include <blis/plugin.h>

#include <memory>
#include <string>

namespace blis {

// The most the host reads of a plugin's string that comes without a size
// (names, summaries, log lines): a missing NUL costs a cut, not a crash.
constexpr size_t kMaxPluginText = 4096;

// What a plugin's config calls read during create(): the table, and the
// first misuse of a call the host saw (a NULL `out`), which the loader turns
// into a failed create() once the plugin's code has returned.
struct HostConfig {
  const ConfigTable* table = nullptr;
  std::string misuse;  // empty when every call was well-formed
};

inline const blis_config* as_blis_config(HostConfig& c) {
  return reinterpret_cast<const blis_config*>(&c);
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
