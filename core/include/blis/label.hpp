// Label: a short text that many requests repeat (a tenant, a model name),
// held once per distinct value for the whole process. A request keeps a
// pointer, not a string: a million queued requests of one tenant cost 8 bytes
// each, not 32 plus a heap copy of each name past the small-string buffer.
#pragma once

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
  const std::string& str() const { return text_ != nullptr ? *text_ : kEmpty; }
  const char* c_str() const { return str().c_str(); }
  bool empty() const { return text_ == nullptr; }
  void clear() { text_ = nullptr; }

  // Equal texts are the same entry of the table.
  friend bool operator==(const Label& a, const Label& b) { return a.text_ == b.text_; }
  friend bool operator==(const Label& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const Label& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const Label& a, const char* b) { return a.str() == b; }

 private:
  static const std::string kEmpty;
  const std::string* text_ = nullptr;  // into the table; null for ""
};

}  // namespace blis
