#include "search/mcts_policy.h"

#include <algorithm>
#include <cmath>

namespace kernelevolve::search {
namespace {

/// fitness / best, in [0, 1]; 0 for failures.
double Reward(const Node& n, double best) {
  if (!n.evaluation.correct || n.evaluation.fitness <= 0 || best <= 0) return 0;
  return std::min(1.0, n.evaluation.fitness / best);
}

void BackPropagate(Tree& tree, const Node& node, double reward) {
  for (int64_t id = node.id; id != kRootId; id = tree.Get(id).parent_id) {
    NodeStats& stats = tree.MutableStats(id);
    stats.visits += 1;
    stats.value_sum += reward;
  }
  NodeStats& root = tree.MutableStats(kRootId);
  root.visits += 1;
  root.value_sum += reward;
}

}  // namespace

double MctsPolicy::Visits(const Tree& tree, int64_t id) const {
  double visits = static_cast<double>(tree.Stats(id).visits + tree.InFlight(id));
  for (int64_t c : chosen_) {
    // A selection made earlier in this call counts as in flight below it.
    for (int64_t p = c;; p = tree.Get(p).parent_id) {
      if (p == id) {
        visits += 1;
        break;
      }
      if (p == kRootId) break;
    }
  }
  return visits;
}

int64_t MctsPolicy::DirectInFlight(const Tree& tree, int64_t id) const {
  int64_t direct = tree.InFlight(id);
  for (int64_t child : tree.ChildIds(id)) direct -= tree.InFlight(child);
  return direct + std::count(chosen_.begin(), chosen_.end(), id);
}

std::optional<int64_t> MctsPolicy::Descend(const Tree& tree, int64_t id) {
  if (closed_.count(id)) return std::nullopt;
  const bool open = !tree.IsExhausted(id);
  const double visits = Visits(tree, id);
  const int64_t width = tree.ChildCount(id) + DirectInFlight(tree, id);
  const auto allowed = std::max<int64_t>(1, static_cast<int64_t>(std::floor(std::sqrt(visits))));
  if (open && width < allowed) return id;

  const double log_visits = std::log(std::max(1.0, visits));
  std::vector<std::pair<double, int64_t>> ranked;
  for (int64_t child : tree.ChildIds(id)) {
    if (closed_.count(child)) continue;
    const NodeStats& s = tree.Stats(child);
    const double q = s.visits > 0 ? s.value_sum / static_cast<double>(s.visits) : 0.0;
    const double n = std::max(1.0, Visits(tree, child));
    ranked.emplace_back(q + c_ * std::sqrt(log_visits / n), child);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [score, child] : ranked) {
    if (auto found = Descend(tree, child)) return found;
  }
  // Nothing below: expand here after all, unless this node already has work in flight
  // and a sibling may have something (a second pass allows that, see Select).
  if (open && (allow_busy_ || DirectInFlight(tree, id) == 0)) return id;
  if (id != kRootId && Visits(tree, id) == static_cast<double>(tree.Stats(id).visits) &&
      tree.InFlight(id) == 0) {
    closed_.insert(id);  // nothing to expand below and nothing coming: never again
  }
  return std::nullopt;
}

std::vector<int64_t> MctsPolicy::Select(const Tree& tree, int k) {
  chosen_.clear();
  for (int i = 0; i < k; ++i) {
    allow_busy_ = false;
    auto found = Descend(tree, kRootId);
    if (!found) {
      allow_busy_ = true;  // every open node has work in flight: take one anyway
      found = Descend(tree, kRootId);
    }
    if (!found) break;
    chosen_.push_back(*found);
  }
  std::vector<int64_t> out;
  for (int64_t id : chosen_) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  chosen_.clear();
  return out;
}

void MctsPolicy::Notify(Tree& tree, const Node& node) {
  const double best = tree.Best() ? tree.Best()->evaluation.fitness : 0;
  BackPropagate(tree, node, Reward(node, best));
}

void MctsPolicy::Rebuild(Tree& tree) {
  tree.MutableStats(kRootId).visits = 0;
  tree.MutableStats(kRootId).value_sum = 0;
  for (const Node& n : tree.Nodes()) {
    NodeStats& s = tree.MutableStats(n.id);
    s.visits = 0;
    s.value_sum = 0;
  }
  double best = 0;
  for (size_t i = 0; i < tree.Nodes().size(); ++i) {
    const Node& n = tree.Nodes()[i];
    if (n.evaluation.correct) best = std::max(best, n.evaluation.fitness);
    BackPropagate(tree, n, Reward(n, best));
  }
}

void MctsPolicy::RestoreState(Tree& tree, const nlohmann::json& state) {
  (void)state;
  closed_.clear();
  if (tree.Size() > 0 && tree.Stats(kRootId).visits == 0) Rebuild(tree);
}

}  // namespace kernelevolve::search
