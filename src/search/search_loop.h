// The search: select, propose, evaluate, commit, repeat until a stop rule fires.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/problem.h"
#include "exec/evaluator.h"
#include "operators/universal_operator.h"
#include "search/selection_policy.h"
#include "search/termination.h"
#include "search/tree.h"
#include "store/store.h"

namespace kernelevolve::search {

/// Progress callbacks (the console reporter implements them).
class SearchObserver {
 public:
  virtual ~SearchObserver() = default;
  /// Before a candidate is built: its number (1-based) and rationale.
  virtual void OnProposed(int evaluation_number, const core::Candidate& candidate) {
    (void)evaluation_number;
    (void)candidate;
  }
  /// After a node was evaluated and committed.
  virtual void OnEvaluated(const Node& node, const Tree& tree, double elapsed_seconds) = 0;
};

struct SearchOptions {
  TerminationOptions termination;
  int drafts = 0;  // independent first candidates; 0: max(3, budget / 10)
  int threads = 1;
  // Knowledge base (issue 8): prior kernels evaluated first, as drafts before the
  // operator's; and experience summaries copied into every OperatorContext.
  std::vector<core::Candidate> seed_candidates;
  std::vector<std::string> experiences;
};

struct SearchOutcome {
  std::string stop_reason;   // budget | time_limit | exhausted
  int evaluations = 0;
  int64_t best_node_id = -1; // -1: no correct candidate
  double elapsed_seconds = 0;
};

class SearchLoop {
 public:
  /// All references must outlive the loop. Nodes are committed to `store` under
  /// `run_id` as soon as each is evaluated.
  SearchLoop(const core::Problem& problem, operators::UniversalOperator& op,
             SelectionPolicy& policy, exec::Evaluator& evaluator, store::Store& store,
             int64_t run_id, SearchOptions options, SearchObserver* observer = nullptr);

  /// Runs to a stop rule. Candidate failures never throw; store or worker failures do.
  SearchOutcome Run();
  const Tree& tree() const { return tree_; }

 private:
  bool NextCandidate(core::Candidate& candidate, int64_t& parent_id);
  void EvaluateAndCommit(const core::Candidate& candidate, int64_t parent_id);

  const core::Problem& problem_;
  operators::UniversalOperator& op_;
  SelectionPolicy& policy_;
  exec::Evaluator& evaluator_;
  store::Store& store_;
  int64_t run_id_;
  SearchOptions options_;
  SearchObserver* observer_;
  Tree tree_;
  std::vector<core::Candidate> draft_queue_;
  bool drafts_requested_ = false;
  double started_ = 0;
};

}  // namespace kernelevolve::search
