// Content hashes of KV blocks. A request's content is a chain of block hashes:
// block k's hash covers the tokens of block k and, through `prev`, everything
// before it, so equal hashes mean equal prefixes. The KV cache, the router's
// prefix index and the workload generator all use this one definition.
#pragma once

#include <cstdint>

namespace blis {

// Hash of the empty prefix (the `prev` of block 0).
inline constexpr uint64_t kEmptyPrefixHash = 0x6a09e667f3bcc908ULL;

inline constexpr uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Incremental hasher for one block: construct with the previous block's hash,
// add the block's tokens in order, take finish().
class BlockHasher {
 public:
  explicit constexpr BlockHasher(uint64_t prev) : h_(mix64(prev + 0x9e3779b97f4a7c15ULL)) {}
  constexpr void add(uint32_t token) { h_ = (h_ ^ token) * 0x100000001b3ULL + 0x2545f4914f6cdd1dULL; }
  constexpr uint64_t finish() const { return mix64(h_ ^ (h_ >> 29)); }

 private:
  uint64_t h_;
};

// Content of a block holding a request's own tokens, when the generator did
// not hash them (WorkloadRequest::own_content): a chain like real content,
// from the previous block's hash, the request's content seed and the block's
// position (mix64 is a bijection). Own tokens are random draws no other
// request makes, so any hash unique to the request stands for them
// (docs/design/performance.md "Lazy request content").
inline constexpr uint64_t own_block_hash(uint64_t prev, uint64_t seed, int64_t k) {
  return mix64((prev ^ seed) + static_cast<uint64_t>(k));
}

}  // namespace blis
