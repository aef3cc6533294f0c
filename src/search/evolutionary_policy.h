// Island-model evolutionary selection (docs/search.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "search/seeded_rng.h"
#include "search/selection_policy.h"

namespace kernelevolve::search {

/// Islands with their own populations (the island model of Whitley, Rana & Heckendorn
/// 1998; as in OpenEvolve / FunSearch):
///
/// - Islands take turns: selection s picks a parent for island s mod I. A generation is
///   one turn of every island; every `migration_interval` generations, before the
///   first selection of the generation, the best member of each island is copied into
///   the next island (ring topology).
/// - Parent choice: tournament of `tournament_size` members drawn uniformly (with
///   replacement) from the island's non-exhausted members; the fittest wins (failures
///   count as fitness 0; ties: the earlier node). An island with no member left takes
///   another draft (the root) if the root is open, else a tournament of the next
///   island that has members.
/// - A new node joins the island its parent was selected for (drafts: round-robin); a
///   population over `population_size` drops its least fit member (ties: the oldest).
///
/// Random draws come from a SeededRng; the whole state (generator, turn counter,
/// populations, selections awaiting their child) is saved with every checkpoint.
class EvolutionaryPolicy : public SelectionPolicy {
 public:
  /// Uses options.seed, islands (>= 1), migration_interval (>= 1), population_size
  /// (>= 2) and tournament_size (>= 1).
  explicit EvolutionaryPolicy(const PolicyOptions& options);
  std::string Name() const override { return "evolutionary"; }
  std::vector<int64_t> Select(const Tree& tree, int k) override;
  void Notify(Tree& tree, const Node& node) override;
  void OnExhausted(int64_t id) override;
  nlohmann::json SaveState() const override;
  /// Null state: islands rebuilt from the nodes' recorded islands (round-robin by
  /// evaluation order where none is recorded).
  void RestoreState(Tree& tree, const nlohmann::json& state) override;

  /// Node ids of each island's population, in joining order (exposed for tests).
  const std::vector<std::vector<int64_t>>& Islands() const { return islands_; }

 private:
  std::optional<int64_t> Tournament(const Tree& tree, int island,
                                    const std::vector<int64_t>& taken);
  void Join(const Tree& tree, int island, int64_t id);
  void Migrate(const Tree& tree);

  PolicyOptions options_;
  SeededRng rng_;
  int64_t turns_ = 0;                                 // selections made so far
  int64_t drafts_joined_ = 0;                         // root children placed so far
  std::vector<std::vector<int64_t>> islands_;
  std::vector<std::pair<int64_t, int>> outstanding_;  // (parent, island) awaiting a child
};

}  // namespace kernelevolve::search
