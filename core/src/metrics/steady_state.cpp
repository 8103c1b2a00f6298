#include "metrics/steady_state.hpp"

#include "util/json_format.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace blis {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Steady: return "steady";
    case Verdict::NotSteady: return "not steady";
    case Verdict::Saturated: return "saturated";
    case Verdict::TooShort: return "too short";
  }
  return "";
}

void SteadyStateReport::json_members(const ReportScope&, JsonPlace place, std::string& out) const {
  if (place != JsonPlace::Lead) return;
  out += fmt::format(",\n  \"steady_state\": {{\n    \"verdict\": {},\n    \"offered_rps\": {},\n"
                     "    \"started_rps\": {},\n    \"ttft_middle_third_ms\": {},\n"
                     "    \"ttft_last_third_ms\": {}\n  }}",
                     go_string(verdict_name(s_->verdict)), go_float(s_->offered_rps), go_float(s_->started_rps),
                     go_float(s_->ttft_middle_ms), go_float(s_->ttft_last_ms));
}

// The verdict judges the last third of the arrival window only: say so, or a
// steady end reads as a steady run (issue 32).
void SteadyStateReport::table_lines(const ReportScope&, TablePlace place, std::string& out) const {
  if (place != TablePlace::Verdict) return;
  out += fmt::format("verdict      {}{}\n", verdict_name(s_->verdict),
                     s_->verdict == Verdict::TooShort ? ""
                                                      : " (of the last third of the arrivals; the percentiles "
                                                        "below cover the whole run)");
}

std::string SteadyState::advice() const {
  switch (verdict) {
    case Verdict::Saturated:
      if (ttft_last_ms <= ttft_middle_ms)  // timeouts or drops cut the wait short
        return fmt::format(
            "the run is saturated: over its last third it started {:.1f} req/s of the {:.1f} req/s that "
            "arrived. TTFT did not grow ({:.0f} ms in the middle third, {:.0f} ms in the last) only because "
            "requests that waited too long timed out or were dropped; its percentiles describe a queue that "
            "keeps growing, not a steady state. Give more instances (or a lower rate)",
            started_rps, offered_rps, ttft_middle_ms, ttft_last_ms);
      return fmt::format(
          "the run is saturated: over its last third it started {:.1f} req/s of the {:.1f} req/s that "
          "arrived, and TTFT grew from {:.0f} ms to {:.0f} ms; its percentiles describe a queue that keeps "
          "growing, not a steady state. Give more instances (or a lower rate)",
          started_rps, offered_rps, ttft_middle_ms, ttft_last_ms);
    case Verdict::NotSteady:
      return fmt::format(
          "the run is not in steady state: the TTFT of its last third of arrivals ({:.0f} ms) is well above "
          "that of its middle third ({:.0f} ms), so queues were still growing when arrivals stopped. Run "
          "longer (more --num-requests) to see where it settles, or give more instances",
          ttft_last_ms, ttft_middle_ms);
    case Verdict::TooShort:
      return "the run is too short to tell whether it reached a steady state (under 100 completions, or "
             "arrivals lasting less than three times a request's decode time); run longer (more "
             "--num-requests) before trusting its percentiles";
    case Verdict::Steady: return "";
  }
  return "";
}

SteadyStateProbe::Bucket& SteadyStateProbe::at(SimTime t) {
  size_t i = static_cast<size_t>(std::max<SimTime>(t, 0) / width_);
  while (i >= kMaxBuckets) {
    // Twice as wide: merge neighbours.
    std::vector<Bucket> merged((buckets_.size() + 1) / 2);
    for (size_t k = 0; k < buckets_.size(); ++k) {
      Bucket& m = merged[k / 2];
      m.arrivals += buckets_[k].arrivals;
      m.starts += buckets_[k].starts;
      m.ttft_count += buckets_[k].ttft_count;
      m.ttft_sum += buckets_[k].ttft_sum;
    }
    buckets_ = std::move(merged);
    width_ *= 2;
    i = static_cast<size_t>(std::max<SimTime>(t, 0) / width_);
  }
  if (i >= buckets_.size()) buckets_.resize(i + 1);
  return buckets_[i];
}

SteadyState SteadyStateProbe::judge() const {
  SteadyState s;
  // The arrival window in whole buckets; thirds of it.
  const size_t n = static_cast<size_t>(last_arrival_ / width_) + 1;
  if (completions_ < 100 || n < 3 || buckets_.empty()) return s;
  const size_t a = n / 3, b = 2 * n / 3;
  auto sum = [&](size_t from, size_t to, auto field) {
    double x = 0;
    for (size_t i = from; i < to && i < buckets_.size(); ++i) x += static_cast<double>(field(buckets_[i]));
    return x;
  };
  // The last third ends with the last arrival, inside its bucket.
  const double seconds =
      static_cast<double>(last_arrival_ + 1 - static_cast<SimTime>(b) * width_) / 1e6;
  s.offered_rps = sum(b, n, [](const Bucket& k) { return k.arrivals; }) / seconds;
  s.started_rps = sum(b, n, [](const Bucket& k) { return k.starts; }) / seconds;
  auto mean_ttft = [&](size_t from, size_t to) {
    const double c = sum(from, to, [](const Bucket& k) { return k.ttft_count; });
    return c > 0 ? sum(from, to, [](const Bucket& k) { return k.ttft_sum; }) / c / 1e3 : 0.0;
  };
  s.ttft_middle_ms = mean_ttft(a, b);
  s.ttft_last_ms = mean_ttft(b, n);
  // Requests left waiting to start is saturation however short the run.
  if (s.offered_rps > 0 && s.started_rps < 0.9 * s.offered_rps) {
    s.verdict = Verdict::Saturated;
    return s;
  }
  const double mean_decode = decode_count_ > 0 ? decode_sum_ / static_cast<double>(decode_count_) : 0;
  if (static_cast<double>(last_arrival_) < 3 * mean_decode) return s;  // too short
  s.verdict = s.ttft_last_ms > 1.25 * s.ttft_middle_ms + 20 ? Verdict::NotSteady : Verdict::Steady;
  return s;
}

}  // namespace blis
