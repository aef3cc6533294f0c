// The search loop's checkpoints: what is saved with every store write, and how a run
// is rebuilt from the store when Run starts (docs/search.md, "Resume").
#include <fmt/format.h>

#include <unordered_set>

#include "core/error.h"
#include "eval/result_json.h"
#include "search/search_loop.h"

namespace kernelevolve::search {
namespace {

/// Version of the search_state document; a newer one is refused.
constexpr int kStateVersion = 1;

}  // namespace

nlohmann::json SearchLoop::StateJson() const {
  const NodeStats& root = tree_.Stats(kRootId);
  nlohmann::json state = {{"version", kStateVersion},
          {"drafts_requested", drafts_requested_},
          {"elapsed_seconds", Elapsed()},
          {"last_clean_slate", last_clean_slate_},
          {"root", {{"visits", root.visits}, {"value_sum", root.value_sum},
                    {"exhausted", root.exhausted}}},
          {"policy", {{"name", policy_.Name()}, {"state", policy_.SaveState()}}}};
  // The eager measurement the nodes are scored against: a resumed run starts from it, so
  // a slower eager timing at resume cannot rescore the stored nodes upward.
  const std::optional<core::TimingStats> baseline = evaluator_.SharedBaseline();
  if (baseline && baseline->Measured()) state["baseline"] = eval::TimingStatsToJson(*baseline);
  return state;
}

store::SearchCheckpoint SearchLoop::Checkpoint() {
  store::SearchCheckpoint checkpoint;
  for (int64_t id : tree_.TakeDirtyStats()) {
    if (id != kRootId) checkpoint.stats.emplace_back(id, tree_.Stats(id));
  }
  checkpoint.state = StateJson();
  return checkpoint;
}

void SearchLoop::Restore() {
  std::vector<Node> nodes = store_.LoadNodes(run_id_);
  const std::optional<nlohmann::json> state = store_.LoadSearchState(run_id_);
  // A resumed run scores its stored nodes against the faster of the saved baseline and
  // this session's, the one every new node gets.
  if (state && state->contains("baseline")) evaluator_.RecordBaseline(eval::TimingStatsFromJson(state->at("baseline")));
  const std::optional<core::TimingStats> baseline = evaluator_.SharedBaseline();
  const bool rescore = baseline && baseline->Measured() && !nodes.empty();
  if (rescore) scored_baseline_us_ = baseline->min_us;
  std::unordered_map<int64_t, NodeStats> stats;
  for (auto& [id, s] : store_.LoadNodeStats(run_id_)) stats[id] = s;
  for (Node& n : nodes) {
    if (auto it = stats.find(n.id); it != stats.end()) n.stats = it->second;
    n.profile = store_.LoadProfile(n.id);  // issue 6: counted against profile_budget
    if (n.profile) ++profiles_taken_;
    if (rescore) ScoreAgainst(n.evaluation, *baseline);
    progress_.Record(n.evaluation);
    tree_.Add(std::move(n));
  }
  if (rescore) StoreScores();
  nlohmann::json policy_state;
  drafts_requested_ = tree_.Size() > 0;
  if (state) {
    if (state->value("version", 0) > kStateVersion) {
      throw core::InvalidInputError(fmt::format(
          "{}: the search state of run {} was written by a newer kernelevolve; resume it with "
          "that version", store_.Path().string(), run_id_));
    }
    const nlohmann::json policy = state->value("policy", nlohmann::json::object());
    const std::string saved = policy.value("name", policy_.Name());
    if (saved != policy_.Name()) {
      throw core::InvalidInputError(fmt::format(
          "{}: run {} was searched with --policy {}, not {}; resume it with the same policy",
          store_.Path().string(), run_id_, saved, policy_.Name()));
    }
    policy_state = policy.value("state", nlohmann::json());
    drafts_requested_ = state->value("drafts_requested", drafts_requested_);
    elapsed_before_ = state->value("elapsed_seconds", 0.0);
    last_clean_slate_ = state->value("last_clean_slate", -1);
    const nlohmann::json root = state->value("root", nlohmann::json::object());
    NodeStats& root_stats = tree_.MutableStats(kRootId);
    root_stats.visits = root.value("visits", int64_t{0});
    root_stats.value_sum = root.value("value_sum", 0.0);
    root_stats.exhausted = root.value("exhausted", false);
  }
  policy_.RestoreState(tree_, policy_state);

  // Pending candidates come back in the order they were chosen. One whose source is
  // already a node (or an earlier pending candidate) is dropped: never evaluate twice.
  std::vector<int64_t> dropped;
  for (PendingCandidate& p : store_.LoadPending(run_id_)) {
    if (tree_.SeenHashes().count(p.source_hash)) {
      dropped.push_back(p.id);
      continue;
    }
    tree_.AddPending(p);
    queue_.push_back(p.id);
  }
  if (!dropped.empty()) {
    store::SearchCheckpoint checkpoint = Checkpoint();
    checkpoint.dropped_pending = dropped;
    store_.SaveCheckpoint(run_id_, checkpoint);
  }
  resumed_ = static_cast<int>(tree_.Size());
  requeued_ = static_cast<int>(queue_.size());
}

void SearchLoop::StartDrafts() {
  // Seeds first (knowledge base, issue 8), then the operator's drafts; a draft with a
  // seed's source is not asked for twice.
  std::vector<PendingCandidate> list;
  std::unordered_set<std::string> seen = tree_.SeenHashes();
  auto add = [&](core::Candidate c) {
    PendingCandidate p;
    p.parent_id = kRootId;
    p.source_hash = core::ContentHash(c.source);
    p.candidate = std::move(c);
    if (seen.insert(p.source_hash).second) list.push_back(std::move(p));
  };
  for (const core::Candidate& seed : options_.seed_candidates) add(seed);
  operators::OperatorContext context = MakeContext(kRootId);
  context.seen_hashes = &seen;
  for (core::Candidate& c : op_.Propose(context, options_.drafts)) add(std::move(c));

  drafts_requested_ = true;
  store::SearchCheckpoint checkpoint = Checkpoint();
  checkpoint.new_pending = std::move(list);
  store_.SaveCheckpoint(run_id_, checkpoint);
  for (const PendingCandidate& p : checkpoint.new_pending) {
    tree_.AddPending(p);
    queue_.push_back(p.id);
  }
}

void SearchLoop::DropLeftovers() {
  store::SearchCheckpoint checkpoint = Checkpoint();
  for (const auto& [id, pending] : tree_.Pending()) checkpoint.dropped_pending.push_back(id);
  store_.SaveCheckpoint(run_id_, checkpoint);
  for (int64_t id : checkpoint.dropped_pending) tree_.RemovePending(id);
  queue_.clear();
}

}  // namespace kernelevolve::search
