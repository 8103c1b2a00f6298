// Exact trace replay: one request per CSV row, at exactly the row's time and
// with exactly its lengths. Token content is synthesised from a seeded stream
// (derive_seed(seed, "trace")); rows of one prefix group share their leading
// prefix_tokens ids. The file is read one row at a time.
//
// Format: header `arrival_time_us,input_tokens,output_tokens` followed, in any
// order, by any of `prefix_group`, `prefix_tokens`, `slo_class`, `tenant_id`.
// input_tokens counts the whole prompt, shared prefix included.
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unordered_map>

#include "blis/errors.hpp"
#include "blis/go_rand.hpp"
#include "blis/workload.hpp"
#include "workload/content.hpp"
#include "workload/csv_line.hpp"
#include "workload/slo_class.hpp"
#include "util/files.hpp"

namespace blis {

namespace {

using workload::ContentHasher;
using workload::SharedPrefix;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parse_int(std::string_view text, int64_t* out) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

enum Column {
  kArrival,
  kInput,
  kOutput,
  kPrefixGroup,
  kPrefixTokens,
  kSloClass,
  kTenantId,
  kNumColumns
};

constexpr const char* kColumnNames[kNumColumns] = {
    "arrival_time_us", "input_tokens", "output_tokens", "prefix_group",
    "prefix_tokens",   "slo_class",    "tenant_id"};

class TraceWorkload final : public WorkloadSource {
 public:
  TraceWorkload(const std::string& path, int64_t horizon, int64_t max_requests, int32_t block_size,
                int64_t seed)
      : path_(path),
        in_(path),
        horizon_(horizon),
        max_requests_(max_requests),
        block_size_(block_size),
        rng_(derive_seed(seed, "trace")) {
    if (!in_) throw InputError(path_, "cannot open the trace file");
    if (files::is_folder(path_)) throw InputError(path_, "is a directory, not a trace file");
    read_header();
    done_ = !read_row(/*first=*/true);
  }

  bool next(WorkloadRequest& out) override {
    if (done_) return false;
    if (max_requests_ > 0 && emitted_ >= static_cast<uint64_t>(max_requests_)) return false;
    out.arrival_us = pending_.arrival_us;
    out.input_tokens = pending_.input_tokens;
    out.output_tokens = pending_.output_tokens;
    out.max_output_tokens = pending_.max_output_tokens;
    out.slo_class = pending_.slo_class;
    std::swap(out.tenant_id, pending_.tenant_id);
    out.model.clear();
    out.adapter.clear();
    std::swap(out.block_hashes, pending_.block_hashes);
    out.shareable_blocks = WorkloadRequest::kAllShareable;
    out.own_content = 0;
    out.image_tokens = out.audio_tokens = out.video_tokens = 0;
    out.id = emitted_++;
    if (max_requests_ > 0 && emitted_ >= static_cast<uint64_t>(max_requests_)) {
      done_ = true;  // do not read (or draw for) rows that will never be emitted
    } else {
      done_ = !read_row(/*first=*/false);
    }
    return true;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(path_ + ":" + std::to_string(line_no_), what);
  }

  // One line into line_; false at the end of the file.
  bool read_line() {
    switch (workload::read_csv_line(in_, line_)) {
      case workload::LineRead::kLine: return true;
      case workload::LineRead::kEnd: return false;
      case workload::LineRead::kTooLong: break;
    }
    ++line_no_;
    fail("a line longer than " + std::to_string(workload::kMaxCsvLineBytes) + " bytes; is this a CSV trace?");
  }

  // Next non-blank line; false at end of file.
  bool next_line() {
    while (read_line()) {
      ++line_no_;
      if (!line_.empty() && line_.back() == '\r') line_.pop_back();
      if (!trim(line_).empty()) return true;
    }
    return false;
  }

  void read_header() {
    if (!next_line()) throw InputError(path_, "empty trace file (no header)");
    if (!workload::split_csv_line(line_, fields_)) fail("malformed CSV header");
    column_of_.fill(-1);
    for (size_t f = 0; f < fields_.size(); ++f) {
      const std::string_view name = trim(fields_[f]);
      int found = -1;
      for (int c = 0; c < kNumColumns; ++c) {
        if (name == kColumnNames[c]) found = c;
      }
      if (found < 0) fail("unknown column '" + std::string(name) + "'");
      if (column_of_[found] >= 0) fail("duplicate column '" + std::string(name) + "'");
      if (found < kPrefixGroup && static_cast<size_t>(found) != f) {
        fail("the header must start with arrival_time_us,input_tokens,output_tokens");
      }
      column_of_[found] = static_cast<int>(f);
    }
    if (column_of_[kArrival] < 0 || column_of_[kInput] < 0 || column_of_[kOutput] < 0) {
      fail("the header must start with arrival_time_us,input_tokens,output_tokens");
    }
    if ((column_of_[kPrefixGroup] >= 0) != (column_of_[kPrefixTokens] >= 0)) {
      fail("prefix_group and prefix_tokens columns must appear together");
    }
    num_fields_ = fields_.size();
  }

