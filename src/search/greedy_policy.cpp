#include <algorithm>
#include <iterator>

#include "search/selection_policy.h"

namespace kernelevolve::search {

void GreedyPolicy::CatchUp(const Tree& tree) {
  const auto& nodes = tree.Nodes();
  for (; indexed_ < nodes.size(); ++indexed_) {
    const Node& n = nodes[indexed_];
    // Failed nodes go in too, under fitness 0: they are the repair fallback.
    const double fitness = n.evaluation.correct ? n.evaluation.fitness : 0.0;
    by_fitness_.insert({-std::max(0.0, fitness), n.id});
  }
}

std::vector<int64_t> GreedyPolicy::Select(const Tree& tree, int k) {
  CatchUp(tree);
  std::vector<int64_t> out;
  for (auto it = by_fitness_.begin(); it != by_fitness_.end() && it->first < 0;) {
    if (tree.IsExhausted(it->second)) {
      it = by_fitness_.erase(it);  // exhaustion is permanent
      continue;
    }
    if (static_cast<int>(out.size()) >= k) return out;
    out.push_back(it->second);
    ++it;
  }
  if (!out.empty()) return out;
  // Nothing correct left: repair the newest failure (highest id among fitness 0), or
  // ask for more drafts.
  // Zero-fitness entries sort last, by id: the newest failure is the last element.
  while (!by_fitness_.empty() && by_fitness_.rbegin()->first >= 0) {
    auto last = std::prev(by_fitness_.end());
    if (tree.IsExhausted(last->second)) {
      by_fitness_.erase(last);
      continue;
    }
    out.push_back(last->second);
    break;
  }
  if (static_cast<int>(out.size()) < k && !tree.IsExhausted(kRootId)) out.push_back(kRootId);
  if (static_cast<int>(out.size()) > k) out.resize(static_cast<size_t>(std::max(0, k)));
  return out;
}

}  // namespace kernelevolve::search
