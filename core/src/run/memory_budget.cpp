#include "run/memory_budget.hpp"

#include "engine/kv_cache.hpp"
#include "util/arith.hpp"
#include "util/text.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>

namespace blis {

namespace {

// What the metrics keep of each request at least (its record and latency
// samples); measured runs keep more, so the estimate only refuses runs that
// certainly cannot fit.
constexpr int64_t kBytesPerRequest = 200;
constexpr int64_t kBytesPerInstance = 16 * 1024;  // queues, batch, counters

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > std::numeric_limits<int64_t>::max() / b) return std::numeric_limits<int64_t>::max();
  return a * b;
}

int64_t saturating_add(int64_t a, int64_t b) {
  if (a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
  return a + b;
}

// The first number in `path` (a cgroup limit file), or nullopt ("max", absent).
std::optional<int64_t> read_limit(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word)) return std::nullopt;
  int64_t v = 0;
  auto r = std::from_chars(word.data(), word.data() + word.size(), v);
  if (r.ec != std::errc() || v <= 0) return std::nullopt;
  return v;
}

}  // namespace

int64_t MemoryEstimate::total() const { return saturating_add(kv_bytes, request_bytes); }

MemoryEstimate estimate_memory(const ResolvedRun& r) {
  MemoryEstimate m;
  const int64_t default_blocks = r.config.pool().engine.total_kv_blocks.value_or(0);
  for (const PoolSettings& p : r.config.pools) {
    const int64_t n = p.instances;
    const int64_t blocks = p.engine.total_kv_blocks.value_or(default_blocks);
    m.instances = saturating_add(m.instances, n);
    m.kv_bytes = saturating_add(m.kv_bytes, saturating_mul(n, KVCache::footprint_bytes(blocks) + kBytesPerInstance));
  }
  m.requests = r.request_cap;
  m.request_bytes = saturating_mul(m.requests, kBytesPerRequest);
  return m;
}

std::string format_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1099511627776.0) return fmt::format("{:.1f} TiB", b / 1099511627776.0);
  if (b >= 1073741824.0) return fmt::format("{:.1f} GiB", b / 1073741824.0);
  if (b >= 1048576.0) return fmt::format("{:.1f} MiB", b / 1048576.0);
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

int64_t memory_available() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  int64_t limit = pages > 0 && page > 0 ? saturating_mul(pages, page) : std::numeric_limits<int64_t>::max();
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"})
    if (auto v = read_limit(f)) limit = std::min(limit, *v);
  for (int res : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit rl{};
    if (getrlimit(res, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      limit = std::min<int64_t>(limit, static_cast<int64_t>(std::min<rlim_t>(rl.rlim_cur, INT64_MAX)));
  }
  return limit;
}

void check_memory(const ResolvedRun& r) {
  const auto& given = r.config.memory_limit;
  int64_t limit = 0;
  std::string what_limit;
  if (given) {
    limit = given->value;
    what_limit = "the --memory-limit";
  } else {
    limit = memory_available();
    what_limit = "the memory this machine lets blis use; --memory-limit sets another budget";
  }
  const MemoryEstimate m = estimate_memory(r);
  if (m.total() <= limit) return;
  const bool kv_dominates = m.kv_bytes >= m.request_bytes;
  const int64_t blocks = r.config.pool().engine.total_kv_blocks.value_or(0);
  throw InputError(
      kv_dominates ? r.config.where("num_instances") : r.config.where("num_requests"),
      fmt::format("the run needs about {} of memory ({} instances with {} KV blocks each: {}; {} requests: {}), "
                  "more than {} ({}); {}",
                  format_bytes(m.total()), m.instances, blocks, format_bytes(m.kv_bytes), m.requests,
                  format_bytes(m.request_bytes), format_bytes(limit), what_limit,
                  kv_dominates ? "use fewer instances or fewer --total-kv-blocks"
                               : "use fewer --num-requests, or a --horizon"));
}

}  // namespace blis
