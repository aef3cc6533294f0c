#include "cli/llm_flags.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <string>

namespace kernelevolve::cli {

void AddLlmFlags(CLI::App& cmd, LlmFlags& f) {
  cmd.add_option("--llm", f.llm, "PROVIDER:MODEL writes the candidates (openai:..., anthropic:...; repeatable)");
  cmd.add_option("--llm-base-url", f.llm_base_urls, "server URL (vLLM, Ollama, proxy), or PROVIDER=URL (repeatable)");
  cmd.add_option("--max-cost", f.max_cost_usd, "US dollars one run's LLM calls may cost at most (0: no cap)")
      ->default_val(0);
  cmd.add_option("--llm-timeout", f.llm_timeout_seconds, "seconds one HTTP attempt may take")->default_val(300);
  cmd.add_option("--llm-retries", f.llm_retries, "HTTP attempts per LLM call (429, 5xx, timeouts)")->default_val(6);
  cmd.add_option("--llm-max-tokens", f.llm_max_tokens, "output tokens per LLM call at most")->default_val(8192);
  // A validator on the text: NaN and negatives (the internal "unset" value) are refused
  // here, where CLI::Range would let NaN through.
  cmd.add_option("--llm-temperature", f.llm_temperature,
                 "sampling temperature of every LLM call, 0 to 2 (default: the provider's own)")
      ->check(CLI::Validator(
          [](std::string& text) {
            double v = 0;
            try {
              v = std::stod(text);
            } catch (const std::exception&) {
              return std::string("must be a number from 0 to 2");
            }
            return v >= 0 && v <= 2 ? std::string() : std::string("must be from 0 to 2 (OpenAI's and Anthropic's range)");
          },
          "0..2"));
  cmd.add_option("--llm-prices", f.llm_prices, "price table (default config/llm_prices.json)");
  cmd.add_option("--llm-prompts", f.llm_prompts, "prompt template folder (default prompts/v2)");
}

}  // namespace kernelevolve::cli
