#include "operators/llm/cost_ledger.h"

#include <fmt/format.h>

namespace kernelevolve::operators::llm {

int64_t MaxInputTokens(size_t prompt_bytes, int messages) {
  return static_cast<int64_t>(prompt_bytes) + 16LL * messages;
}

std::optional<std::string> CostLedger::Refuse(double worst_case_usd) const {
  if (cap_usd_ <= 0 || spent_usd_ + worst_case_usd <= cap_usd_) return std::nullopt;
  return fmt::format("cost cap: spent ${:.4f} of --max-cost ${:.4f}; the next call may cost up to ${:.4f}",
                     spent_usd_, cap_usd_, worst_case_usd);
}

void CostLedger::Add(double cost_usd, const TokenUsage& usage) {
  spent_usd_ += cost_usd;
  input_tokens_ += usage.input_tokens;
  output_tokens_ += usage.output_tokens;
}

}  // namespace kernelevolve::operators::llm
