// Which node the search grows next (design.md: SelectionPolicy), and the factory that
// makes one by name. The policies themselves: greedy (below), ucb1_policy.h,
// mcts_policy.h, evolutionary_policy.h, random_policy.h; docs/search.md explains each.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/tree.h"

namespace kernelevolve::search {

/// A policy instance serves one tree: it may index the tree's nodes incrementally
/// between calls (nodes are only ever appended). Deterministic: the same tree, the same
/// sequence of calls and the same seed give the same choices.
class SelectionPolicy {
 public:
  virtual ~SelectionPolicy() = default;
  virtual std::string Name() const = 0;
  /// Up to k distinct parent ids to expand next, best first; kRootId asks for another
  /// draft. Never returns exhausted nodes. Empty: nothing left to expand.
  virtual std::vector<int64_t> Select(const Tree& tree, int k) = 0;
  /// Called once per node, in evaluation order, right after it was added to `tree`
  /// (inside the store transaction that commits it: what the policy writes into
  /// tree.MutableStats is persisted with the node).
  virtual void Notify(Tree& tree, const Node& node) {
    (void)tree;
    (void)node;
  }
  /// Called when the operator had nothing to propose for the id just selected (the loop
  /// has marked it exhausted and will select again).
  virtual void OnExhausted(int64_t id) { (void)id; }
  /// The policy's own state beyond the tree's NodeStats (random generator, islands...),
  /// as JSON, saved with every checkpoint. Null when stateless.
  virtual nlohmann::json SaveState() const { return nullptr; }
  /// Called once before the first Select with the tree rebuilt from the store and the
  /// last saved state (null for a new run or one written by an older version: rebuild
  /// what is needed from the tree; stats written through tree.MutableStats are
  /// persisted with the next checkpoint).
  virtual void RestoreState(Tree& tree, const nlohmann::json& state) {
    (void)tree;
    (void)state;
  }
};

/// Knobs of the policies (flags of `kernelevolve optimize`).
struct PolicyOptions {
  uint64_t seed = 0;                 // --seed: every random choice of the search
  double ucb_c = std::sqrt(2.0);     // --ucb-c: exploration weight of ucb1 and mcts
                                     // (sqrt(2): Auer et al. 2002, UCB1 for rewards in [0,1])
  int islands = 2;                   // --islands (evolutionary)
  int migration_interval = 5;        // --migration-interval: generations between migrations
  int population_size = 10;          // per island
  int tournament_size = 3;
};

/// Greedy best-first: the correct, non-exhausted nodes by descending fitness (ties: the
/// earlier node); when there is none, the newest failed node that can still be
/// repaired, then the root. O(log n) per call (an index kept in fitness order).
class GreedyPolicy : public SelectionPolicy {
 public:
  std::string Name() const override { return "greedy"; }
  std::vector<int64_t> Select(const Tree& tree, int k) override;

 private:
  void CatchUp(const Tree& tree);
  std::set<std::pair<double, int64_t>> by_fitness_;  // (-fitness, id)
  size_t indexed_ = 0;
};

/// The policy names MakePolicy accepts, in the order `compare` runs them.
std::vector<std::string> PolicyNames();

/// Makes a policy by name: greedy | ucb1 | mcts | evolutionary | random. Throws
/// InvalidInputError for an unknown name or invalid options (naming the flag).
std::unique_ptr<SelectionPolicy> MakePolicy(const std::string& name,
                                            const PolicyOptions& options = {});

}  // namespace kernelevolve::search
