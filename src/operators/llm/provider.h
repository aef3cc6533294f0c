// LLM providers: how a chat request becomes an HTTP request and a response body becomes
// text and token counts. Two protocols: OpenAI-compatible Chat Completions (OpenAI,
// vLLM, llama.cpp's server, Ollama) and Anthropic Messages.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "operators/llm/http_client.h"

namespace kernelevolve::operators::llm {

/// One prompt: a system message and one user message.
struct ChatRequest {
  std::string system;
  std::string user;
  int max_tokens = 8192;     // output tokens at most (the cost cap assumes all are used)
  double temperature = -1;   // < 0: the provider's default (not sent)
};

/// The parsed answer of a successful (HTTP 200) response.
struct ChatResponse {
  std::string text;           // the assistant's text (all text blocks joined)
  int64_t input_tokens = 0;   // usage as billed: prompt_tokens / input_tokens (+ cache tokens)
  int64_t output_tokens = 0;  // completion_tokens / output_tokens
  std::string finish_reason;  // "stop", "length", "end_turn", "max_tokens", ...
  std::string model;          // the model that answered, as the server names it
  std::string id;             // response id ("chatcmpl-...", "msg_...")
};

/// A 200 response whose body is not the provider's JSON shape (malformed, cut short,
/// missing fields). The message says what was wrong.
class ResponseFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Which provider, which model, where, and with what key.
struct ProviderConfig {
  std::string provider;   // "openai" | "anthropic"
  std::string model;      // as the provider names it: "gpt-4.1", "claude-sonnet-4-5", "llama3.1:8b"
  std::string base_url;   // "" = the provider's public endpoint
  std::string api_key;    // "" = none sent (local servers)
  double timeout_seconds = 300;        // one HTTP attempt, whole transfer
  double connect_timeout_seconds = 10;
};

/// One provider protocol.
class Provider {
 public:
  virtual ~Provider() = default;
  /// "openai:gpt-4.1": the id used in the price table, the bandit and the ledger.
  std::string Id() const { return config_.provider + ":" + config_.model; }
  const ProviderConfig& Config() const { return config_; }
  /// The HTTP request for `chat` (URL, headers with the key, JSON body).
  virtual HttpRequest BuildRequest(const ChatRequest& chat) const = 0;
  /// Parses a 200 body. Throws ResponseFormatError.
  virtual ChatResponse ParseResponse(const std::string& body) const = 0;
  /// One line for a non-200 response: "HTTP 401 authentication_error: invalid x-api-key".
  /// Both protocols' error bodies ({"error": {"message": ...}}) read the same way.
  std::string DescribeError(int status, const std::string& body) const;
  /// What to tell the user on 401/403/404 (the fix), e.g. "check OPENAI_API_KEY".
  virtual std::string FixHint(int status) const = 0;

 protected:
  explicit Provider(ProviderConfig config) : config_(std::move(config)) {}
  ProviderConfig config_;
};

/// "openai" | "anthropic" and the model, from "PROVIDER:MODEL" (split at the first ':',
/// so "openai:llama3.1:8b" names the Ollama model "llama3.1:8b"). Throws
/// InvalidInputError naming --llm when the form or the provider is wrong.
std::pair<std::string, std::string> ParseModelSpec(const std::string& spec);

/// The API key variable of a provider: OPENAI_API_KEY or ANTHROPIC_API_KEY.
std::string ApiKeyVariable(const std::string& provider);

/// Builds a provider. The key comes from `getenv(ApiKeyVariable(provider))`; a missing
/// or empty key is an InvalidInputError naming the variable, unless `base_url` is set
/// (a local server may need none; the key is sent when present).
std::unique_ptr<Provider> MakeProvider(ProviderConfig config,
                                       const std::function<const char*(const char*)>& getenv_fn);

/// Joins a base URL and an API path: "http://h:8000/v1" + "chat/completions" gives
/// "http://h:8000/v1/chat/completions"; a base without a trailing "/v1" gets one
/// ("http://h:8000" gives "http://h:8000/v1/chat/completions").
std::string JoinUrl(const std::string& base_url, const std::string& path);

}  // namespace kernelevolve::operators::llm
