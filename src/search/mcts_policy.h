// Monte Carlo tree search over the kernel tree (docs/search.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "search/selection_policy.h"

namespace kernelevolve::search {

/// UCT (Kocsis & Szepesvari 2006, "Bandit based Monte-Carlo planning") with progressive
/// widening (Coulom 2007; Chaslot et al. 2008), one evaluation per rollout:
///
/// - Selection: from the root, descend. A node x that is not exhausted is expanded
///   (returned) while its children, evaluated or in flight, number fewer than
///   max(1, floor(N(x)^0.5)); otherwise go to the child with the highest
///   Q(child) + c * sqrt(ln N(x) / N(child)), Q = value_sum / visits, N = visits plus
///   candidates in flight below (a virtual loss: in-flight work counts as reward 0, so
///   parallel selections spread out). Ties go to the earlier child. A subtree with
///   nothing to expand is skipped; an exhausted x whose subtree has nothing is closed.
///   When the only expandable nodes already have a child in flight, one of them is
///   expanded again (second pass) rather than nothing.
/// - Expansion and evaluation: the loop asks the operator for one child and evaluates it.
/// - Back-propagation (Notify): reward r = fitness / best fitness so far (this node
///   included), in [0, 1], 0 for any failure; visits += 1 and value_sum += r for the
///   node, each ancestor and the root (tree.MutableStats: persisted with the node).
class MctsPolicy : public SelectionPolicy {
 public:
  /// `c` >= 0: exploration weight (PolicyOptions::ucb_c).
  explicit MctsPolicy(double c) : c_(c) {}
  std::string Name() const override { return "mcts"; }
  std::vector<int64_t> Select(const Tree& tree, int k) override;
  void Notify(Tree& tree, const Node& node) override;
  /// A tree whose root has no visits but has nodes (a run without saved statistics) gets
  /// its statistics rebuilt by back-propagating every node in evaluation order.
  void RestoreState(Tree& tree, const nlohmann::json& state) override;

  /// Rebuilds visits and value sums of every node of `tree` from scratch, as if each had
  /// been notified in order (exposed for the benchmark and tests).
  static void Rebuild(Tree& tree);

 private:
  std::optional<int64_t> Descend(const Tree& tree, int64_t id);
  /// Visits plus in-flight below `id`, plus the selections made earlier in this call.
  double Visits(const Tree& tree, int64_t id) const;
  /// Children of `id` in flight (direct children only), this call's selections included.
  int64_t DirectInFlight(const Tree& tree, int64_t id) const;

  double c_;
  std::unordered_set<int64_t> closed_;
  std::vector<int64_t> chosen_;  // selections of the current Select call
  bool allow_busy_ = false;      // second pass: expand nodes that already have work in flight
};

}  // namespace kernelevolve::search
