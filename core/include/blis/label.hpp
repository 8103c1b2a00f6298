// Label: a short text that many requests repeat (a tenant, a model name),
// held once per distinct value for the whole process. A request keeps the
// text's number in the table, not a string: a million queued requests of one
// tenant cost 4 bytes each, not 32 plus a heap copy of each name past the
// small-string buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace blis {

class Label {
 public:
  Label() = default;  // the empty text
  // Finds or adds `text` in the process-wide table (thread-safe). Implicit:
  // a label is written like the string it stands for.
  Label(std::string_view text);
  Label(const std::string& text) : Label(std::string_view(text)) {}
  Label(const char* text) : Label(std::string_view(text)) {}

  // The text; valid until the process ends.
  const std::string& str() const {
    if (number_ == 0) return kEmpty;
    const uint32_t k = number_ - 1;
    return kChunks[k / kChunk][k % kChunk];
  }
  const char* c_str() const { return str().c_str(); }
  bool empty() const { return number_ == 0; }
  void clear() { number_ = 0; }

  // Equal texts are the same entry of the table.
  friend bool operator==(const Label& a, const Label& b) { return a.number_ == b.number_; }
  friend bool operator==(const Label& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const Label& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const Label& a, const char* b) { return a.str() == b; }

 private:
  static const std::string kEmpty;
  // The table's texts by number - 1, in chunks made as it grows and never
  // moved or freed: reading one takes no lock (the label's maker took it).
  static constexpr uint32_t kChunk = 4096, kMaxChunks = 16384;
  static std::string* kChunks[kMaxChunks];
  uint32_t number_ = 0;  // 0 for ""
};

}  // namespace blis
