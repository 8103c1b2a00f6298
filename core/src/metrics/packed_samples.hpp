// PackedSamples: a sequence of integers (a run's samples, one per request or
// per step) kept in half their width where that is exact. Values come in
// chunks of kChunk; a chunk stores each value's difference from the chunk's
// first value in `Narrow` while every difference fits, and falls back to
// `Wide` for the whole chunk from the first that does not. Samples next to
// each other (latencies of requests completed one after another, step
// times) differ by far less than 2^31 µs, so a run's samples take 4 bytes
// each instead of a deque's 8, and reading one back gives the value stored,
// whatever it is (tests/unit/test_packed_samples.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace blis {

template <class Wide, class Narrow>
class PackedSamples {
  static_assert(std::is_signed_v<Wide> && std::is_signed_v<Narrow> && sizeof(Narrow) < sizeof(Wide));
  using UWide = std::make_unsigned_t<Wide>;

 public:
  static constexpr size_t kChunk = 4096;

  PackedSamples() = default;
  PackedSamples(std::initializer_list<Wide> values) {
    for (const Wide v : values) push_back(v);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  void push_back(Wide v) {
    if (size_ % kChunk == 0) new_chunk(v);
    Chunk& c = chunks_.back();
    ++size_;
    if (c.wide.empty()) {
      if (const Wide d = diff(v, c.base); fits(d)) {
        c.narrow.push_back(static_cast<Narrow>(d));
        return;
      }
      widen(c);
    }
    c.wide.push_back(v);
  }

  Wide operator[](size_t i) const {
    const Chunk& c = chunks_[i / kChunk];
    const size_t k = i % kChunk;
    return c.wide.empty() ? sum(c.base, c.narrow[k]) : c.wide[k];
  }

  Wide at(size_t i) const {
    if (i >= size_) throw std::out_of_range("PackedSamples::at");
    return operator[](i);
  }

  void set(size_t i, Wide v) {
    Chunk& c = chunks_[i / kChunk];
    const size_t k = i % kChunk;
    if (c.wide.empty()) {
      if (const Wide d = diff(v, c.base); fits(d)) {
        c.narrow[k] = static_cast<Narrow>(d);
        return;
      }
      widen(c);
    }
    c.wide[k] = v;
  }

  // Adds `delta` to the value at i (the wrap of Wide's arithmetic aside).
  void add(size_t i, Wide delta) {
    Chunk& c = chunks_[i / kChunk];
    const size_t k = i % kChunk;
    if (c.wide.empty()) {
      if (const Wide d = sum(c.narrow[k], delta); fits(d)) {
        c.narrow[k] = static_cast<Narrow>(d);
        return;
      }
      widen(c);
    }
    c.wide[k] = sum(c.wide[k], delta);
  }

  // Zeros appended until there are `n` values (as many push_back(0), in bulk).
  void grow_to(size_t n) {
    while (size_ < n) {
      if (size_ % kChunk == 0) new_chunk(0);
      Chunk& c = chunks_.back();
      const size_t k = std::min(n - size_, kChunk - size_ % kChunk);
      if (c.wide.empty() && !fits(diff(0, c.base))) widen(c);
      if (c.wide.empty())
        c.narrow.resize(c.narrow.size() + k, static_cast<Narrow>(diff(0, c.base)));
      else
        c.wide.resize(c.wide.size() + k, 0);
      size_ += k;
    }
  }

  // Appends every value of `other`, in order.
  void append(const PackedSamples& other) {
    for (const Chunk& c : other.chunks_) {
      if (c.wide.empty()) {
        for (const Narrow d : c.narrow) push_back(sum(c.base, d));
      } else {
        for (const Wide v : c.wide) push_back(v);
      }
    }
  }

  // Chunk k holds values [k * kChunk, min(size(), (k + 1) * kChunk)): they
  // are written to out (room for kChunk); returns how many. Reading in
  // chunks, stores filled in step read side by side.
  size_t chunks() const { return chunks_.size(); }
  size_t chunk_values(size_t k, Wide* out) const {
    const Chunk& c = chunks_[k];
    if (!c.wide.empty()) {
      std::copy(c.wide.begin(), c.wide.end(), out);
      return c.wide.size();
    }
    for (size_t i = 0; i < c.narrow.size(); ++i) out[i] = sum(c.base, c.narrow[i]);
    return c.narrow.size();
  }

  // The values as a plain vector (for sorting and selection).
  std::vector<Wide> values() const {
    std::vector<Wide> out(size_);
    Wide* at = out.data();
    for (const Chunk& c : chunks_) {
      if (c.wide.empty()) {
        for (const Narrow d : c.narrow) *at++ = sum(c.base, d);
      } else {
        at = std::copy(c.wide.begin(), c.wide.end(), at);
      }
    }
    return out;
  }

  // Bytes held (the chunks' arrays as allocated), for tests and the docs.
  size_t bytes() const {
    size_t n = chunks_.capacity() * sizeof(Chunk);
    for (const Chunk& c : chunks_) n += c.narrow.capacity() * sizeof(Narrow) + c.wide.capacity() * sizeof(Wide);
    return n;
  }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Wide;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Wide;
    const_iterator() = default;
    const_iterator(const PackedSamples* s, size_t i) : s_(s), i_(i) {}
    Wide operator*() const { return (*s_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++i_;
      return old;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
    friend bool operator!=(const const_iterator& a, const const_iterator& b) { return a.i_ != b.i_; }

   private:
    const PackedSamples* s_ = nullptr;
    size_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  struct Chunk {
    Wide base;                  // the chunk's first value
    std::vector<Narrow> narrow;  // each value - base, while all fit
    std::vector<Wide> wide;      // else every value, as it is
  };
  // Differences and sums in Wide's modular arithmetic: a value is found
  // again from any difference that fits, even across Wide's range.
  static Wide diff(Wide v, Wide base) { return static_cast<Wide>(static_cast<UWide>(v) - static_cast<UWide>(base)); }
  static Wide sum(Wide base, Wide d) { return static_cast<Wide>(static_cast<UWide>(base) + static_cast<UWide>(d)); }
  static bool fits(Wide d) { return d >= std::numeric_limits<Narrow>::min() && d <= std::numeric_limits<Narrow>::max(); }
  [[gnu::noinline]] void new_chunk(Wide base) {
    chunks_.push_back(Chunk{base, {}, {}});
    // A second chunk: a long run, whose chunks all fill.
    if (chunks_.size() > 1) chunks_.back().narrow.reserve(kChunk);
  }
  [[gnu::noinline]] static void widen(Chunk& c) {
    c.wide.reserve(kChunk);
    for (const Narrow d : c.narrow) c.wide.push_back(sum(c.base, d));
    std::vector<Narrow>().swap(c.narrow);  // its memory too (`= {}` would keep it)
  }

  std::vector<Chunk> chunks_;
  size_t size_ = 0;
};

// A run's latency samples (µs) and its steps' values.
using SampleStore = PackedSamples<int64_t, int32_t>;
// Counters that are mostly small (the runs' difference array over steps).
using CountStore = PackedSamples<int32_t, int16_t>;

}  // namespace blis
