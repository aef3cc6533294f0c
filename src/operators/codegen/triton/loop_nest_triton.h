// The Triton printer of a kernel plan (ir/kernel_plan.h): one @triton.jit function
// per kernel (element kernels over blocks of output elements; reductions over
// [XBLOCK, RBLOCK] tiles looping over the reduced elements; scans over rows with a
// running carry), launched in order by `kernelevolve_entry(inputs, outputs)`, which
// allocates the intermediates with torch.empty on the outputs' device (docs/gpu.md).
// Element math goes through the primitive table (codegen/prim_spelling.h).
#pragma once

#include <set>
#include <string>
#include <unordered_map>

#include "operators/codegen/triton/main_loop_triton.h"
#include "operators/ir/epilogue_fusion.h"
#include "operators/ir/kernel_plan.h"

namespace kernelevolve::operators::codegen {

/// Schedule knobs of a Triton loop-nest program (the knob vocabulary's names).
struct TritonLoopNestSchedule {
  int block = 1024;   // "block": output elements per program of an element kernel
  int rblock = 64;    // "block_r": reduced elements per step of a reduction or scan tile
  int num_warps = 4;  // "num_warps"
  /// "accumulator": float32 sums, products and their scans accumulate in float64 and
  /// round once when stored (ir::AccumulatesFloat32).
  bool double_accumulator = true;
  /// Tiles of the tl.dot main loops (matrix products, convolutions).
  TritonMainLoopSchedule main_loop;
  /// The entry's name: another module that embeds this program (the mask of a
  /// masked_select) calls it by this name.
  std::string entry_name = "kernelevolve_entry";
  /// "short_reduction" == "unrolled": the reductions TritonUnrollsReduction accepts run
  /// one lane per output; else as [XBLOCK, RBLOCK] tiles like the others.
  bool unroll_short_reductions = true;
  /// "cuda_graph": the entry replays the launches as a captured CUDA graph
  /// (codegen/triton/cuda_graph_entry.h); the launches themselves are `_ke_launch`.
  bool cuda_graph = false;
};

/// What the Triton loop nest computes inside another kernel (ir/epilogue_fusion.h),
/// planned once per program (PlanTritonFusion).
struct TritonFusion {
  /// Per tl.dot main loop: its epilogue (PlanTritonMainLoopEpilogues).
  std::unordered_map<int, ir::MainLoopEpilogue> main_loops;
  /// Per reduction that is no main loop: the element kernels it computes
  /// (ir::PlanReductionEpilogues over consumers that are no main loop's epilogue).
  std::unordered_map<int, ir::ReductionEpilogue> reductions;
  /// The kernels that launch nothing of their own: every epilogue of the two maps.
  std::set<int> fused;
  /// The tensors a tl.dot main loop reads as an operand (t<a>, t<b> of a contraction,
  /// t<x>, t<w> of a convolution): stored in their own dtype even with double
  /// accumulators, since tl.dot takes no float64 operand.
  std::set<int> main_loop_operands;

  /// Whether the entry allocates a buffer for intermediate kernel `k`: not for a main
  /// loop with a fused epilogue (it stores into the epilogue's buffer), nor for a
  /// reduction whose every reader it computes itself.
  bool HasBuffer(int k) const;
  /// For a generated kernel's header: " (fused into tN's main loop)" or " (computed by
  /// tN's reduction)" where `kernel` launches nothing of its own, else "".
  std::string Note(int kernel) const;
};

TritonFusion PlanTritonFusion(const ir::KernelPlan& plan);

/// Reduced elements up to which a reduction may be unrolled (TritonUnrollsReduction).
constexpr int64_t kMaxUnrolledReduction = 32;

/// Whether the Triton loop nest may run reduction `d` (no main loop) with one lane per
/// output element walking its reduced elements by tl.static_range (knob
/// "short_reduction"): a constant count of at most kMaxUnrolledReduction that is not a
/// power of two (a 3 x 3 pooling window), which a [XBLOCK, RBLOCK] tile pads to the next
/// power of two (9 busy lanes of 16) and combines across lanes after the loop. The
/// unrolled form reads the "block" knob (outputs per program), not "block_r".
bool TritonUnrollsReduction(const ir::TensorDef& d);

/// Bytes of the intermediate buffers the entry allocates, at the type each is stored in
/// (float64 for float32 sums outside a main loop with `double_accumulator`). Sizes read
/// at run time count at the first input set's.
int64_t TritonIntermediateBytes(const ir::KernelPlan& plan, const TritonFusion& fusion, bool double_accumulator);

/// The whole Python module after the generated header: imports, the kernels and
/// kernelevolve_entry. Throws core::InternalError for a primitive without a Triton
/// spelling at its dtype.
std::string PrintLoopNestTriton(const ir::KernelPlan& plan, const TritonLoopNestSchedule& schedule);

}  // namespace kernelevolve::operators::codegen
