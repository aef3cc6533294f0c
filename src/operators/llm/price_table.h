// Dollar prices of LLM tokens, from a JSON config file (config/llm_prices.json).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace kernelevolve::operators::llm {

/// Price of one model, US dollars per million tokens.
struct ModelPrice {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
};

/// Token counts of one call.
struct TokenUsage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

/// Cost in USD: input * input_per_mtok / 1e6 + output * output_per_mtok / 1e6.
double CostUsd(const ModelPrice& price, const TokenUsage& usage);

/// The price table. File format:
///   {"models": {"openai:gpt-4.1": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}, ...}}
/// (other top-level keys, such as "sources" and "retrieved", are documentation).
class PriceTable {
 public:
  /// Reads `path`. Throws InvalidInputError naming the file and the field when it is
  /// missing, not JSON, or a price is not a number >= 0.
  static PriceTable Load(const std::filesystem::path& path);
  /// The price of "provider:model": an exact entry, else the longest entry that is a
  /// prefix followed by '-' (a dated snapshot: "anthropic:claude-sonnet-4-5-20250929"
  /// uses "anthropic:claude-sonnet-4-5"). nullopt when none matches.
  std::optional<ModelPrice> Find(const std::string& model_id) const;
  /// Adds or replaces an entry.
  void Set(const std::string& model_id, ModelPrice price) { prices_[model_id] = price; }
  const std::filesystem::path& Path() const { return path_; }

 private:
  std::map<std::string, ModelPrice> prices_;
  std::filesystem::path path_;
};

/// The price file shipped with kernelevolve: <source dir>/config/llm_prices.json.
std::filesystem::path DefaultPriceFile();

}  // namespace kernelevolve::operators::llm
