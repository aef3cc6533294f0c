// A scripted operator over a small grid of integer knobs, for tests and benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "operators/universal_operator.h"

namespace kernelevolve::exec {

/// Knobs "x0".."x{dims-1}", each in [0, values). Source: "// fake kernel x0=a x1=b ...".
/// Drafts (parent == nullptr): every grid point in a fixed scrambled order, the first n
/// unseen. Children of a node: its one-knob neighbours (dimension order, -1 then +1),
/// then its two-knob neighbours, unseen ones only; none left: an empty answer (the
/// search marks the node exhausted). Deterministic. Records what it was shown.
class FakeOperator : public operators::UniversalOperator {
 public:
  /// A grid of `dims` >= 1 knobs with `values` >= 2 values each.
  FakeOperator(int dims, int values);
  std::string Name() const override { return "fake"; }
  std::optional<std::string> Unsupported(const core::Problem&) const override {
    return std::nullopt;
  }
  std::vector<core::Candidate> Propose(const operators::OperatorContext& context, int n) override;

  /// The candidate for one grid point (knob values in dimension order).
  core::Candidate Make(const std::vector<int>& point, const std::string& rationale) const;
  /// The grid point of a candidate made by this operator.
  static std::vector<int> Point(const core::Candidate& candidate);

  /// What the last Propose call was shown.
  struct Seen {
    int64_t parent_id = -2;  // -2: no call yet; -1: drafts
    size_t lineage = 0;
    size_t siblings = 0;
    bool clean_slate = false;
    size_t experiences = 0;
  };
  /// The last call (undefined before the first).
  const Seen& last() const { return history_.back(); }
  /// Every call, in order.
  const std::vector<Seen>& history() const { return history_; }
  /// Propose calls so far.
  int calls() const { return static_cast<int>(history_.size()); }

 private:
  int dims_;
  int values_;
  std::vector<std::vector<int>> draft_order_;
  std::vector<Seen> history_;
};

}  // namespace kernelevolve::exec
