#include <algorithm>

#include "core/error.h"
#include "search/selection_policy.h"

namespace kernelevolve::search {

std::vector<int64_t> GreedyPolicy::Select(const Tree& tree, int k) {
  std::vector<const Node*> correct;
  for (const auto& n : tree.Nodes()) {
    if (n.evaluation.correct && n.evaluation.fitness > 0 && !tree.IsExhausted(n.id)) {
      correct.push_back(&n);
    }
  }
  std::stable_sort(correct.begin(), correct.end(), [](const Node* a, const Node* b) {
    return a->evaluation.fitness > b->evaluation.fitness;
  });
  std::vector<int64_t> out;
  for (const Node* n : correct) {
    if (static_cast<int>(out.size()) >= k) return out;
    out.push_back(n->id);
  }
  if (!out.empty()) return out;
  // Nothing correct yet: repair the newest failure, or ask for more drafts.
  const auto& nodes = tree.Nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    if (!tree.IsExhausted(it->id)) {
      out.push_back(it->id);
      break;
    }
  }
  if (static_cast<int>(out.size()) < k && !tree.IsExhausted(kRootId)) out.push_back(kRootId);
  return out;
}

std::unique_ptr<SelectionPolicy> MakePolicy(const std::string& name) {
  if (name == "greedy") return std::make_unique<GreedyPolicy>();
  throw core::InvalidInputError("--policy " + name + ": unknown policy (available: greedy)");
}

}  // namespace kernelevolve::search
