// The C++ main loop of a convolution (ir/convolution.h) as an implicit GEMM into the
// packed GEMM of gemm_cpp.h: per (image, group), out[co, pos] = W[co, kk] * X_col[kk,
// pos] with the im2col matrix X_col (Chellapilla, Puri and Simard, IWFHR 2006) never
// stored: its KC x NR slivers are gathered from the input while packing B (zeros
// outside the input: padding). A 1x1 convolution of stride 1 without padding reads
// the input as a plain [cin/groups, positions] matrix. A depthwise convolution runs in a
// direct form instead (ConvRunsDirect).
#pragma once

#include <functional>
#include <string>

#include "operators/codegen/cpp/gemm_cpp.h"
#include "operators/ir/convolution.h"

namespace kernelevolve::operators::codegen {

/// The im2col packer `ke_conv_b` (a functor for ke_gemm's pack_b) for 1 to 3 spatial
/// dims, as C++17 text; needs GemmHelpersCpp's text before it.
std::string ConvHelpersCpp();

/// The largest channel multiplier (output channels per group) of a depthwise
/// convolution that runs in the direct form: its implicit GEMM per (image, group) has
/// at most this many rows and a depth of one window, so packing costs more than the
/// products.
inline constexpr int64_t kDirectMaxChannelMultiplier = 4;

/// The largest window (positions) the direct form prints unrolled, weights in
/// registers; a larger one runs as loops over the window.
inline constexpr int64_t kDirectUnrolledTaps = 32;

/// Whether `c` runs in the direct form rather than as an implicit GEMM: a depthwise
/// convolution (one input channel per group, groups > 1) with a channel multiplier of
/// at most kDirectMaxChannelMultiplier.
bool ConvRunsDirect(const ir::Convolution& c);

/// Statements writing `c` into t<out_id> (dense row-major [N, cout, out...]) from
/// t<c.x> and t<c.w> at `indent`. `epilogue`, when set, prints the statements of the
/// fused epilogue lambda's body (it sees `ke_acc`, the output's index variables
/// i0 .. i<rank-1> and `ke_own`, the element's flat position in the output, as
/// int64_t) ending in `return VALUE;`; without it the product is
/// stored as is. Threads share the (image, group) loop or each GEMM's tiles
/// (BatchLoopCpp with `min_parallel_batches`). A depthwise convolution
/// (ConvRunsDirect) is printed in the direct form instead, threads sharing the (image,
/// output channel) loop.
std::string ConvCallCpp(const ir::Convolution& c, int out_id, bool parallel, const std::string& indent,
                        const std::function<std::string(const std::string&)>& epilogue = nullptr,
                        int64_t min_parallel_batches = 8);

}  // namespace kernelevolve::operators::codegen
