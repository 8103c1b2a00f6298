#include "cluster/pd.hpp"

#include <algorithm>
#include <cmath>

namespace blis {

bool parse_pd_decider(const std::string& name, PdDecider& out) {
  if (name == "never") out = PdDecider::Never;
  else if (name == "always") out = PdDecider::Always;
  else if (name == "prefix-threshold") out = PdDecider::PrefixThreshold;
  else return false;
  return true;
}

// spec head §5.2: I = 1000, block 16, 40 blocks cached → 360 > 16 → split.
bool pd_disaggregate(PdDecider decider, int64_t threshold, int64_t input_tokens, int64_t cached_blocks,
                     int64_t block_size) {
  switch (decider) {
    case PdDecider::Never: return false;
    case PdDecider::Always: return true;
    case PdDecider::PrefixThreshold:
      if (input_tokens == 0 || cached_blocks < 0) return false;
      return input_tokens - cached_blocks * block_size > threshold;
  }
  return false;
}

double pd_kv_bytes_per_token(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads,
                             double bytes_per_param, int64_t tp) {
  const double head_dim = heads > 0 ? static_cast<double>(hidden) / static_cast<double>(heads) : 0;
  const int64_t k = kv_heads > 0 ? kv_heads : heads;
  return static_cast<double>(layers) * 2 * head_dim * static_cast<double>(k) * bytes_per_param /
         static_cast<double>(std::max<int64_t>(tp, 1));
}

KvTransferLink::KvTransferLink(double bytes_per_us, double base_us, bool contention)
    : bw_(bytes_per_us), base_(base_us), contention_(contention) {}

void KvTransferLink::settle(double t) {
  if (!active_.empty() && t > last_) {
    const double moved = (t - last_) * bw_ / static_cast<double>(active_.size());
    for (Active& a : active_) a.remaining -= moved;
  }
  last_ = std::max(last_, t);
}

// Finishes, one share change at a time, every transfer whose bytes are
// through by `now` (within a µs-millionth, so a check at the rounded-up
// time always finishes the transfer it was set for).
void KvTransferLink::finish_through(double now, std::vector<Done>& done) {
  while (!active_.empty()) {
    size_t first = 0;
    for (size_t i = 1; i < active_.size(); ++i)
      if (active_[i].remaining < active_[first].remaining) first = i;
    const double through =
        last_ + std::max(active_[first].remaining, 0.0) * static_cast<double>(active_.size()) / bw_;
    if (through > now + 1e-6) break;
    settle(through);
    const SimTime floor_at = static_cast<SimTime>(std::ceil(now - 1e-6));
    size_t keep = 0;
    for (size_t i = 0; i < active_.size(); ++i) {
      const Active& a = active_[i];
      if (i == first || a.remaining <= 1e-3) {
        const auto at = static_cast<SimTime>(std::ceil(through + base_));
        done.push_back({a.id, std::max({at, a.start + 1, floor_at})});
      } else {
        active_[keep++] = a;
      }
    }
    active_.resize(keep);
  }
  settle(now);
}

void KvTransferLink::start(uint64_t id, double bytes, SimTime now, std::vector<Done>& done) {
  if (!contention_) {
    const auto d = static_cast<SimTime>(std::ceil(base_ + bytes / bw_));
    done.push_back({id, now + std::max<SimTime>(d, 1)});
    return;
  }
  finish_through(static_cast<double>(now), done);
  active_.push_back({id, now, bytes});
  const auto n = static_cast<int64_t>(active_.size());
  peak_ = std::max(peak_, n);
  depth_sum_ += n;
  ++starts_;
}

void KvTransferLink::advance(SimTime now, std::vector<Done>& done) { finish_through(static_cast<double>(now), done); }

void KvTransferLink::cancel(uint64_t id, SimTime now, std::vector<Done>& done) {
  if (!contention_) return;
  finish_through(static_cast<double>(now), done);
  active_.erase(std::remove_if(active_.begin(), active_.end(), [&](const Active& a) { return a.id == id; }),
                active_.end());
}

SimTime KvTransferLink::next_check() const {
  if (active_.empty()) return kForever;
  double least = active_.front().remaining;
  for (const Active& a : active_) least = std::min(least, a.remaining);
  const double through = last_ + std::max(least, 0.0) * static_cast<double>(active_.size()) / bw_;
  return static_cast<SimTime>(std::ceil(through - 1e-6));
}

}  // namespace blis
