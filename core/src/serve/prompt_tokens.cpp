#include "serve/prompt_tokens.hpp"

#include <blis/block_hash.hpp>
#include <blis/workload.hpp>

#include <array>

namespace blis::live {
namespace {

constexpr size_t kWordChars = 6;

bool word_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

bool space_char(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

int32_t token_id(std::string_view piece, bool spaced) {
  uint64_t h = 0xcbf29ce484222325ULL ^ (spaced ? 0x5bd1e995ULL : 0);  // FNV-1a
  for (const char c : piece) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return static_cast<int32_t>(mix64(h) % static_cast<uint64_t>(kMaxTokenId));
}

}  // namespace

void append_text_tokens(std::string_view text, std::vector<int32_t>& out) {
  size_t i = 0;
  bool spaced = false;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (space_char(c)) {
      spaced = true;
      ++i;
      continue;
    }
    if (!word_char(c)) {
      out.push_back(token_id(text.substr(i, 1), spaced));
      spaced = false;
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && word_char(static_cast<unsigned char>(text[end]))) ++end;
    for (size_t k = i; k < end; k += kWordChars) {
      out.push_back(token_id(text.substr(k, std::min(kWordChars, end - k)), spaced && k == i));
    }
    spaced = false;
    i = end;
  }
}

void append_message_tokens(std::string_view role, std::string_view content, std::vector<int32_t>& out) {
  out.push_back(token_id("<|start|>", false));
  out.push_back(token_id(role, false));
  append_text_tokens(content, out);
  out.push_back(token_id("<|end|>", false));
}

std::vector<uint64_t> prompt_block_hashes(const std::vector<int32_t>& tokens, int32_t block_size) {
  std::vector<uint64_t> out;
  if (block_size <= 0) return out;
  const size_t blocks = tokens.size() / static_cast<size_t>(block_size);
  out.reserve(blocks);
  uint64_t prev = kEmptyPrefixHash;
  for (size_t b = 0; b < blocks; ++b) {
    BlockHasher h(prev);
    for (size_t k = 0; k < static_cast<size_t>(block_size); ++k)
      h.add(static_cast<uint32_t>(tokens[b * static_cast<size_t>(block_size) + k]));
    prev = h.finish();
    out.push_back(prev);
  }
  return out;
}

std::string_view output_word(uint64_t id, int64_t k) {
  static constexpr std::array<std::string_view, 32> kWords = {
      " the",   " model", " serves", " tokens", " in",    " simulated", " time",  " and",
      " each",  " step",  " of",     " the",    " batch", " brings",    " one",   " more",
      " word",  " to",    " every",  " stream", " while", " the",       " cache", " keeps",
      " their", " shared", " prefix", " warm",  " for",   " the",       " next",  " request"};
  return kWords[(id * 7 + static_cast<uint64_t>(k)) % kWords.size()];
}

}  // namespace blis::live