  std::string_view field(Column c) const {
    return column_of_[c] < 0 ? std::string_view() : std::string_view(fields_[column_of_[c]]);
  }

  int64_t int_field(Column c, int64_t lo, int64_t hi) const {
    int64_t v = 0;
    if (!parse_int(field(c), &v)) {
      fail(std::string(kColumnNames[c]) + ": '" + std::string(field(c)) + "' is not an integer");
    }
    if (v < lo || v > hi) {
      fail(std::string(kColumnNames[c]) + ": " + std::to_string(v) + " is out of range [" +
           std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return v;
  }

  // Parses the next row into pending_, drawing its content; false at the end
  // of the file or at the first row at or beyond the horizon.
  bool read_row(bool first) {
    if (!next_line()) {
      if (first) throw InputError(path_, "the trace has no requests");
      return false;
    }
    if (!workload::split_csv_line(line_, fields_)) fail("malformed CSV row");
    if (fields_.size() != num_fields_) {
      fail("expected " + std::to_string(num_fields_) + " fields, found " +
           std::to_string(fields_.size()));
    }
    constexpr int64_t kMaxLen = kMaxRequestTokens;
    // At most ~31.7 years, as every duration setting: later times would
    // leave the simulation no room (a row at 2^63-1 was once lost silently).
    constexpr int64_t kMaxArrival = 1'000'000'000'000'000;
    const int64_t arrival = int_field(kArrival, 0, kMaxArrival);
    const int64_t input = int_field(kInput, 1, kMaxLen);
    const int64_t output = int_field(kOutput, 1, kMaxLen);
    if (arrival < last_arrival_) {
      fail("arrival_time_us " + std::to_string(arrival) + " is earlier than the previous row's " +
           std::to_string(last_arrival_) + " (rows must be sorted by arrival)");
    }
    last_arrival_ = arrival;
    const std::string group(trim(field(kPrefixGroup)));
    int64_t prefix_len = 0;
    if (column_of_[kPrefixTokens] >= 0 && !trim(field(kPrefixTokens)).empty()) {
      prefix_len = int_field(kPrefixTokens, 0, input);
    }
    if (prefix_len > 0 && group.empty()) fail("prefix_tokens > 0 needs a prefix_group");
    const std::string slo_name(trim(field(kSloClass)));
    const auto slo = workload::slo_class_from_name(slo_name);
    if (!slo) {
      fail("slo_class: unknown SLO class '" + slo_name + "' (expected " +
           workload::kSloClassChoices + ")");
    }
    if (arrival >= horizon_) return false;

    pending_.arrival_us = arrival;
    pending_.input_tokens = static_cast<int32_t>(input);
    pending_.output_tokens = static_cast<int32_t>(output);
    pending_.max_output_tokens = static_cast<int32_t>(output);
    pending_.slo_class = *slo;
    // Rows of one tenant usually come in runs: the table is asked only at a change.
    if (const std::string_view tenant = field(kTenantId); tenant_ != tenant) tenant_ = Label(tenant);
    pending_.tenant_id = tenant_;

    auto& hashes = pending_.block_hashes;
    hashes.clear();
    hashes.reserve(static_cast<size_t>((input + output) / block_size_));
    ContentHasher hasher(hashes, block_size_);
    if (prefix_len > 0) {
      // A group's prefix is drawn when first needed and grows if a later row
      // asks for more; shorter uses share the leading tokens.
      auto it = prefixes_.find(group);
      if (it == prefixes_.end()) it = prefixes_.emplace(group, SharedPrefix(block_size_)).first;
      SharedPrefix& prefix = it->second;
      if (prefix.size() < prefix_len) prefix.extend(rng_, prefix_len - prefix.size());
      prefix.begin(hashes, hasher, prefix_len);
    }
    hasher.draw(rng_, input - prefix_len);
    hasher.draw(rng_, output);
    return true;
  }

  std::string path_;
  std::ifstream in_;
  int64_t horizon_;
  int64_t max_requests_;
  int32_t block_size_;
  GoRand rng_;
  std::array<int, kNumColumns> column_of_{};
  size_t num_fields_ = 0;
  std::string line_;
  std::vector<std::string> fields_;
  int64_t line_no_ = 0;
  int64_t last_arrival_ = 0;
  std::unordered_map<std::string, SharedPrefix> prefixes_;
  WorkloadRequest pending_;
  Label tenant_;  // of the last row read
  bool done_ = false;
  uint64_t emitted_ = 0;
};

}  // namespace

std::unique_ptr<WorkloadSource> make_trace_workload(const std::string& path, int64_t horizon,
                                                    int64_t max_requests, int32_t block_size,
                                                    int64_t seed) {
  if (max_requests < 0) {
    throw InputError("num_requests", "must be >= 0, got " + std::to_string(max_requests));
  }
  if (block_size <= 0) {
    throw InputError("block_size", "must be > 0, got " + std::to_string(block_size));
  }
  return std::make_unique<TraceWorkload>(path, horizon, max_requests, block_size, seed);
}

}  // namespace blis
