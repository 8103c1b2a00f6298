// Request content without token ids: the generator draws each token id
// exactly as the reference does (spec workload §1.3, §6.6) but keeps only the
// chained hashes of complete blocks (block_hash.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "blis/block_hash.hpp"
#include "blis/go_rand.hpp"
#include "blis/workload.hpp"

namespace blis::workload {

// Appends block hashes to a vector as tokens arrive.
class ContentHasher {
 public:
  ContentHasher(std::vector<uint64_t>& out, int32_t block_size)
      : out_(out), block_size_(block_size), hasher_(kEmptyPrefixHash) {}

  // Continues from a known state: `hasher` has absorbed `fill` tokens of the
  // block after the last hash already in the output vector.
  void resume(const BlockHasher& hasher, int32_t fill) {
    hasher_ = hasher;
    fill_ = fill;
  }

  void add(uint32_t token) {
    hasher_.add(token);
    if (++fill_ == block_size_) {
      const uint64_t h = hasher_.finish();
      out_.push_back(h);
      hasher_ = BlockHasher(h);
      fill_ = 0;
    }
  }

  // Draws `n` token ids, one Intn(128000) each (spec workload §1.3). The hot
  // loop of the generator: it runs block by block on local copies so the
  // hasher state stays in registers.
  void draw(GoRand& rng, int64_t n) {
    BlockHasher h = hasher_;
    int64_t fill = fill_;
    while (n > 0) {
      const int64_t room = block_size_ - fill;
      const int64_t k = n < room ? n : room;
      for (int64_t i = 0; i < k; ++i) h.add(static_cast<uint32_t>(rng.int31n(kMaxTokenId)));
      n -= k;
      fill += k;
      if (fill == block_size_) {
        const uint64_t block_hash = h.finish();
        out_.push_back(block_hash);
        h = BlockHasher(block_hash);
        fill = 0;
      }
    }
    hasher_ = h;
    fill_ = static_cast<int32_t>(fill);
  }

  const BlockHasher& hasher() const { return hasher_; }
  int32_t fill() const { return fill_; }

 private:
  std::vector<uint64_t>& out_;
  int32_t block_size_;
  BlockHasher hasher_;
  int32_t fill_ = 0;
};

// Draws `n` token ids that no request keeps (rounds of a session dropped
// past the horizon): the stream advances exactly as if they were hashed.
inline void skip_tokens(GoRand& rng, int64_t n) {
  for (int64_t i = 0; i < n; ++i) rng.int31n(kMaxTokenId);
}

// The token vector of a prefix group, with its block hashes cached so that
// every request of the group starts from the same state without re-hashing.
class SharedPrefix {
 public:
  explicit SharedPrefix(int32_t block_size) : block_size_(block_size), tail_(kEmptyPrefixHash) {}

  // Draws `n` more token ids onto the end of the prefix.
  void extend(GoRand& rng, int64_t n);

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }

  // Starts a request whose input begins with the first `length` (<= size())
  // tokens of this prefix: fills `out` with their complete blocks' hashes and
  // leaves `hasher` ready for the tokens that follow.
  void begin(std::vector<uint64_t>& out, ContentHasher& hasher, int64_t length) const;

 private:
  int32_t block_size_;
  std::vector<uint32_t> tokens_;
  std::vector<uint64_t> hashes_;  // one per complete block of tokens_
  BlockHasher tail_;              // state after the trailing partial block
};

}  // namespace blis::workload
