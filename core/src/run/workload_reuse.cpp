#include "run/workload_reuse.hpp"

#include <fmt/format.h>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>

namespace blis {
namespace {

// One generated workload: its requests in arrival order, and the generator
// that made them, which still answers for its clients (--trace-output).
struct Kept {
  std::once_flag once;
  std::unique_ptr<WorkloadSource> generator;
  std::vector<WorkloadRequest> requests;
};

// The kept workloads while some WorkloadReuse is open, oldest first.
struct Store {
  std::mutex mutex;
  int scopes = 0;
  std::map<std::string, std::shared_ptr<Kept>> kept;
  std::deque<std::pair<std::string, int64_t>> order;  // key, requests (at most)
  int64_t total = 0;
  std::atomic<int64_t> generated{0}, replayed{0};
};

Store& store() {
  static Store s;
  return s;
}

// A kept workload, request by request.
class Replay final : public WorkloadSource {
 public:
  explicit Replay(std::shared_ptr<const Kept> kept) : kept_(std::move(kept)) {}
  bool next(WorkloadRequest& out) override {
    if (next_ >= kept_->requests.size()) return false;
    out = kept_->requests[next_++];
    return true;
  }
  bool follow_up(const WorkloadRequest& done, int64_t t, WorkloadRequest& out) override {
    return kept_->generator->follow_up(done, t, out);
  }
  const SourceInfo* source_info(int32_t source) const override {
    return kept_->generator->source_info(source);
  }
  bool has_tenant(const std::string& tenant) const override { return kept_->generator->has_tenant(tenant); }
  std::string session_name(const WorkloadRequest& r) const override {
    return kept_->generator->session_name(r);
  }

 private:
  std::shared_ptr<const Kept> kept_;
  size_t next_ = 0;
};

// The kept workload of `key`, made room for (the oldest go first).
std::shared_ptr<Kept> slot(const std::string& key, int64_t requests) {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.scopes == 0) return nullptr;
  if (auto it = s.kept.find(key); it != s.kept.end()) return it->second;
  while (!s.order.empty() && (s.total + requests > kReuseTotalRequests || s.order.size() >= kReuseKept)) {
    s.total -= s.order.front().second;
    s.kept.erase(s.order.front().first);
    s.order.pop_front();
  }
  auto kept = std::make_shared<Kept>();
  s.kept.emplace(key, kept);
  s.order.emplace_back(key, requests);
  s.total += requests;
  return kept;
}

}  // namespace

WorkloadReuse::WorkloadReuse() {
  const std::lock_guard<std::mutex> lock(store().mutex);
  ++store().scopes;
}

WorkloadReuse::~WorkloadReuse() {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (--s.scopes > 0) return;
  s.kept.clear();
  s.order.clear();
  s.total = 0;
}

std::string workload_reuse_key(const ResolvedRun& r, const std::vector<ScenarioEvent>& events,
                               bool has_code) {
  if (!r.distribution || !r.spec || r.replay || !events.empty() || has_code) return "";
  const DistributionWorkload& d = *r.distribution;
  if (d.concurrency > 0 || d.num_requests <= 0 || d.num_requests > kReuseMaxRequests ||
      r.request_cap != d.num_requests)
    return "";
  // Everything synthesize_distribution_spec and make_spec_workload read,
  // each double in its shortest exact form. A field added to
  // DistributionWorkload must be added here (the size check says so).
  static_assert(sizeof(DistributionWorkload) == 8 * 13 + sizeof(ArrivalSpec),
                "DistributionWorkload changed: key its new fields in workload_reuse_key");
  const std::optional<int64_t>& timeout = r.given.workload.timeout_s;
  return fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|seed {}|timeout {}|horizon {}|block {}", d.rate,
      d.concurrency, d.think_time_us, d.num_requests, d.arrival.process,
      d.arrival.cv ? fmt::format("{}", *d.arrival.cv) : "-", d.prefix_tokens, d.prompt_mean, d.prompt_stdev,
      d.prompt_min, d.prompt_max, d.output_mean, d.output_stdev, d.output_min, d.output_max, r.request_cap,
      r.spec->seed, r.seed, timeout ? fmt::format("{}", *timeout) : "-", r.horizon,
      r.config.pool().engine.block_size);
}

std::unique_ptr<WorkloadSource> reusable_workload(const ResolvedRun& r,
                                                  const std::vector<ScenarioEvent>& events, bool has_code) {
  const std::string key = workload_reuse_key(r, events, has_code);
  std::shared_ptr<Kept> kept = key.empty() ? nullptr : slot(key, r.request_cap);
  if (!kept) return make_workload(r, events);
  // The first run of the key generates every request (the others wait for
  // it); a failure leaves the slot empty for the next one to try.
  bool made = false;
  std::call_once(kept->once, [&] {
    kept->generator = make_workload(r, events);
    WorkloadRequest w;
    kept->requests.reserve(static_cast<size_t>(r.request_cap));
    while (kept->generator->next(w)) kept->requests.push_back(w);
    made = true;
  });
  (made ? store().generated : store().replayed)++;
  return std::make_unique<Replay>(kept);
}

WorkloadReuseCounts workload_reuse_counts() { return {store().generated.load(), store().replayed.load()}; }

}  // namespace blis
