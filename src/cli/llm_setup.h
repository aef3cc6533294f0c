// The LLM operator's side of `kernelevolve optimize` (issue 7): flags, building the
// operator from them, the observer that feeds it, and its part of result.json.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "cli/optimize_command.h"
#include "core/machine.h"
#include "operators/llm/llm_operator.h"
#include "search/search_loop.h"
#include "store/store.h"

namespace kernelevolve::cli {

/// Checks the LLM flags before any work (no network): every --llm is PROVIDER:MODEL with
/// a known provider, every --llm-base-url is "URL" or "PROVIDER=URL" with an http(s)
/// URL, --max-cost >= 0, --llm-timeout > 0, --llm-retries >= 1, --llm-max-tokens >= 1,
/// the price file and prompt folder load, the API key variables are set where needed,
/// and --max-cost has a price for every model. --llm-base-url or --max-cost without --llm
/// are refused.
/// Throws InvalidInputError naming the flag, the file or the variable.
void ValidateLlmFlags(const OptimizeOptions& options);

/// The operator for `options.llm` (non-empty), with keys from the environment. Throws
/// InvalidInputError as ValidateLlmFlags.
std::unique_ptr<operators::llm::LlmOperator> MakeLlmOperator(const OptimizeOptions& options,
                                                             store::Store& store, int64_t run_id,
                                                             const knowledge::KnowledgeBase* kb,
                                                             const core::MachineContext& machine);

/// Forwards every event to `inner` (may be null) and every evaluated node to the LLM
/// operator first (ledger links, bandit credit, stall tracking).
class LlmObserver : public search::SearchObserver {
 public:
  LlmObserver(operators::llm::LlmOperator& op, search::SearchObserver* inner) : op_(op), inner_(inner) {}
  void OnProposed(int evaluation_number, const core::Candidate& candidate) override {
    if (inner_) inner_->OnProposed(evaluation_number, candidate);
  }
  void OnEvaluated(const search::Node& node, const search::Tree& tree, double elapsed_seconds) override {
    op_.OnEvaluated(node, tree);
    if (inner_) inner_->OnEvaluated(node, tree, elapsed_seconds);
  }

 private:
  operators::llm::LlmOperator& op_;
  search::SearchObserver* inner_;
};

/// result.json's "llm" object: models, calls, tokens, cost, cap and the cap message,
/// per-model pulls of the bandit, and prompt version (docs/llm.md).
nlohmann::json LlmResultJson(const operators::llm::LlmOperator& op, const OptimizeOptions& options);

/// One line for stderr: "llm: 7 calls, 12034 input + 3011 output tokens, $0.0813".
std::string LlmCostLine(const operators::llm::LlmOperator& op);

}  // namespace kernelevolve::cli
