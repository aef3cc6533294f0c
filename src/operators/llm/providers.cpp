#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "operators/llm/provider.h"

namespace kernelevolve::operators::llm {
namespace {

using nlohmann::json;

constexpr const char* kOpenAiUrl = "https://api.openai.com/v1";
constexpr const char* kAnthropicUrl = "https://api.anthropic.com/v1";
/// The Messages API version header every request must carry (Anthropic API docs,
/// "Versioning": 2023-06-01 is the current version).
constexpr const char* kAnthropicVersion = "2023-06-01";

json ParseJson(const std::string& body) {
  try {
    return json::parse(body);
  } catch (const json::exception& e) {
    throw ResponseFormatError(fmt::format("malformed JSON ({} bytes): {}", body.size(), e.what()));
  }
}

int64_t Count(const json& usage, const char* field) {
  auto it = usage.find(field);
  if (it == usage.end() || it->is_null()) return 0;
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    throw ResponseFormatError(fmt::format("usage.{} is not a non-negative integer", field));
  }
  return it->get<int64_t>();
}

/// "type: message" of an {"error": {...}} body (both providers), or a snippet of the body.
std::string ErrorText(const std::string& body) {
  try {
    json doc = json::parse(body);
    const json& e = doc.at("error");
    if (e.is_string()) return e.get<std::string>();  // Ollama / some proxies
    std::string type = e.value("type", std::string());
    if (e.contains("code") && e["code"].is_string()) type += (type.empty() ? "" : "/") + e["code"].get<std::string>();
    std::string message = e.value("message", std::string());
    return type.empty() ? message : type + ": " + message;
  } catch (const json::exception&) {
    return body.substr(0, 200);
  }
}

}  // namespace

std::string Provider::DescribeError(int status, const std::string& body) const {
  return fmt::format("HTTP {} {}", status, ErrorText(body));
}

namespace {

class OpenAiProvider : public Provider {
 public:
  explicit OpenAiProvider(ProviderConfig c) : Provider(std::move(c)) {}

  HttpRequest BuildRequest(const ChatRequest& chat) const override {
    const std::string base = config_.base_url.empty() ? kOpenAiUrl : config_.base_url;
    json body = {{"model", config_.model},
                 {"messages", json::array({{{"role", "system"}, {"content", chat.system}},
                                           {{"role", "user"}, {"content", chat.user}}})}};
    // api.openai.com deprecated max_tokens for max_completion_tokens (reasoning models
    // reject the old name); vLLM, llama.cpp and Ollama know max_tokens.
    body[config_.base_url.empty() ? "max_completion_tokens" : "max_tokens"] = chat.max_tokens;
    if (chat.temperature >= 0) body["temperature"] = chat.temperature;
    HttpRequest r;
    r.url = JoinUrl(base, "chat/completions");
    r.headers = {"Content-Type: application/json"};
    if (!config_.api_key.empty()) r.headers.push_back("Authorization: Bearer " + config_.api_key);
    r.body = body.dump();
    return r;
  }

  ChatResponse ParseResponse(const std::string& body) const override {
    json doc = ParseJson(body);
    ChatResponse r;
    try {
      const json& choice = doc.at("choices").at(0);
      const json& content = choice.at("message").at("content");
      r.text = content.is_string() ? content.get<std::string>() : "";
      r.finish_reason = choice.value("finish_reason", std::string());
      const json& usage = doc.at("usage");
      r.input_tokens = Count(usage, "prompt_tokens");
      r.output_tokens = Count(usage, "completion_tokens");
      r.model = doc.value("model", config_.model);
      r.id = doc.value("id", std::string());
    } catch (const json::exception& e) {
      throw ResponseFormatError(fmt::format("not a chat.completion object: {}", e.what()));
    }
    return r;
  }

  std::string FixHint(int status) const override {
    if (status == 401 || status == 403) {
      return config_.base_url.empty() ? "check OPENAI_API_KEY (a valid key of an account with access)"
                                      : "check OPENAI_API_KEY and what the server at --llm-base-url expects";
    }
    if (status == 404) {
      return fmt::format("no model '{}' at {} (check the name after 'openai:' in --llm, and "
                         "--llm-base-url: it should end in /v1)",
                         config_.model, config_.base_url.empty() ? kOpenAiUrl : config_.base_url);
    }
    return "";
  }
};

class AnthropicProvider : public Provider {
 public:
  explicit AnthropicProvider(ProviderConfig c) : Provider(std::move(c)) {}

