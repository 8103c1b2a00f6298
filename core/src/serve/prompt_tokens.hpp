// Prompt tokens for `blis serve` without a tokenizer: a documented
// approximation (docs/serve.md "Prompt tokens") whose token ids depend on the
// text only, so that requests sharing a prefix share KV blocks in the
// simulated prefix cache.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace blis::live {

// Appends the tokens of `text`: each run of letters, digits and non-ASCII
// bytes (a word) is one token per 6 characters or part of it; every other
// character but whitespace is one token. A token's id is a hash of its
// characters and of whether whitespace came before it, in [0, 128000).
void append_text_tokens(std::string_view text, std::vector<int32_t>& out);

// A chat message: a role marker, the content, an end marker (3 tokens more
// than its content, as chat templates add).
void append_message_tokens(std::string_view role, std::string_view content, std::vector<int32_t>& out);

// The chained hashes of the complete blocks of `tokens` (blis/block_hash.hpp).
std::vector<uint64_t> prompt_block_hashes(const std::vector<int32_t>& tokens, int32_t block_size);

// The text of output token `k` of request `id`: a word with its leading space.
std::string_view output_word(uint64_t id, int64_t k);

}  // namespace blis::live
