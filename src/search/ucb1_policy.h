// UCB1 over the whole tree: every node is an arm (docs/search.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/selection_policy.h"

namespace kernelevolve::search {

/// Flat UCB1 (Auer, Cesa-Bianchi, Fischer 2002, "Finite-time analysis of the multiarmed
/// bandit problem"), each non-exhausted node an arm:
///
///   score(n) = q(n) + c * sqrt(ln N(parent(n)) / N(n))
///
/// q(n) = fitness(n) / best fitness so far, in [0, 1] (0 for a failed or untimed node,
/// 0 for every node while none is correct); N(n) = evaluated nodes in n's subtree
/// (n included) plus candidates in flight below it; N(root) = every node plus every
/// candidate in flight. Highest score first; ties go to the earlier node. The root
/// (another draft) is chosen only when fewer than k nodes are left. O(n) per call over
/// compact per-node arrays kept by the policy (about 15 ns per node: 0.15 ms at 10k
/// nodes, bench/search_overhead).
class Ucb1Policy : public SelectionPolicy {
 public:
  /// `c` >= 0: the exploration weight (PolicyOptions::ucb_c).
  explicit Ucb1Policy(double c) : c_(c) {}
  std::string Name() const override { return "ucb1"; }
  std::vector<int64_t> Select(const Tree& tree, int k) override;
  void OnExhausted(int64_t id) override;
  void RestoreState(Tree& tree, const nlohmann::json& state) override;
  /// The score above for one node of `tree` (exposed for tests).
  double Score(const Tree& tree, int64_t id) const;

 private:
  /// Appends the nodes added to `tree` since the last call to the arrays below.
  void CatchUp(const Tree& tree);

  double c_;
  const Tree* tree_ = nullptr;
  std::vector<double> fitness_;   // by node index: fitness when correct, else 0
  std::vector<int64_t> parent_;   // by node index: the parent's index, -1 for drafts
  std::vector<uint8_t> open_;     // by node index: 1 until exhausted
};

}  // namespace kernelevolve::search
