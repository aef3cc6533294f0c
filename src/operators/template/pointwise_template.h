// Template "pointwise": a fused elementwise map out[i] = f(in0[i], in1[i], ...).
#pragma once

#include "operators/template/kernel_template.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::templates {

/// Generates fused elementwise kernels over the knobs of PointwiseKnobSpace():
/// simd "off" (std:: math, plain loop, `#pragma GCC unroll`) or "on"
/// (math prelude, `#pragma omp simd` loops, unroll as several machine vectors per
/// step, on AVX-512 a vector width of 16 or 8 floats); one thread or an
/// `omp parallel for` over fixed-size blocks.
class PointwiseTemplate : public KernelTemplate {
 public:
  /// `libm`, `prelude` and `prelude_avx512` are the same graph built with
  /// MathFlavor::kLibm, kPrelude and kPreludeAvx512 (the knob math exists when the
  /// last two differ, on 16-lane machines). `multithread` false drops the threads="all" settings. `vector_lanes`:
  /// float32 lanes of the machine's widest vector (core::CpuIsa::FloatLanes: 4 SSE,
  /// 8 AVX2, 16 AVX-512), the unit of the unroll; 16 adds the vector_width knob.
  PointwiseTemplate(PointwiseExpr libm, PointwiseExpr prelude, PointwiseExpr prelude_avx512, bool multithread,
                    int vector_lanes = 8);

  std::string Name() const override { return "pointwise"; }
  const KnobSpace& Space() const override { return space_; }
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  std::string FusedFunction(const PointwiseExpr& expr) const;
  /// `lanes`: floats per vector; `simdlen` > 0 asks the compiler for that vector width.
  std::string MapRangeFunction(const PointwiseExpr& expr, bool vectorized, int unroll, int lanes,
                               int simdlen) const;
  std::string EntryFunction(const PointwiseExpr& expr, bool threaded, int64_t block) const;

  PointwiseExpr libm_;
  PointwiseExpr prelude_;
  PointwiseExpr prelude_avx512_;
  int vector_lanes_;
  KnobSpace space_;
};

}  // namespace kernelevolve::operators::templates
