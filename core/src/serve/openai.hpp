// The OpenAI API as `blis serve` speaks it: requests of /v1/completions and
// /v1/chat/completions read and checked, responses and stream chunks
// written (docs/serve.md). No I/O here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blis::live {

// An error as the API returns it: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // "" = null
  std::string code;   // "" = null
};
std::string error_body(const ApiError& e);

// What the server checks requests against.
struct ApiLimits {
  std::string model;          // the served model's name
  int64_t max_model_len = 0;  // prompt + max_tokens; 0 = no limit of the model's
};

struct Completion {
  bool chat = false;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool ignore_eos = false;
  std::vector<int32_t> prompt;  // token ids
  int32_t max_tokens = 0;
};

// Reads a request body; the error to return instead when it is not one the
// server can serve.
struct Parsed {
  std::optional<Completion> request;
  ApiError error;
};
Parsed parse_completion(std::string_view body, bool chat, const ApiLimits& limits);

// Responses. `id` is the request's; `created` its Unix time.
struct ResponseHead {
  uint64_t id = 0;
  int64_t created = 0;
  std::string model;
  bool chat = false;
};
// The whole answer (not streamed): `tokens` output tokens.
std::string completion_body(const ResponseHead& h, int32_t prompt_tokens, int32_t tokens,
                            const std::string& finish_reason);
// One server-sent event ("data: {...}\n\n") for output token `k` (from 0);
// `finish_reason` on the last one, "" otherwise.
std::string token_event(const ResponseHead& h, int32_t k, const std::string& finish_reason);
// The event closing a stream cut short (finish_reason "abort"), without token.
std::string abort_event(const ResponseHead& h);
// stream_options.include_usage: the usage event after the last token.
std::string usage_event(const ResponseHead& h, int32_t prompt_tokens, int32_t tokens);
// /v1/models.
std::string models_body(const ApiLimits& limits, int64_t created);

}  // namespace blis::live
