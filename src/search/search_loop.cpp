#include "search/search_loop.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "core/error.h"
#include "eval/fitness.h"

namespace kernelevolve::search {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

ContextMode ContextModeFromName(const std::string& name) {
  if (name == "inherit") return ContextMode::kInherit;
  if (name == "siblings") return ContextMode::kSiblings;
  if (name == "both") return ContextMode::kBoth;
  if (name == "clean") return ContextMode::kClean;
  throw core::InvalidInputError(
      fmt::format("--context {}: expected inherit, siblings, both or clean", name));
}

std::string ContextModeName(ContextMode mode) {
  switch (mode) {
    case ContextMode::kInherit: return "inherit";
    case ContextMode::kSiblings: return "siblings";
    case ContextMode::kBoth: return "both";
    case ContextMode::kClean: return "clean";
  }
  return "both";
}

SearchLoop::SearchLoop(const core::Problem& problem, operators::UniversalOperator& op,
                       SelectionPolicy& policy, exec::Evaluator& evaluator, store::Store& store,
                       int64_t run_id, SearchOptions options, SearchObserver* observer)
    : problem_(problem),
      op_(op),
      policy_(policy),
      evaluator_(evaluator),
      store_(store),
      run_id_(run_id),
      options_(std::move(options)),
      observer_(observer),
      progress_(options_.termination.stall_min_improvement) {
  if (options_.drafts <= 0) options_.drafts = std::max(3, options_.termination.budget / 10);
  options_.drafts = std::min(options_.drafts, std::max(1, options_.termination.budget));
  options_.jobs = std::max(1, options_.jobs);
}

double SearchLoop::Elapsed() const { return elapsed_before_ + (NowSeconds() - session_start_); }

int SearchLoop::CleanSlateAfter() const {
  if (options_.clean_slate_after != 0) return std::max(0, options_.clean_slate_after);
  const auto& t = options_.termination;
  return t.stall_evaluations > 0 ? std::max(2, t.stall_evaluations / 2) : std::max(5, t.budget / 8);
}

bool SearchLoop::CleanSlateDue() const {
  const int after = CleanSlateAfter();
  if (after <= 0 || progress_.evaluations() == 0 || tree_.IsExhausted(kRootId)) return false;
  if (progress_.SinceImprovement() < after) return false;
  return last_clean_slate_ < 0 || progress_.evaluations() - last_clean_slate_ >= after;
}

operators::OperatorContext SearchLoop::MakeContext(int64_t parent_id) const {
  operators::OperatorContext context;
  context.problem = &problem_;
  context.seen_hashes = &tree_.SeenHashes();
  context.threads = options_.threads;
  context.experiences = options_.experiences;  // knowledge base (issue 8)
  if (parent_id == kRootId) return context;
  context.parent = &tree_.Get(parent_id);
  const ContextMode mode = options_.context;
  if (mode == ContextMode::kInherit || mode == ContextMode::kBoth) {
    context.lineage = tree_.Lineage(parent_id);
  }
  if (mode == ContextMode::kSiblings || mode == ContextMode::kBoth) {
    context.siblings = tree_.Children(parent_id);
  }
  context.clean_slate = mode == ContextMode::kClean;
  return context;
}

void SearchLoop::MarkExhausted(int64_t id) {
  tree_.MarkExhausted(id);
  policy_.OnExhausted(id);
}

int64_t SearchLoop::Persist(int64_t parent_id, core::Candidate candidate) {
  PendingCandidate pending;
  pending.parent_id = parent_id;
  pending.source_hash = core::ContentHash(candidate.source);
  pending.candidate = std::move(candidate);
  pending.created_unix_s = UnixSeconds();
  store::SearchCheckpoint checkpoint = Checkpoint();
  checkpoint.new_pending.push_back(pending);
  store_.SaveCheckpoint(run_id_, checkpoint);
  pending.id = checkpoint.new_pending.front().id;
  tree_.AddPending(pending);
  return pending.id;
}

std::optional<int64_t> SearchLoop::ProposeCleanSlate() {
  const int since = progress_.SinceImprovement();
  last_clean_slate_ = progress_.evaluations();
  operators::OperatorContext context = MakeContext(kRootId);
  context.clean_slate = true;
  std::vector<core::Candidate> proposals = op_.Propose(context, 1);
  if (proposals.empty()) {
    if (op_.StopReason()) return std::nullopt;  // the operator is done for the run, the root is not
    MarkExhausted(kRootId);
    return std::nullopt;
  }
  core::Candidate c = std::move(proposals.front());
  c.rationale = fmt::format("clean slate after {} evaluations without improvement: {}", since,
                            c.rationale);
  return Persist(kRootId, std::move(c));
}

bool ProfilerUnusable(const core::KernelProfile& p) {
  return p.status == "unavailable" || p.status == "not_permitted" || p.status == "skipped";
}

void SearchLoop::MaybeProfile(int64_t parent_id) {
  if (!options_.profiler || profiler_unusable_ || profiles_taken_ >= options_.profile_budget) return;
  if (parent_id == kRootId) return;  // a new draft: no kernel to profile
  if (options_.interrupt && options_.interrupt->load()) return;  // Ctrl-C: no ~1 min ncu call
  if (pool_ == nullptr || pool_->InFlight() > 0) return;  // never beside a timed candidate
  const Node& parent = tree_.Get(parent_id);
  if (parent.profile || !parent.evaluation.correct || parent.evaluation.status != core::Status::kOk) {
    return;
  }
  core::KernelProfile profile;
  try {
    profile = options_.profiler(parent);
  } catch (const std::exception& e) {
    profile = core::KernelProfile{};
    profile.status = "failed";
    profile.note = fmt::format("profiler failed: {}", e.what());
  }
  store_.SaveProfile(parent_id, profile);
  ++profiles_taken_;
  profiler_unusable_ = ProfilerUnusable(profile);
  tree_.SetProfile(parent_id, std::move(profile));
}

std::optional<int64_t> SearchLoop::ProposeFromPolicy() {
  while (true) {
    std::vector<int64_t> parents = policy_.Select(tree_, 1);
    if (parents.empty()) return std::nullopt;
    const int64_t parent = parents.front();
    if (tree_.IsExhausted(parent)) {
      throw core::InternalError(
          fmt::format("policy {} selected node {}, which is exhausted", policy_.Name(), parent));
    }
    MaybeProfile(parent);  // issue 6: counters of the parent steer its child
    std::vector<core::Candidate> proposals = op_.Propose(MakeContext(parent), 1);
    if (proposals.empty()) {
      if (op_.StopReason()) return std::nullopt;  // e.g. the cost cap: the parent is not exhausted
      MarkExhausted(parent);
      continue;
    }
    return Persist(parent, std::move(proposals.front()));
  }
}

std::optional<int64_t> SearchLoop::NextToLaunch() {
  while (!queue_.empty()) {
    const int64_t id = queue_.front();
    queue_.pop_front();
    if (tree_.Pending().count(id)) return id;
  }
  if (CleanSlateDue()) {
    if (auto id = ProposeCleanSlate()) return id;
  }
  return ProposeFromPolicy();
}

void SearchLoop::Launch(int64_t pending_id) {
  const PendingCandidate& pending = tree_.Pending().at(pending_id);
  pool_->Submit(pending_id, pending.candidate);
  if (observer_) observer_->OnProposed(progress_.evaluations() + pool_->InFlight(), pending.candidate);
}

void SearchLoop::Complete(exec::EvaluationPool::Completion done) {
  const PendingCandidate pending = tree_.Pending().at(done.ticket);
  Node node;
  node.parent_id = pending.parent_id;
  node.depth = pending.parent_id == kRootId ? 1 : tree_.Get(pending.parent_id).depth + 1;
  node.candidate = pending.candidate;
  node.source_hash = pending.source_hash;
  node.created_unix_s = UnixSeconds();
  node.evaluation = std::move(done.evaluation);
  RescoreAgainstSharedBaseline(node.evaluation);
  store::SearchCheckpoint checkpoint;
  // Inside the commit's transaction: the tree, the policy's statistics and the state
  // saved with the node all include it, or none of them does.
  store_.CommitNode(run_id_, node, checkpoint, [&](const Node& committed) {
    tree_.RemovePending(pending.id);
    tree_.Add(committed);
    const Node& added = tree_.Get(committed.id);
    policy_.Notify(tree_, added);
    progress_.Record(added.evaluation);
    checkpoint = Checkpoint();
    checkpoint.evaluated_pending_id = pending.id;
  });
  if (observer_) observer_->OnEvaluated(tree_.Get(node.id), tree_, Elapsed());
}

void SearchLoop::RescoreAgainstSharedBaseline(core::Evaluation& incoming) {
  const std::optional<core::TimingStats> baseline = evaluator_.SharedBaseline();
  if (!baseline || !baseline->Measured()) return;
  ScoreAgainst(incoming, *baseline);
  if (scored_baseline_us_ > 0 && baseline->min_us >= scored_baseline_us_) return;
  const double factor = scored_baseline_us_ > 0 ? baseline->min_us / scored_baseline_us_ : 1.0;
  scored_baseline_us_ = baseline->min_us;
  RescoreTree(*baseline);
  progress_.Rescale(factor);
}

void SearchLoop::RescoreTree(const core::TimingStats& baseline) {
  if (tree_.Size() == 0) return;
  tree_.Rescore([&](core::Evaluation& e) { ScoreAgainst(e, baseline); });
  StoreScores();
}

void SearchLoop::ScoreAgainst(core::Evaluation& e, const core::TimingStats& baseline) {
  if (e.correct && e.latency.Measured()) eval::ScoreEvaluation(e, baseline);
}

void SearchLoop::StoreScores() {
  std::vector<Node> scored;
  for (const Node& n : tree_.Nodes()) {
    if (n.evaluation.correct && n.evaluation.latency.Measured()) scored.push_back(n);
  }
  if (!scored.empty()) store_.UpdateScores(scored);
}

SearchOutcome SearchLoop::Run() {
  session_start_ = NowSeconds();
  Restore();
  if (!drafts_requested_) StartDrafts();
  exec::EvaluationPool pool(evaluator_, options_.jobs);
  pool_ = &pool;
  const int budget = options_.termination.budget;
  std::optional<std::string> stop;
  while (true) {
    if (!stop) stop = CheckTermination(options_.termination, progress_, Elapsed());
    if (!stop) stop = op_.StopReason();  // cost_cap (issue 7)
    if (!stop && options_.interrupt && options_.interrupt->load()) stop = "interrupted";
    while (!stop && pool.InFlight() < pool.jobs() &&
           progress_.evaluations() + pool.InFlight() < budget) {
      std::optional<int64_t> next = NextToLaunch();
      if (!next) break;
      Launch(*next);
    }
    if (pool.InFlight() == 0) {
      if (!stop) stop = op_.StopReason();
      if (!stop) stop = "exhausted";
      break;
    }
    try {
      Complete(pool.WaitAny());
    } catch (const exec::EvaluationInterrupted&) {
      stop = "interrupted";  // issue 22: a queued job given up on SIGINT/SIGTERM; dropped below
    }
  }
  pool_ = nullptr;
  DropLeftovers();

  SearchOutcome outcome;
  outcome.stop_reason = *stop;
  outcome.evaluations = progress_.evaluations();
  if (const Node* best = tree_.Best()) outcome.best_node_id = best->id;
  outcome.elapsed_seconds = Elapsed();
  outcome.resumed_evaluations = resumed_;
  outcome.requeued = requeued_;
  return outcome;
}

}  // namespace kernelevolve::search
