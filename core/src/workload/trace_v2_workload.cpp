// `blis replay`'s workload source (trace_v2.hpp): a TraceV2's rows as
// requests, in injection-time order (rows sent at the same time keep the
// file's order).
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "blis/errors.hpp"
#include "blis/go_rand.hpp"
#include "blis/workload.hpp"
#include "workload/content.hpp"
#include "workload/slo_class.hpp"
#include "workload/trace_v2.hpp"

namespace blis::workload {

namespace {

class TraceV2Workload final : public WorkloadSource {
 public:
  TraceV2Workload(std::shared_ptr<const TraceV2> trace, int32_t block_size, int64_t seed)
      : trace_(std::move(trace)), block_size_(block_size), rng_(seed) {
    const auto& recs = trace_->records;
    order_.resize(recs.size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return injection_time(recs[a]) < injection_time(recs[b]); });
    // Every group's prefix is drawn before any request, in the file's order,
    // at the length of the group's first row that has one.
    for (const TraceRecord& r : recs) {
      if (r.prefix_group.empty() || r.prefix_length <= 0 || prefixes_.count(r.prefix_group)) continue;
      if (r.prefix_length > kMaxRequestTokens) fail(r, "prefix_length is larger than a request may be");
      auto it = prefixes_.emplace(r.prefix_group, SharedPrefix(block_size_)).first;
      it->second.extend(rng_, r.prefix_length);
    }
    // Every row's content is drawn in the file's order (HEAD draws them all
    // before the run); the requests then come in injection order.
    contents_.resize(recs.size());
    for (size_t i = 0; i < recs.size(); ++i) draw(recs[i], contents_[i]);
    // Each session's rows, the rounds of one user (HEAD's session metrics
    // group a replay's requests by session_id), numbered in the file's order.
    std::unordered_map<std::string, int32_t> users;
    users_.reserve(recs.size());
    for (const TraceRecord& r : recs)
      users_.push_back(r.session_id.empty() ? -1
                                             : users.emplace(r.session_id, static_cast<int32_t>(users.size())).first->second);
  }

  bool next(WorkloadRequest& out) override {
    if (next_ >= order_.size()) return false;
    const size_t i = order_[next_++];
    const TraceRecord& r = trace_->records[i];
    Content& c = contents_[i];
    out.id = static_cast<uint64_t>(r.request_id);
    out.arrival_us = injection_time(r);
    out.input_tokens = c.input;
    out.output_tokens = static_cast<int32_t>(r.output_tokens);
    out.max_output_tokens = static_cast<int32_t>(r.output_tokens);
    out.slo_class = c.slo;
    out.deadline_us = r.deadline_us;
    out.slo_target_us = static_cast<int32_t>(r.slo_target_us);  // checked when the trace was read
    out.user = users_[i];
    out.round = static_cast<int32_t>(r.round_index);
    out.tenant_id = r.tenant_id.empty() ? Label() : Label(r.tenant_id);
    out.model = r.model.empty() ? Label() : Label(r.model);
    out.adapter = r.adapter.empty() ? Label() : Label(r.adapter);
    out.block_hashes = std::move(c.hashes);
    out.shareable_blocks = WorkloadRequest::kAllShareable;
    out.own_content = 0;
    out.image_tokens = static_cast<int32_t>(r.image_tokens);  // each <= input_tokens, checked when read
    out.audio_tokens = static_cast<int32_t>(r.audio_tokens);
    out.video_tokens = static_cast<int32_t>(r.video_tokens);
    return true;
  }

 private:
  struct Content {
    int32_t input = 0;
    int32_t slo = 0;
    std::vector<uint64_t> hashes;
  };

  [[noreturn]] void fail(const TraceRecord& r, const std::string& what) const {
    throw InputError(std::to_string(r.line), what);
  }

  void draw(const TraceRecord& r, Content& c) {
    const std::string where = "row of request_id " + std::to_string(r.request_id);
    if (r.request_id < 0) throw InputError(where, "request_id must be >= 0 to replay");
    // HEAD's effective input: the server-reported count when the row has no group.
    const int64_t own = r.server_input_tokens > 0 && r.prefix_group.empty() ? r.server_input_tokens : r.input_tokens;
    int64_t prefix = 0;
    const SharedPrefix* shared = nullptr;
    if (!r.prefix_group.empty()) {
      if (auto it = prefixes_.find(r.prefix_group); it != prefixes_.end()) {
        shared = &it->second;
        prefix = shared->size();
      }
    }
    const int64_t input = prefix + own;
    if (input < 1 || input > kMaxRequestTokens)
      throw InputError(where, "its input (" + std::to_string(input) + " tokens with the group's prefix) must be "
                              "between 1 and " + std::to_string(kMaxRequestTokens));
    if (r.output_tokens > kMaxRequestTokens)
      throw InputError(where, "output_tokens is larger than a request may be");
    if (r.slo_target_us > INT32_MAX)  // a request holds it in 32 bits
      throw InputError(where, "slo_target_us must be at most 2147483647 µs (35 minutes)");
    const auto slo = slo_class_from_name(r.slo_class);
    if (!slo)
      throw InputError(where, "slo_class: unknown SLO class '" + r.slo_class + "' (expected " +
                                  std::string(kSloClassChoices) + ")");
    c.input = static_cast<int32_t>(input);
    c.slo = *slo;
    c.hashes.reserve(static_cast<size_t>((input + r.output_tokens) / block_size_));
    ContentHasher hasher(c.hashes, block_size_);
    if (shared) shared->begin(c.hashes, hasher, prefix);
    hasher.draw(rng_, own);
    hasher.draw(rng_, r.output_tokens);
  }

  std::shared_ptr<const TraceV2> trace_;
  int32_t block_size_;
  GoRand rng_;
  std::unordered_map<std::string, SharedPrefix> prefixes_;
  std::vector<size_t> order_;
  std::vector<Content> contents_;
  std::vector<int32_t> users_;  // per row, its session's number (-1: none)
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<WorkloadSource> make_trace_v2_workload(std::shared_ptr<const TraceV2> trace, int32_t block_size,
                                                       int64_t seed) {
  if (block_size <= 0) throw InputError("block_size", "must be > 0, got " + std::to_string(block_size));
  return std::make_unique<TraceV2Workload>(std::move(trace), block_size, seed);
}

}  // namespace blis::workload
