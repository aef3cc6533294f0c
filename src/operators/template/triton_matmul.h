// Template "triton_matmul": C = epilogue(A @ B) as one Triton kernel for --target
// triton: tiles of BLOCK_M x BLOCK_N accumulated in float32 with tl.dot over BLOCK_K
// slices, grouped ("swizzled") program order, the epilogue (bias, activation, scale,
// residual, any elementwise chain) applied to the accumulator tile and the result
// stored once in the output dtype. The tiling follows the Triton matmul tutorial
// (triton-lang.org, "Matrix Multiplication", python/tutorials/03-matrix-multiplication.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "operators/template/kernel_template.h"
#include "operators/template/triton_matmul_graph.h"

namespace kernelevolve::operators::templates {

/// Knobs: block_m {64, 128, 256}, block_n {64, 128, 256}, block_k {32, 64, 128},
/// group_m {1, 4, 8} (row blocks per group of the program order; 1 = plain row-major
/// order), num_stages {2, 3, 4, 5} (software pipelining depth of the K loop: shared
/// memory holds num_stages x (BLOCK_M + BLOCK_N) x BLOCK_K operand elements),
/// num_warps {4, 8}; with `float32_operands`, input_precision {"ieee", "tf32x3"}, plus
/// "tf32" with `tf32` (the reference runs the product in TF32; InputPrecisionKnob).
/// With a depth `k` of at least 1024, split_k {1, 2, 4, ...} up to k / 512 (slices of
/// the depth, each summed by its own programs into a float32 workspace of split x M x N
/// that a second kernel adds in order and applies the epilogue to).
/// Settings beyond the 228 KiB of shared memory of an H100/H200 SM fail to compile
/// (Triton's OutOfResources), which the search records as a failure.
KnobSpace TritonMatmulKnobSpace(bool float32_operands, bool tf32 = false, int64_t k = 0);

class TritonMatmulTemplate : public KernelTemplate {
 public:
  explicit TritonMatmulTemplate(TritonMatmulSpec spec);
  std::string Name() const override { return "triton_matmul"; }
  const KnobSpace& Space() const override { return space_; }
  /// The Triton tutorial's CUDA configurations for 16-bit operands, most trusted
  /// first: 128x256x64 (3 stages, 8 warps), 128x128x64 (4 stages, 4 warps),
  /// 64x256x32 (4, 4), 128x128x32 (4, 4), all with group_m 8 (float32 operands: a
  /// 3xTF32 128x128x32 draft before them, and plain TF32 before that where the
  /// reference runs TF32). An output of at most 66 tiles of 128 x 128 with a split_k
  /// knob gets the first of these again first, its depth split to fill about 132
  /// programs (one wave on an H100/H200).
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  /// A Python module: the @triton.jit kernel and kernelevolve_entry(inputs, outputs).
  /// Shapes, strides and K-tile count are compile-time constants of the problem.
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  TritonMatmulSpec spec_;
  KnobSpace space_;
};

}  // namespace kernelevolve::operators::templates
