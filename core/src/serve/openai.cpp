#include "serve/openai.hpp"

#include "serve/prompt_tokens.hpp"

#include <blis/workload.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>

namespace blis::live {

using nlohmann::json;

namespace {

// With no max-model-len, a request's prompt and output are held to this.
constexpr int64_t kLengthCap = int64_t{1} << 24;
constexpr int32_t kDefaultCompletionTokens = 16;  // OpenAI's default for completions
constexpr int32_t kDefaultChatTokens = 256;

ApiError bad(std::string message, std::string param = "", int status = 400) {
  return ApiError{status, std::move(message), "invalid_request_error", std::move(param), ""};
}

Parsed fail(ApiError e) { return Parsed{std::nullopt, std::move(e)}; }

// A list of token ids, or why not.
bool read_ids(const json& v, std::vector<int32_t>& out) {
  if (!v.is_array()) return false;
  for (const json& x : v) {
    if (!x.is_number_integer()) return false;
    const auto id = x.get<int64_t>();
    if (id < 0 || id >= kMaxTokenId) return false;
    out.push_back(static_cast<int32_t>(id));
  }
  return true;
}

std::optional<ApiError> read_prompt(const json& body, std::vector<int32_t>& out) {
  if (body.contains("prompt_token_ids")) {
    if (!read_ids(body["prompt_token_ids"], out))
      return bad(fmt::format("'prompt_token_ids' must be a list of integers in [0, {})", kMaxTokenId),
                 "prompt_token_ids");
    return std::nullopt;
  }
  if (!body.contains("prompt") || body["prompt"].is_null()) return bad("'prompt' is required", "prompt");
  const json& p = body["prompt"];
  if (p.is_string()) {
    append_text_tokens(p.get_ref<const std::string&>(), out);
    return std::nullopt;
  }
  if (p.is_array() && !p.empty() && p[0].is_number_integer()) {
    if (!read_ids(p, out))
      return bad(fmt::format("a prompt of token ids holds integers in [0, {})", kMaxTokenId), "prompt");
    return std::nullopt;
  }
  if (p.is_array() && p.size() == 1) {
    if (p[0].is_string()) {
      append_text_tokens(p[0].get_ref<const std::string&>(), out);
      return std::nullopt;
    }
    if (read_ids(p[0], out)) return std::nullopt;
  }
  if (p.is_array() && p.size() > 1)
    return bad("one prompt per request: this server does not take batches of prompts", "prompt");
  return bad("'prompt' must be a string, a list of token ids, or a list holding one of those", "prompt");
}

std::optional<ApiError> read_messages(const json& body, std::vector<int32_t>& out) {
  if (!body.contains("messages")) return bad("'messages' is required", "messages");
  const json& m = body["messages"];
  if (!m.is_array() || m.empty()) return bad("'messages' must be a non-empty list", "messages");
  for (const json& msg : m) {
    if (!msg.is_object() || !msg.contains("role") || !msg["role"].is_string())
      return bad("each message is an object with a 'role'", "messages");
    std::string content;
    if (msg.contains("content")) {
      const json& c = msg["content"];
      if (c.is_string()) {
        content = c.get<std::string>();
      } else if (c.is_array()) {
        for (const json& part : c) {
          if (!part.is_object()) return bad("a message's content parts are objects", "messages");
          if (part.contains("text") && part["text"].is_string()) content += part["text"].get<std::string>();
        }
      } else if (!c.is_null()) {
        return bad("a message's 'content' is a string or a list of parts", "messages");
      }
    }
    append_message_tokens(msg["role"].get_ref<const std::string&>(), content, out);
  }
  append_message_tokens("assistant", "", out);
  out.pop_back();  // the generation prompt: the assistant's turn, open
  return std::nullopt;
}

std::optional<ApiError> read_flag(const json& body, const char* key, bool& out) {
  if (!body.contains(key) || body[key].is_null()) return std::nullopt;
  if (!body[key].is_boolean()) return bad(fmt::format("'{}' must be true or false", key), key);
  out = body[key].get<bool>();
  return std::nullopt;
}

// stream, ignore_eos, stream_options; n and best_of refused but for 1.
std::optional<ApiError> read_options(const json& body, Completion& c) {
  if (auto e = read_flag(body, "stream", c.stream)) return e;
  if (auto e = read_flag(body, "ignore_eos", c.ignore_eos)) return e;
  if (body.contains("stream_options") && !body["stream_options"].is_null()) {
    const json& so = body["stream_options"];
    if (!so.is_object()) return bad("'stream_options' must be an object", "stream_options");
    if (auto e = read_flag(so, "include_usage", c.include_usage)) return e;
  }
  for (const char* key : {"n", "best_of"})
    if (body.contains(key) && !body[key].is_null() && body[key] != 1)
      return bad(fmt::format("'{}' other than 1 is not supported", key), key);
  return std::nullopt;
}

// max_tokens (chat: or max_completion_tokens), its default, and the
// context length it must fit in with the prompt.
std::optional<ApiError> read_max_tokens(const json& body, const ApiLimits& limits, Completion& c) {
  const bool chat = c.chat;
  const char* key = chat && body.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  const auto prompt = static_cast<int64_t>(c.prompt.size());
  const int64_t limit = limits.max_model_len > 0 ? limits.max_model_len : kLengthCap;
  int64_t max_tokens = chat ? kDefaultChatTokens : kDefaultCompletionTokens;
  if (body.contains(key) && !body[key].is_null()) {
    const json& v = body[key];
    if (!v.is_number_integer()) return bad(fmt::format("'{}' must be an integer", key), key);
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      max_tokens = std::numeric_limits<int64_t>::max();
    else
      max_tokens = v.get<int64_t>();
    if (max_tokens < 1) return bad(fmt::format("'{}' must be at least 1, got {}", key, max_tokens), key);
  } else if (chat) {
    max_tokens = std::min<int64_t>(max_tokens, std::max<int64_t>(1, limit - prompt));
  }
  if (prompt >= limit || max_tokens > limit - prompt) {
    const char* what = chat ? "messages" : "prompt";
    const std::string asked =
        max_tokens > limit ? fmt::format("more than {}", limit) : std::to_string(prompt + max_tokens);
    return bad(fmt::format("This model's maximum context length is {} tokens. However, you requested {} tokens "
                           "({} in the {}, {} in the completion). Please reduce the length of the {} or completion.",
                           limit, asked, prompt, what, max_tokens, what),
               key);
  }
  c.max_tokens = static_cast<int32_t>(max_tokens);
  return std::nullopt;
}

}  // namespace

std::string error_body(const ApiError& e) {
  json err = {{"message", e.message}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
  if (!e.param.empty()) err["param"] = e.param;
  if (!e.code.empty()) err["code"] = e.code;
  return json{{"error", err}}.dump();
}

Parsed parse_completion(std::string_view text, bool chat, const ApiLimits& limits) {
  json body = json::parse(text, nullptr, false);
  if (body.is_discarded()) return fail(bad("the body is not valid JSON"));
  if (!body.is_object()) return fail(bad("the body must be a JSON object"));
  if (body.contains("model") && !body["model"].is_null()) {
    if (!body["model"].is_string()) return fail(bad("'model' must be a string", "model"));
    const std::string& m = body["model"].get_ref<const std::string&>();
    if (m != limits.model) {
      ApiError e = bad(fmt::format("The model `{}` does not exist; this server serves `{}`.", m, limits.model),
                       "model", 404);
      e.code = "model_not_found";
      return fail(e);
    }
  }
  Completion c;
  c.chat = chat;
  if (auto e = chat ? read_messages(body, c.prompt) : read_prompt(body, c.prompt)) return fail(*e);
  if (c.prompt.empty()) return fail(bad("the prompt is empty", chat ? "messages" : "prompt"));
  if (auto e = read_options(body, c)) return fail(*e);
  if (auto e = read_max_tokens(body, limits, c)) return fail(*e);
  return Parsed{c, {}};
}

namespace {

json head_json(const ResponseHead& h, const char* object) {
  return json{{"id", fmt::format("{}-{}", h.chat ? "chatcmpl" : "cmpl", h.id)},
              {"object", object},
              {"created", h.created},
              {"model", h.model}};
}

json usage_json(int32_t prompt, int32_t tokens) {
  return json{{"prompt_tokens", prompt}, {"total_tokens", prompt + tokens}, {"completion_tokens", tokens}};
}

json finish(const std::string& reason) { return reason.empty() ? json(nullptr) : json(reason); }

std::string event(const json& j) { return "data: " + j.dump() + "\n\n"; }

}  // namespace

std::string completion_body(const ResponseHead& h, int32_t prompt_tokens, int32_t tokens,
                            const std::string& finish_reason) {
  std::string text;
  for (int32_t k = 0; k < tokens; ++k) text += output_word(h.id, k);
  json j = head_json(h, h.chat ? "chat.completion" : "text_completion");
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish(finish_reason)}};
  if (h.chat)
    choice["message"] = json{{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  j["choices"] = json::array({choice});
  j["usage"] = usage_json(prompt_tokens, tokens);
  return j.dump();
}

std::string token_event(const ResponseHead& h, int32_t k, const std::string& finish_reason) {
  json j = head_json(h, h.chat ? "chat.completion.chunk" : "text_completion");
  const std::string word(output_word(h.id, k));
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish(finish_reason)}};
  if (h.chat) {
    json delta = {{"content", word}};
    if (k == 0) delta["role"] = "assistant";
    choice["delta"] = delta;
  } else {
    choice["text"] = word;
  }
  j["choices"] = json::array({choice});
  return event(j);
}

std::string abort_event(const ResponseHead& h) {
  json j = head_json(h, h.chat ? "chat.completion.chunk" : "text_completion");
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", "abort"}};
  if (h.chat)
    choice["delta"] = json::object();
  else
    choice["text"] = "";
  j["choices"] = json::array({choice});
  return event(j);
}

std::string usage_event(const ResponseHead& h, int32_t prompt_tokens, int32_t tokens) {
  json j = head_json(h, h.chat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array();
  j["usage"] = usage_json(prompt_tokens, tokens);
  return event(j);
}

std::string models_body(const ApiLimits& limits, int64_t created) {
  json model = {{"id", limits.model}, {"object", "model"}, {"created", created}, {"owned_by", "blis"},
                {"root", limits.model}, {"parent", nullptr}};
  if (limits.max_model_len > 0) model["max_model_len"] = limits.max_model_len;
  return json{{"object", "list"}, {"data", json::array({model})}}.dump();
}

}  // namespace blis::live
