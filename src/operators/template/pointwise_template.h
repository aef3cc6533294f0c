// Template "pointwise": a fused elementwise map out[i] = f(in0[i], in1[i], ...).
#pragma once

#include "operators/template/kernel_template.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::templates {

/// Generates fused elementwise kernels over the knobs of PointwiseKnobSpace():
/// variant scalar (std:: math, plain loop, `#pragma GCC unroll`) or vectorized
/// (math prelude, `#pragma omp simd` loops, unroll as several 16-lane vectors per
/// step); one thread or an `omp parallel for` over fixed-size blocks.
class PointwiseTemplate : public KernelTemplate {
 public:
  /// `libm` and `prelude` are the same graph built with MathFlavor::kLibm and
  /// kPrelude. `multithread` false drops the threads="all" settings.
  PointwiseTemplate(PointwiseExpr libm, PointwiseExpr prelude, bool multithread);

  std::string Name() const override { return "pointwise"; }
  const KnobSpace& Space() const override { return space_; }
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  std::string FusedFunction(const PointwiseExpr& expr) const;
  std::string MapRangeFunction(const PointwiseExpr& expr, bool vectorized, int unroll) const;
  std::string EntryFunction(const PointwiseExpr& expr, bool threaded, int64_t block) const;

  PointwiseExpr libm_;
  PointwiseExpr prelude_;
  KnobSpace space_;
};

}  // namespace kernelevolve::operators::templates
