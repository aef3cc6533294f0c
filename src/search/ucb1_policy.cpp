#include "search/ucb1_policy.h"

#include <algorithm>
#include <cmath>

namespace kernelevolve::search {
namespace {

/// fitness / best, in [0, 1]; 0 for failures.
double Normalized(const Node& n, double best) {
  if (!n.evaluation.correct || n.evaluation.fitness <= 0 || best <= 0) return 0;
  return std::min(1.0, n.evaluation.fitness / best);
}

double Visits(const Tree& tree, int64_t id) {
  return static_cast<double>(tree.SubtreeSize(id) + tree.InFlight(id));
}

}  // namespace

double Ucb1Policy::Score(const Tree& tree, int64_t id) const {
  const Node& n = tree.Get(id);
  const double best = tree.Best() ? tree.Best()->evaluation.fitness : 0;
  const double visits = std::max(1.0, Visits(tree, id));
  const double parent_visits = std::max(1.0, Visits(tree, n.parent_id));
  return Normalized(n, best) + c_ * std::sqrt(std::log(parent_visits) / visits);
}

void Ucb1Policy::CatchUp(const Tree& tree) {
  if (tree_ != &tree) {
    tree_ = &tree;
    fitness_.clear();
    parent_.clear();
    open_.clear();
  }
  const auto& nodes = tree.Nodes();
  for (size_t i = fitness_.size(); i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    fitness_.push_back(n.evaluation.correct && n.evaluation.fitness > 0 ? n.evaluation.fitness : 0);
    parent_.push_back(n.parent_id == kRootId ? -1 : static_cast<int64_t>(tree.IndexOfNode(n.parent_id)));
    open_.push_back(n.stats.exhausted ? 0 : 1);
  }
}

void Ucb1Policy::OnExhausted(int64_t id) {
  if (tree_ == nullptr || id == kRootId || !tree_->Contains(id)) return;
  const size_t index = tree_->IndexOfNode(id);
  if (index < open_.size()) open_[index] = 0;
}

void Ucb1Policy::RestoreState(Tree& tree, const nlohmann::json& state) {
  (void)state;
  tree_ = nullptr;
  CatchUp(tree);
}

std::vector<int64_t> Ucb1Policy::Select(const Tree& tree, int k) {
  std::vector<int64_t> out;
  if (k <= 0) return out;
  CatchUp(tree);
  const auto& nodes = tree.Nodes();
  const double best = tree.Best() ? tree.Best()->evaluation.fitness : 0;
  const double inv_best = best > 0 ? 1.0 / best : 0;
  const double log_root = std::log(std::max(1.0, Visits(tree, kRootId)));
  while (true) {
    // The k best (score, index) pairs, best first; a strictly greater score wins, so
    // ties keep the earlier node.
    std::vector<std::pair<double, size_t>> top;
    for (size_t i = 0; i < open_.size(); ++i) {
      if (!open_[i]) continue;
      const double visits = std::max<double>(1, tree.SubtreeSizeAt(i) + tree.InFlightAt(i));
      const int64_t p = parent_[i];
      const double log_parent =
          p < 0 ? log_root
                : std::log(std::max<double>(1, tree.SubtreeSizeAt(p) + tree.InFlightAt(p)));
      const double q = std::min(1.0, fitness_[i] * inv_best);
      const double score = q + c_ * std::sqrt(log_parent / visits);
      if (static_cast<int>(top.size()) == k && score <= top.back().first) continue;
      auto at = std::find_if(top.begin(), top.end(), [&](const auto& t) { return score > t.first; });
      top.insert(at, {score, i});
      if (static_cast<int>(top.size()) > k) top.pop_back();
    }
    bool stale = false;  // a node marked exhausted without OnExhausted: drop it, redo
    for (const auto& [score, i] : top) {
      if (nodes[i].stats.exhausted) {
        open_[i] = 0;
        stale = true;
      }
    }
    if (stale) continue;
    for (const auto& [score, i] : top) out.push_back(nodes[i].id);
    break;
  }
  if (static_cast<int>(out.size()) < k && !tree.IsExhausted(kRootId)) out.push_back(kRootId);
  return out;
}

}  // namespace kernelevolve::search
