// BLIS HEAD's names of requests, as its results file and its goodput sums
// use them. HEAD numbers the requests its workload generates request_0,
// request_1, ... and names a session's follow-up round after its session
// (session_<session>_round_<r>_<n>, made when the round before completes);
// blis numbers follow-ups in the one sequence of request ids, so a request's
// HEAD number is its id less the follow-ups made before it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace blis {

class RequestNames {
 public:
  RequestNames() = default;
  explicit RequestNames(std::unordered_map<uint64_t, std::string> follow_ups)
      : follow_ups_(std::move(follow_ups)) {
    ids_.reserve(follow_ups_.size());
    for (const auto& [id, name] : follow_ups_) ids_.push_back(id);
    std::sort(ids_.begin(), ids_.end());
  }

  // HEAD's name of request `id`.
  std::string operator()(uint64_t id) const {
    if (auto it = follow_ups_.find(id); it != follow_ups_.end()) return it->second;
    const auto before = static_cast<uint64_t>(std::lower_bound(ids_.begin(), ids_.end(), id) - ids_.begin());
    return "request_" + std::to_string(id - before);
  }

 private:
  std::unordered_map<uint64_t, std::string> follow_ups_;
  std::vector<uint64_t> ids_;  // the follow-ups', ascending
};

}  // namespace blis
