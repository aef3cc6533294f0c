// The search: select, propose, evaluate (N in flight), commit, repeat until a stop rule
// fires; every step is checkpointed so a killed search resumes (docs/search.md).
#pragma once

#include <atomic>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/problem.h"
#include "exec/evaluation_pool.h"
#include "exec/evaluator.h"
#include "operators/universal_operator.h"
#include "search/selection_policy.h"
#include "search/termination.h"
#include "search/tree.h"
#include "store/store.h"

namespace kernelevolve::search {

/// Progress callbacks (the console reporter implements them). Called on the loop's
/// thread only.
class SearchObserver {
 public:
  virtual ~SearchObserver() = default;
  /// When a candidate is handed to the evaluators: its number (1-based, resumed
  /// evaluations included) and rationale.
  virtual void OnProposed(int evaluation_number, const core::Candidate& candidate) {
    (void)evaluation_number;
    (void)candidate;
  }
  /// After a node was evaluated and committed.
  virtual void OnEvaluated(const Node& node, const Tree& tree, double elapsed_seconds) = 0;
};

/// What a new candidate's OperatorContext carries besides its parent (--context).
enum class ContextMode {
  kInherit,   // the parent's trajectory (lineage, the draft first)
  kSiblings,  // the parent's other children
  kBoth,      // both (default)
  kClean,     // neither; OperatorContext::clean_slate is set
};
/// "inherit" | "siblings" | "both" | "clean"; throws InvalidInputError naming --context.
ContextMode ContextModeFromName(const std::string& name);
/// Inverse of ContextModeFromName.
std::string ContextModeName(ContextMode mode);

/// How one search runs (flags of `kernelevolve optimize`, docs/search.md).
struct SearchOptions {
  TerminationOptions termination;
  int drafts = 0;  // independent first candidates; 0: max(3, budget / 10)
  int threads = 1;
  // Knowledge base (issue 8): prior kernels evaluated first, as drafts before the
  // operator's; and experience summaries copied into every OperatorContext.
  std::vector<core::Candidate> seed_candidates;
  std::vector<std::string> experiences;
  int jobs = 1;                             // --jobs: candidates in flight
  ContextMode context = ContextMode::kBoth; // --context
  /// --clean-slate-after: after this many evaluations without improvement the next
  /// candidate is a fresh draft proposed without history (once per such stretch).
  /// 0: automatic, max(2, stall / 2) with --stall, else max(5, budget / 8); < 0: never.
  int clean_slate_after = 0;
  /// Set asynchronously (Ctrl-C): stop launching, finish what is in flight, stop with
  /// reason "interrupted"; unlaunched candidates stay pending for `resume`.
  const std::atomic<bool>* interrupt = nullptr;
  /// Hardware-counter profiles during the search (issue 6, --profile-during): before
  /// the operator proposes a child of a parent that is correct (status ok) and has no
  /// profile yet, and only while no other candidate is in flight (a profiler such as
  /// ncu would disturb their timings; with jobs > 1 that moment is rare), the loop
  /// calls `profiler` on the parent, saves the result (Store::SaveProfile) and puts it
  /// on the node, so the operator's diagnosis sees it. Null: never. A profiler that
  /// throws gives a profile with status "failed" and the exception's text as note;
  /// after a profile ProfilerUnusable calls hopeless, no more profiles this session.
  std::function<core::KernelProfile(const Node&)> profiler;
  /// Profiles at most per run, those found in the store on resume included.
  int profile_budget = 0;
};

/// Whether `profile`'s status says the profiler cannot work on this machine at all
/// ("unavailable": no ncu; "not_permitted": ERR_NVGPUCTRPERM; "skipped": no CUDA
/// device), so profiling another kernel would be wasted.
bool ProfilerUnusable(const core::KernelProfile& profile);

/// How a search ended.
struct SearchOutcome {
  std::string stop_reason;   // budget | target_reached | stall | time_limit | exhausted | interrupted | cost_cap
  int evaluations = 0;       // nodes of the run, resumed ones included
  int64_t best_node_id = -1; // -1: no correct candidate
  double elapsed_seconds = 0;  // search time of the run, earlier sessions included
  int resumed_evaluations = 0; // nodes found in the store when Run started
  int requeued = 0;            // pending candidates found in the store and re-queued
};

class SearchLoop {
 public:
  /// All references must outlive the loop. The evaluator must be thread-safe when
  /// options.jobs > 1. Nodes are committed to `store` under `run_id` as each is
  /// evaluated.
  SearchLoop(const core::Problem& problem, operators::UniversalOperator& op,
             SelectionPolicy& policy, exec::Evaluator& evaluator, store::Store& store,
             int64_t run_id, SearchOptions options, SearchObserver* observer = nullptr);

