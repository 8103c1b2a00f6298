#include "cluster/router.hpp"

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace blis {

RoutingPolicy parse_routing_policy(const std::string& name) {
  if (name.empty() || name == "round-robin") return RoutingPolicy::RoundRobin;
  if (name == "least-loaded") return RoutingPolicy::LeastLoaded;
  if (name == "always-busiest") return RoutingPolicy::AlwaysBusiest;
  if (name == "weighted") return RoutingPolicy::Weighted;
  throw InputError("--routing-policy",
                   fmt::format("unknown routing policy '{}'; valid: always-busiest, least-loaded, "
                               "round-robin, weighted",
                               name));
}

Router::Router(RoutingPolicy policy, std::vector<WeightedScorer> scorers, int64_t seed)
    : policy_(policy), scorers_(std::move(scorers)), rng_(derive_seed(seed, "router")) {
  // Only ratios matter: weights are normalised once, summed in list order.
  double total = 0;
  for (const auto& s : scorers_) total += s.weight;
  for (auto& s : scorers_) s.weight = s.weight / total;
}

uint32_t route_reads(uint32_t needs) {
  if ((needs & BLIS_NEED_DECLARED_READS) == 0) return kReadsAll;
  return ((needs & BLIS_NEED_SNAPSHOTS) != 0 ? kReadsSnapshots : kReadsNothing) |
         ((needs & BLIS_NEED_REQUEST) != 0 ? kReadsRequest : kReadsNothing);
}

uint32_t Router::reads() const {
  switch (policy_) {
    case RoutingPolicy::RoundRobin: return kReadsNothing;
    case RoutingPolicy::LeastLoaded:
    case RoutingPolicy::AlwaysBusiest: return kReadsSnapshots;
    case RoutingPolicy::Weighted: break;
  }
  uint32_t reads = kReadsNothing;
  for (const WeightedScorer& s : scorers_) reads |= s.reads;
  return reads;
}

int32_t Router::pick_tied(const std::vector<int32_t>& tied) {
  // The stream is drawn from only when there is a real tie (spec cluster §3.4).
  return tied.size() == 1 ? tied[0] : tied[static_cast<size_t>(rng_.intn(static_cast<int64_t>(tied.size())))];
}

int32_t Router::route(const blis_route_input& in, std::vector<double>& scores) {
  const int64_t n = in.count;
  scores.clear();
  if (n <= 0) throw RuntimeError("internal error: routing with no instances");
  auto snap = [&](int64_t i) -> const blis_instance_snapshot& {
    return *reinterpret_cast<const blis_instance_snapshot*>(
        reinterpret_cast<const char*>(in.instances) + static_cast<size_t>(i) * in.snapshot_size);
  };
  switch (policy_) {
    case RoutingPolicy::RoundRobin:
      return static_cast<int32_t>(round_robin_++ % static_cast<uint64_t>(n));
    case RoutingPolicy::LeastLoaded: {
      int64_t lo = std::numeric_limits<int64_t>::max();
      for (int64_t i = 0; i < n; ++i) lo = std::min(lo, effective_load(snap(i)));
      tied_.clear();
      for (int64_t i = 0; i < n; ++i)
        if (effective_load(snap(i)) == lo) tied_.push_back(static_cast<int32_t>(i));
      return pick_tied(tied_);
    }
    case RoutingPolicy::AlwaysBusiest: {
      int32_t best = 0;
      for (int64_t i = 1; i < n; ++i)
        if (effective_load(snap(i)) > effective_load(snap(best))) best = static_cast<int32_t>(i);
      return best;
    }
    case RoutingPolicy::Weighted: break;
  }
  // spec cluster §3.6: clamp each scorer's value into [0, 1], weight, sum.
  scores.assign(static_cast<size_t>(n), 0.0);
  dim_.resize(static_cast<size_t>(n));
  for (auto& s : scorers_) {
    std::fill(dim_.begin(), dim_.end(), 0.0);
    s.scorer->score(in, dim_.data());
    for (int64_t i = 0; i < n; ++i) {
      double v = dim_[static_cast<size_t>(i)];
      if (std::isnan(v))
        throw RuntimeError(fmt::format("routing scorer '{}' returned NaN for instance_{}", s.name, i));
      v = std::min(1.0, std::max(0.0, v));
      scores[static_cast<size_t>(i)] += v * s.weight;
    }
  }
  double best = -1.0;
  for (double v : scores) best = std::max(best, v);
  tied_.clear();
  for (int64_t i = 0; i < n; ++i)
    if (scores[static_cast<size_t>(i)] == best) tied_.push_back(static_cast<int32_t>(i));
  const int32_t chosen = pick_tied(tied_);
  for (auto& s : scorers_)
    if (s.scorer->observes()) s.scorer->observe(in, chosen);
  return chosen;
}

bool Router::set_weight(const std::string& name, double weight) {
  bool found = false;
  for (WeightedScorer& s : scorers_)
    if (s.name == name) {
      s.weight = weight;
      found = true;
    }
  return found;
}

}  // namespace blis
