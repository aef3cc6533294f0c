// The LLM operator's flags (issue 7; issue 21: shared by `optimize`, `bench` and
// `compare`, and --llm-temperature). Declared once so the three commands cannot drift
// apart; each command's options derive from LlmFlags.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kernelevolve::cli {

/// Empty `llm`: the offline template operator writes the candidates.
struct LlmFlags {
  std::vector<std::string> llm;             // --llm PROVIDER:MODEL, repeatable (a bandit picks)
  std::vector<std::string> llm_base_urls;   // --llm-base-url URL or PROVIDER=URL
  /// --max-cost USD for the LLM calls of one run; 0: no cap. In a bench or a compare
  /// the cap applies to each run (problem, or problem x policy) separately.
  double max_cost_usd = 0;
  double llm_timeout_seconds = 300;         // --llm-timeout: one HTTP attempt, whole transfer, seconds
  int llm_retries = 6;                      // --llm-retries: HTTP attempts per call
  int llm_max_tokens = 8192;                // --llm-max-tokens: output tokens per call
  double llm_temperature = -1;              // --llm-temperature in [0, 2]; < 0: the provider's default
  std::filesystem::path llm_prices;         // --llm-prices; default config/llm_prices.json
  std::filesystem::path llm_prompts;        // --llm-prompts; default prompts/v2
};

/// Adds --llm, --llm-base-url, --max-cost, --llm-timeout, --llm-retries,
/// --llm-max-tokens, --llm-temperature, --llm-prices and --llm-prompts to `cmd`, bound
/// to `flags` (same names, defaults and meaning in every command).
void AddLlmFlags(CLI::App& cmd, LlmFlags& flags);

}  // namespace kernelevolve::cli
