// Uniform random selection: the baseline the other policies are compared against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/seeded_rng.h"
#include "search/selection_policy.h"

namespace kernelevolve::search {

/// Picks uniformly among the root (another draft) and every non-exhausted node, with a
/// SeededRng (one draw per pick, by rejection; the generator is saved with every
/// checkpoint). O(log n) per pick: a Fenwick tree over "still open" flags in canonical
/// order (root, then nodes in evaluation order), updated through OnExhausted, so a
/// resumed search makes the same picks.
class RandomPolicy : public SelectionPolicy {
 public:
  explicit RandomPolicy(uint64_t seed) : rng_(seed) {}
  std::string Name() const override { return "random"; }
  std::vector<int64_t> Select(const Tree& tree, int k) override;
  void OnExhausted(int64_t id) override;
  nlohmann::json SaveState() const override { return {{"rng", rng_.Save()}}; }
  void RestoreState(Tree& tree, const nlohmann::json& state) override;

 private:
  void CatchUp(const Tree& tree);
  /// Appends a slot with value `open` (0 or 1).
  void Append(int open);
  void Set(size_t slot, int open);
  int64_t Prefix(size_t count) const;  // sum of the first `count` slots
  size_t FindNth(int64_t n) const;     // slot holding the n-th (0-based) open entry

  SeededRng rng_;
  const Tree* tree_ = nullptr;
  std::vector<int64_t> fenwick_;  // 1-based partial sums
  std::vector<int> open_;         // slot values
  std::vector<int64_t> ids_;      // slot -> node id (kRootId at slot 0)
  int64_t total_open_ = 0;
};

}  // namespace kernelevolve::search
