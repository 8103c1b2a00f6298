#include <blis/label.hpp>

#include <functional>
#include <mutex>
#include <unordered_set>

namespace blis {

const std::string Label::kEmpty;

namespace {

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

// The table only grows: its strings are what every Label points to, and an
// unordered_set's elements keep their addresses when it rehashes. It is never
// destroyed, so a label stays valid whatever static is destroyed first.
// Sweeps run simulations on several threads, hence the lock, taken when a
// label is made from text, never when one is copied or read.
Label::Label(std::string_view text) {
  if (text.empty()) return;
  static std::mutex lock;
  static auto* table = new std::unordered_set<std::string, TextHash, std::equal_to<>>();
  std::lock_guard<std::mutex> guard(lock);
  auto it = table->find(text);
  if (it == table->end()) it = table->emplace(text).first;
  text_ = &*it;
}

}  // namespace blis