  /// Runs to a stop rule. Starts from what the store holds for the run: a new run
  /// begins with its seeds and drafts; a run that was interrupted continues with its
  /// nodes, the policy's saved state and its pending candidates re-queued first (seeds
  /// and drafts are not asked for again). Candidate failures never throw; store or
  /// worker failures do, and InvalidInputError when the saved state belongs to another
  /// policy.
  SearchOutcome Run();
  /// Every node of the run (after Run: the final tree).
  const Tree& tree() const { return tree_; }

 private:
  // search_loop_state.cpp: restoring and checkpointing.
  void Restore();
  void StartDrafts();
  nlohmann::json StateJson() const;
  store::SearchCheckpoint Checkpoint();
  void DropLeftovers();

  // search_loop.cpp: the loop.
  std::optional<int64_t> NextToLaunch();
  std::optional<int64_t> ProposeFromPolicy();
  std::optional<int64_t> ProposeCleanSlate();
  void MaybeProfile(int64_t parent_id);
  operators::OperatorContext MakeContext(int64_t parent_id) const;
  int64_t Persist(int64_t parent_id, core::Candidate candidate);
  void Launch(int64_t pending_id);
  void Complete(exec::EvaluationPool::Completion done);
  /// Scores `incoming` (a node about to be committed) against the evaluator's shared
  /// baseline and, when that baseline's fastest call improved since the last rescoring,
  /// rescores every node of the tree (and the store, and the stop rules' figures) first,
  /// so that all nodes of a run are compared against one eager measurement. No-op when
  /// the evaluator has no shared baseline (a queue of several machines).
  void RescoreAgainstSharedBaseline(core::Evaluation& incoming);
  /// Rescores every tree node against `baseline` and writes the changed scores.
  void RescoreTree(const core::TimingStats& baseline);
  /// Scores `e` against `baseline` when it is correct and timed (others keep fitness 0).
  static void ScoreAgainst(core::Evaluation& e, const core::TimingStats& baseline);
  /// Writes the fitness and speedup of every correct, timed tree node to the store.
  void StoreScores();
  void MarkExhausted(int64_t id);
  int CleanSlateAfter() const;
  bool CleanSlateDue() const;
  double Elapsed() const;

  const core::Problem& problem_;
  operators::UniversalOperator& op_;
  SelectionPolicy& policy_;
  exec::Evaluator& evaluator_;
  store::Store& store_;
  int64_t run_id_;
  SearchOptions options_;
  SearchObserver* observer_;
  Tree tree_;
  SearchProgress progress_;
  std::deque<int64_t> queue_;  // pending ids not launched yet, in order
  exec::EvaluationPool* pool_ = nullptr;
  bool drafts_requested_ = false;
  int last_clean_slate_ = -1;  // evaluations at the last clean slate; -1: none
  double elapsed_before_ = 0;  // search seconds of earlier sessions
  double session_start_ = 0;
  int resumed_ = 0;
  int requeued_ = 0;
  int profiles_taken_ = 0;        // profiles of the run's nodes (restored ones included)
  bool profiler_unusable_ = false;  // a profile said the profiler cannot work here
  double scored_baseline_us_ = 0;   // fastest eager call the tree is scored against; 0: none yet
};

}  // namespace kernelevolve::search
