#include "search/search_loop.h"

#include <algorithm>
#include <chrono>

namespace kernelevolve::search {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

SearchLoop::SearchLoop(const core::Problem& problem, operators::UniversalOperator& op,
                       SelectionPolicy& policy, exec::Evaluator& evaluator, store::Store& store,
                       int64_t run_id, SearchOptions options, SearchObserver* observer)
    : problem_(problem),
      op_(op),
      policy_(policy),
      evaluator_(evaluator),
      store_(store),
      run_id_(run_id),
      options_(options),
      observer_(observer) {
  if (options_.drafts <= 0) options_.drafts = std::max(3, options_.termination.budget / 10);
}

bool SearchLoop::NextCandidate(core::Candidate& candidate, int64_t& parent_id) {
  operators::OperatorContext context;
  context.problem = &problem_;
  context.seen_hashes = &tree_.SeenHashes();
  context.threads = options_.threads;
  context.experiences = options_.experiences;  // knowledge base (issue 8)
  if (!drafts_requested_) {
    drafts_requested_ = true;
    draft_queue_ = op_.Propose(context, options_.drafts);
    // Knowledge base (issue 8): warm-start seeds go before the operator's drafts.
    draft_queue_.insert(draft_queue_.begin(), options_.seed_candidates.begin(),
                        options_.seed_candidates.end());
    std::reverse(draft_queue_.begin(), draft_queue_.end());  // pop from the back in order
  }
  while (!draft_queue_.empty()) {
    candidate = std::move(draft_queue_.back());
    draft_queue_.pop_back();
    if (!tree_.SeenHashes().count(core::ContentHash(candidate.source))) {
      parent_id = kRootId;
      return true;
    }
  }
  // Ask the policy for parents until one yields a proposal or all are exhausted.
  while (true) {
    std::vector<int64_t> parents = policy_.Select(tree_, 1);
    if (parents.empty()) return false;
    int64_t pid = parents.front();
    context.parent = pid == kRootId ? nullptr : &tree_.Get(pid);
    context.siblings = tree_.Children(pid);
    std::vector<core::Candidate> proposals = op_.Propose(context, 1);
    if (proposals.empty()) {
      tree_.MarkExhausted(pid);
      continue;
    }
    candidate = std::move(proposals.front());
    parent_id = pid;
    return true;
  }
}

void SearchLoop::EvaluateAndCommit(const core::Candidate& candidate, int64_t parent_id) {
  Node node;
  node.parent_id = parent_id;
  node.depth = parent_id == kRootId ? 1 : tree_.Get(parent_id).depth + 1;
  node.candidate = candidate;
  node.source_hash = core::ContentHash(candidate.source);
  node.created_unix_s = UnixSeconds();
  node.evaluation = evaluator_.Evaluate(candidate);
  store_.CommitNode(run_id_, node);
  tree_.Add(node);
  const Node& added = tree_.Get(node.id);
  policy_.Notify(added);
  if (observer_) observer_->OnEvaluated(added, tree_, NowSeconds() - started_);
}

SearchOutcome SearchLoop::Run() {
  started_ = NowSeconds();
  SearchOutcome outcome;
  while (true) {
    double elapsed = NowSeconds() - started_;
    if (auto reason = CheckTermination(options_.termination, outcome.evaluations, elapsed)) {
      outcome.stop_reason = *reason;
      break;
    }
    core::Candidate candidate;
    int64_t parent_id = kRootId;
    if (!NextCandidate(candidate, parent_id)) {
      outcome.stop_reason = "exhausted";
      break;
    }
    if (observer_) observer_->OnProposed(outcome.evaluations + 1, candidate);
    EvaluateAndCommit(candidate, parent_id);
    ++outcome.evaluations;
  }
  outcome.elapsed_seconds = NowSeconds() - started_;
  if (const Node* best = tree_.Best()) outcome.best_node_id = best->id;
  return outcome;
}

}  // namespace kernelevolve::search
