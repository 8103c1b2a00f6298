#include "workload/content.hpp"

namespace blis::workload {

void SharedPrefix::extend(GoRand& rng, int64_t n) {
  ContentHasher hasher(hashes_, block_size_);
  hasher.resume(tail_, static_cast<int32_t>(tokens_.size() % block_size_));
  tokens_.reserve(tokens_.size() + static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const auto token = static_cast<uint32_t>(rng.int31n(kMaxTokenId));
    tokens_.push_back(token);
    hasher.add(token);
  }
  tail_ = hasher.hasher();
}

void SharedPrefix::begin(std::vector<uint64_t>& out, ContentHasher& hasher, int64_t length) const {
  const auto full = static_cast<size_t>(length / block_size_);
  out.assign(hashes_.begin(), hashes_.begin() + static_cast<std::ptrdiff_t>(full));
  if (length == size()) {
    hasher.resume(tail_, static_cast<int32_t>(length % block_size_));
    return;
  }
  // A shorter use of a longer prefix (trace replay): rebuild the partial
  // block's state from the stored tokens (fewer than one block of work).
  hasher.resume(BlockHasher(full == 0 ? kEmptyPrefixHash : hashes_[full - 1]), 0);
  for (auto k = static_cast<int64_t>(full) * block_size_; k < length; ++k) {
    hasher.add(tokens_[static_cast<size_t>(k)]);
  }
}

}  // namespace blis::workload
