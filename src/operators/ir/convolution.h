// Recognizes the reductions of a TensorProgram that are (non-transposed) convolutions,
// so that a backend can run them as an implicit GEMM (issue 18, item 2): per image and
// group, out[co, pos] = sum_kk W[co, kk] * X_col[kk, pos], kk = (input channel of the
// group, window position), pos = output position, X_col the im2col matrix (K.
// Chellapilla, S. Puri and P. Simard, "High Performance Convolutional Neural Networks
// for Document Processing", IWFHR 2006) read straight from the input while packing.
// The lowering spells convolution as a masked sum over (ci, k...) (lower_core_heavy.cpp);
// this file reads stride, padding and dilation back out of the input's index and mask
// and accepts the reduction only when rebuilding that exact term gives the same body.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::ir {

/// out[n, co, o...] = sum_{ci < cin/groups, k...} x[n, g * cin/groups + ci, o * stride - pad + k * dilation]
///                                             * w[co, ci, k...],  g = co / (cout/groups),
/// reads outside the input being 0 (zero padding). float32 input `x` [N, cin, in...] (or
/// [cin, in...] when !batched) and weight `w` [cout, cin/groups, kernel...], output
/// dense row-major [N, cout, out...]; 1 to 3 spatial dims. Sizes in elements.
struct Convolution {
  int x = -1, w = -1;
  bool batched = true;
  int64_t images = 1;  // N (1 when !batched)
  int64_t cin = 0, cout = 0, groups = 1;
  std::vector<int64_t> in, out, kernel, stride, pad, dilation;  // per spatial dim
  int64_t CinPerGroup() const { return cin / groups; }
  int64_t CoutPerGroup() const { return cout / groups; }
  /// The GEMM depth per group: cin/groups times the window's positions.
  int64_t Depth() const;
  /// Output positions per channel (the GEMM's columns).
  int64_t OutPositions() const;
};

/// The convolution `def` computes, if it is one: a float32 sum reduction whose term is
/// the product of the input and weight loads exactly as the lowering of
/// aten.convolution (transposed = false) spells them. nullopt otherwise (transposed
/// convolutions, inputs read through inlined views, other dtypes).
std::optional<Convolution> MatchConvolution(const TensorProgram& program, const TensorDef& def);

}  // namespace kernelevolve::operators::ir
