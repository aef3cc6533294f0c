// The LLM universal operator: every candidate is written by a model from a prompt
// synthesized from the runtime context (docs/llm.md).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.h"
#include "operators/llm/cost_ledger.h"
#include "operators/llm/llm_client.h"
#include "operators/llm/model_bandit.h"
#include "operators/llm/price_table.h"
#include "operators/llm/prompt_builder.h"
#include "operators/llm/provider.h"
#include "operators/universal_operator.h"
#include "search/tree.h"
#include "store/store.h"

namespace kernelevolve::operators::llm {

/// How the operator calls its models.
struct LlmOperatorOptions {
  std::vector<std::unique_ptr<Provider>> providers;  // one per --llm, in order (bandit arms)
  PriceTable prices;
  double max_cost_usd = 0;      // --max-cost; <= 0: no cap
  RetryPolicy retry;
  int max_tokens = 8192;        // --llm-max-tokens: output tokens per call (deep search: twice)
  double temperature = -1;      // < 0: the provider's default
  std::filesystem::path prompt_dir;  // prompts/<version>
  std::string hardware;         // DescribeHardware() or DescribeGpu()
  /// --target: picks the TargetProtocol (prompt ABI section, fences, answer checks) and
  /// the knowledge platform of retrieval. "cpu" | "triton" | "cuda".
  std::string target = "cpu";
  /// The problem's own TOLERANCE (the fixtures' manifest), shown in every prompt.
  std::map<core::DType, core::Tolerance> tolerance_overrides;
  /// Calls per candidate slot at most: a response that does not parse (or repeats a
  /// known kernel) is asked again once by default.
  int calls_per_candidate = 2;
  /// Evaluations without an improvement of 1% before the deep-search sub-agent takes a
  /// proposal (at most once per that many evaluations); a clean slate also triggers it.
  int deep_search_after = 4;
  int retrieve_k = 4;           // knowledge passages per prompt (deep search: twice)
  uint64_t seed = 0;            // backoff jitter
  Sleeper sleep;                // empty: std::this_thread::sleep_for
};

/// UniversalOperator "llm:<model>[,<model>...]".
///
/// Propose() fills each of the n slots with one call (two at most, see
/// calls_per_candidate): the bandit picks the model, the prompt is synthesized
/// (BuildPrompt) for the target's protocol with the parent's Diagnosis (context memory)
/// and passages retrieved from the knowledge base for the target's platform, the
/// response is parsed for that target (ParseResponse), and the candidate
/// carries knobs {"model", "llm_call_id", "cost_usd", "prompt_version", "form",
/// "purpose"}. Every call is stored in the run's llm_calls ledger before Propose
/// returns. Before every HTTP attempt the worst-case cost of the call (MaxInputTokens
/// of the prompt and max_tokens of output at the model's price) is checked against
/// --max-cost; a call that could cross it is not made, and from then on StopReason()
/// is "cost_cap". A 401/403/404 throws InvalidInputError naming the key variable or the
/// model (the call is stored first). Not thread-safe; used on the search loop's thread.
class LlmOperator : public UniversalOperator {
 public:
  /// Reads the run's earlier calls and nodes from `store` (a resumed run continues its
  /// ledger and bandit). `kb` may be null (no retrieval). Throws InvalidInputError when
  /// no provider is given, the target is unknown, the prompt folder is unusable (or has
  /// no ABI section for the target), or --max-cost is set and a model has no price in
  /// the table.
  LlmOperator(LlmOperatorOptions options, store::Store& store, int64_t run_id,
              const knowledge::KnowledgeBase* kb);

  std::string Name() const override;
  /// nullopt for every problem with at least one output (the point of this operator);
  /// "unsupported_graph: the problem has no outputs" otherwise.
  std::optional<std::string> Unsupported(const core::Problem& problem) const override;
  std::vector<core::Candidate> Propose(const OperatorContext& context, int n) override;
  /// "cost_cap" once a call was refused by --max-cost.
  std::optional<std::string> StopReason() const override;

  /// Feedback after each evaluated node (the search observer): links the node to the
  /// call that wrote it, credits the bandit, tracks stalls for deep search.
  void OnEvaluated(const search::Node& node, const search::Tree& tree);

  /// The knowledge base for retrieval (null: none); it must outlive the operator.
  void SetKnowledgeBase(const knowledge::KnowledgeBase* kb) { kb_ = kb; }

  const CostLedger& ledger() const { return ledger_; }
  const ModelBandit& bandit() const { return bandit_; }
  /// Calls made by this process plus those found in the store.
  int calls() const { return calls_; }
  /// The detail of the cost-cap stop ("" when not reached).
  const std::string& cap_message() const { return cap_message_; }
  /// Why the last LLM call failed after its retries (connection refused, timeouts, 5xx),
  /// naming the server's URL and the model; "" when the last call got an answer. A run
  /// that ends "exhausted" with this set ended because the server did not answer.
  const std::string& last_failure() const { return last_failure_; }

 private:
  std::optional<core::Candidate> ProposeOne(const OperatorContext& context, int draft_index,
                                            std::set<std::string>& produced);
  std::vector<knowledge::Passage> Retrieve(const OperatorContext& context, const Diagnosis& diagnosis,
                                           bool deep) const;
  bool DeepSearchDue(const OperatorContext& context) const;
  void Credit(const search::Node& node, double parent_fitness);

  LlmOperatorOptions options_;
  store::Store& store_;
  int64_t run_id_;
  const knowledge::KnowledgeBase* kb_;
  PromptLibrary prompts_;
  const TargetProtocol& protocol_;
  std::vector<ModelPrice> prices_;  // per provider
  CostLedger ledger_;
  ModelBandit bandit_;
  std::mt19937_64 rng_;
  std::set<int64_t> credited_;      // node ids the bandit has seen
  int calls_ = 0;
  int evaluations_ = 0;
  int last_improvement_ = 0;        // evaluations_ at the last 1% improvement
  int last_deep_search_ = -1;       // evaluations_ at the last deep search
  double best_fitness_ = 0;
  std::string cap_message_;
  std::string last_failure_;
};

}  // namespace kernelevolve::operators::llm