  HttpRequest BuildRequest(const ChatRequest& chat) const override {
    const std::string base = config_.base_url.empty() ? kAnthropicUrl : config_.base_url;
    json body = {{"model", config_.model},
                 {"max_tokens", chat.max_tokens},
                 {"system", chat.system},
                 {"messages", json::array({{{"role", "user"}, {"content", chat.user}}})}};
    if (chat.temperature >= 0) body["temperature"] = chat.temperature;
    HttpRequest r;
    r.url = JoinUrl(base, "messages");
    r.headers = {"Content-Type: application/json", std::string("anthropic-version: ") + kAnthropicVersion};
    if (!config_.api_key.empty()) r.headers.push_back("x-api-key: " + config_.api_key);
    r.body = body.dump();
    return r;
  }

  ChatResponse ParseResponse(const std::string& body) const override {
    json doc = ParseJson(body);
    ChatResponse r;
    try {
      if (doc.value("type", std::string()) != "message") {
        throw ResponseFormatError(fmt::format("type is '{}', not 'message'", doc.value("type", std::string())));
      }
      for (const json& block : doc.at("content")) {
        if (block.value("type", std::string()) == "text") r.text += block.at("text").get<std::string>();
      }
      r.finish_reason = doc.value("stop_reason", std::string());
      const json& usage = doc.at("usage");
      r.input_tokens = Count(usage, "input_tokens") + Count(usage, "cache_creation_input_tokens") +
                       Count(usage, "cache_read_input_tokens");
      r.output_tokens = Count(usage, "output_tokens");
      r.model = doc.value("model", config_.model);
      r.id = doc.value("id", std::string());
    } catch (const json::exception& e) {
      throw ResponseFormatError(fmt::format("not a Messages API message: {}", e.what()));
    }
    return r;
  }

  std::string FixHint(int status) const override {
    if (status == 401 || status == 403) return "check ANTHROPIC_API_KEY (a valid key with access to this model)";
    if (status == 404) {
      return fmt::format("no model '{}' (check the name after 'anthropic:' in --llm, e.g. "
                         "claude-sonnet-4-5)", config_.model);
    }
    return "";
  }
};

}  // namespace

std::pair<std::string, std::string> ParseModelSpec(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
    throw core::InvalidInputError(fmt::format(
        "--llm {}: expected PROVIDER:MODEL, e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-5", spec));
  }
  std::string provider = spec.substr(0, colon);
  if (provider != "openai" && provider != "anthropic") {
    throw core::InvalidInputError(fmt::format(
        "--llm {}: unknown provider '{}' (known: openai, for any OpenAI-compatible server such "
        "as vLLM, llama.cpp or Ollama; anthropic)", spec, provider));
  }
  return {provider, spec.substr(colon + 1)};
}

std::string ApiKeyVariable(const std::string& provider) {
  return provider == "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

std::unique_ptr<Provider> MakeProvider(ProviderConfig config,
                                       const std::function<const char*(const char*)>& getenv_fn) {
  const std::string variable = ApiKeyVariable(config.provider);
  const char* key = getenv_fn(variable.c_str());
  if (key && *key) {
    config.api_key = key;
  } else if (config.base_url.empty()) {
    throw core::InvalidInputError(fmt::format(
        "--llm {}:{}: the environment variable {} is not set; export your API key there (or "
        "give --llm-base-url for a local server that needs no key)",
        config.provider, config.model, variable));
  }
  if (config.provider == "openai") return std::make_unique<OpenAiProvider>(std::move(config));
  if (config.provider == "anthropic") return std::make_unique<AnthropicProvider>(std::move(config));
  throw core::InvalidInputError(fmt::format("--llm: unknown provider '{}'", config.provider));
}

std::string JoinUrl(const std::string& base_url, const std::string& path) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() < 3 || base.compare(base.size() - 3, 3, "/v1") != 0) base += "/v1";
  return base + "/" + path;
}

}  // namespace kernelevolve::operators::llm
