// Template "cuda_pointwise": a captured graph of elementwise ATen ops as one fused
// CUDA C++ kernel (grid-stride loop, float4 loads when aligned), for --target cuda.
#pragma once

#include <string>
#include <vector>

#include "operators/template/kernel_template.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::templates {

/// Knobs: num_warps {4, 8, 16, 32} per block (blocks of 32 x num_warps threads);
/// vector_width {1, 4} floats per load (4: float4 when every pointer is 16-byte
/// aligned, else the scalar path at run time); unroll {1, 2, 4} vectors per thread per
/// grid-stride step; math {"libm", "fast"} (fast: __expf / __logf; "libm" is the safe
/// value).
KnobSpace CudaPointwiseKnobSpace();

class CudaPointwiseTemplate : public KernelTemplate {
 public:
  /// `expr`: the graph as built by BuildPointwiseExpr(graph, MathFlavor::kLibm).
  explicit CudaPointwiseTemplate(PointwiseExpr expr);
  std::string Name() const override { return "cuda_pointwise"; }
  const KnobSpace& Space() const override { return space_; }
  /// {8 warps, vector_width 4, unroll 1}, {16 warps, 4, 2}, {4 warps, 1, 1}: libm math.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  /// A .cu translation unit: the fused __device__ function, the kernel and
  /// kernelevolve_entry. Throws InvalidInputError for a setting outside Space().
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  PointwiseExpr expr_;
  KnobSpace space_;
};

}  // namespace kernelevolve::operators::templates
