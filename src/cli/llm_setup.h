// The LLM operator's side of `kernelevolve optimize` (issue 7): flags, building the
// operator from them, the observer that feeds it, and its part of result.json.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "cli/optimize_command.h"
#include "core/machine.h"
#include "core/problem.h"
#include "operators/llm/llm_operator.h"
#include "platforms/triton/triton_platform.h"
#include "search/search_loop.h"
#include "store/store.h"

namespace kernelevolve::cli {

/// Checks the LLM flags before any work (no network): every --llm is PROVIDER:MODEL with
/// a known provider, every --llm-base-url is "URL" or "PROVIDER=URL" with an http(s)
/// URL, --max-cost >= 0, --llm-timeout > 0, --llm-retries >= 1, --llm-max-tokens >= 1,
/// --llm-temperature unset or in [0, 2], the price file and prompt folder load (with an
/// ABI section for --target), the API key variables are set where needed, and
/// --max-cost has a price for every model. --llm-base-url, --max-cost or
/// --llm-temperature without --llm are refused.
/// Throws InvalidInputError naming the flag, the file or the variable.
void ValidateLlmFlags(const OptimizeOptions& options);

/// The operator for `options.llm` (non-empty) and `options.target`, with keys from the
/// environment, the hardware of PromptHardware, and the problem's own tolerance read
/// from its fixtures' manifest.json. Throws InvalidInputError as ValidateLlmFlags.
std::unique_ptr<operators::llm::LlmOperator> MakeLlmOperator(const OptimizeOptions& options,
                                                             store::Store& store, int64_t run_id,
                                                             const knowledge::KnowledgeBase* kb,
                                                             const core::MachineContext& machine,
                                                             const core::Problem& problem,
                                                             platforms::triton::TritonPlatform* gpu);

/// The prompt's hardware text: on --target cpu the CPU with the measured copy bandwidth
/// and FMA peak of `machine` (DescribeHardware); on GPU targets (`gpu` non-null) the
/// device the runner reported, its SM count, L2, shared memory, and the measured copy
/// bandwidth (`machine.copy_bandwidth_gbps`) and torch.mm peaks (DescribeGpu).
std::string PromptHardware(const OptimizeOptions& options, const core::MachineContext& machine,
                           platforms::triton::TritonPlatform* gpu);

/// The LLM cost of a finished run, US dollars: result.json's llm.cost_usd (0 when the
/// file is unreadable or the run had no LLM operator). For bench and compare lines.
double LlmCostOfRun(const std::filesystem::path& result_json);

/// The progress line's LLM field: "llm $0.0421 (7 calls)".
std::string LlmProgressField(const operators::llm::LlmOperator& op);

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
