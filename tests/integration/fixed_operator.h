// A search operator that hands out a fixed list of candidates, the candidates it hands
// out and a scripted eager baseline to score them against, shared by the integration
// tests that search over hand-written kernels (bad_candidates_search_test.cpp on the CPU,
// the Triton tests through triton_candidates.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/candidate.h"
#include "core/problem.h"
#include "operators/universal_operator.h"

namespace kernelevolve::testing_util {

/// A candidate named `name` (its template_name) with `source`.
inline core::Candidate Named(const std::string& name, const std::string& source) {
  core::Candidate c;
  c.source = source;
  c.template_name = name;
  c.operator_name = "fixed";
  c.rationale = name;
  return c;
}

/// Gives `problem` a scripted 5 us eager baseline (10 runs, 95% interval [4, 6] us, minimum
/// 4 us, 10th percentile 4.5 us), so that the search scores hand-written candidates
/// without timing eager PyTorch.
inline void SetScriptedEagerBaseline(core::Problem& problem) {
  problem.eager_baseline.n = 10;
  problem.eager_baseline.median_us = 5;
  problem.eager_baseline.ci_low_us = 4;
  problem.eager_baseline.ci_high_us = 6;
  problem.eager_baseline.min_us = 4;
  problem.eager_baseline.p10_us = 4.5;
}

/// Hands out a fixed list of candidates as drafts, then nothing.
class FixedOperator : public operators::UniversalOperator {
 public:
  explicit FixedOperator(std::vector<core::Candidate> list) : list_(std::move(list)) {}
  std::string Name() const override { return "fixed"; }
  std::optional<std::string> Unsupported(const core::Problem&) const override {
    return std::nullopt;
  }
  std::vector<core::Candidate> Propose(const operators::OperatorContext& ctx, int) override {
    if (ctx.parent) return {};
    auto out = list_;
    list_.clear();
    return out;
  }

 private:
  std::vector<core::Candidate> list_;
};

}  // namespace kernelevolve::testing_util
