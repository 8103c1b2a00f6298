#include <blis/label.hpp>

#include <blis/errors.hpp>

#include <fmt/format.h>

#include <functional>
#include <mutex>
#include <unordered_map>

namespace blis {

const std::string Label::kEmpty;
std::string* Label::kChunks[Label::kMaxChunks];

namespace {

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

// The table only grows: each text gets the next number, and its string a
// place in kChunks that it keeps. Neither is ever destroyed, so a label stays
// valid whatever static is destroyed first. Sweeps run simulations on
// several threads, hence the lock, taken when a label is made from text,
// never when one is copied or read (a reader's number was made under it).
Label::Label(std::string_view text) {
  if (text.empty()) return;
  static std::mutex lock;
  static auto* numbers = new std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>>();
  std::lock_guard<std::mutex> guard(lock);
  if (auto it = numbers->find(text); it != numbers->end()) {
    number_ = it->second;
    return;
  }
  const auto k = static_cast<uint32_t>(numbers->size());
  if (k / kChunk >= kMaxChunks)
    throw InputError("", fmt::format("more than {} distinct tenant, model or adapter names", uint64_t{kChunk} * kMaxChunks));
  if (kChunks[k / kChunk] == nullptr) kChunks[k / kChunk] = new std::string[kChunk];
  kChunks[k / kChunk][k % kChunk] = std::string(text);
  number_ = k + 1;
  numbers->emplace(std::string(text), number_);
}

}  // namespace blis
