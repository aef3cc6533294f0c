// The run's money: what was spent, what the next call may cost at most, the cap.
#pragma once

#include <optional>
#include <string>

#include "operators/llm/price_table.h"

namespace kernelevolve::operators::llm {

/// Upper bound of the input tokens of a prompt: its UTF-8 bytes plus 16 tokens per
/// message for the chat framing. Byte-level BPE tokenizers (OpenAI's tiktoken, and the
/// tokenizers of Claude and Llama) never produce more tokens than bytes, so the bound
/// holds for every provider; it overestimates by about 3-4x for English and code.
int64_t MaxInputTokens(size_t prompt_bytes, int messages);

/// Running totals and the --max-cost cap (USD; <= 0: no cap). Not thread-safe.
class CostLedger {
 public:
  explicit CostLedger(double cap_usd = 0) : cap_usd_(cap_usd) {}
  double cap_usd() const { return cap_usd_; }
  double spent_usd() const { return spent_usd_; }
  int64_t input_tokens() const { return input_tokens_; }
  int64_t output_tokens() const { return output_tokens_; }
  /// nullopt when a call costing at most `worst_case_usd` keeps the total within the
  /// cap; otherwise the stop reason text ("cost cap: spent $X of $Y; the next call may
  /// cost up to $Z").
  std::optional<std::string> Refuse(double worst_case_usd) const;
  /// Adds a call's cost and tokens.
  void Add(double cost_usd, const TokenUsage& usage);
  /// Whether some call was refused (the run then stops with reason "cost_cap").
  bool cap_reached() const { return cap_reached_; }
  void MarkCapReached() { cap_reached_ = true; }

 private:
  double cap_usd_;
  double spent_usd_ = 0;
  int64_t input_tokens_ = 0;
  int64_t output_tokens_ = 0;
  bool cap_reached_ = false;
};

}  // namespace kernelevolve::operators::llm
