// Family "loop_nest": any graph LowerCore accepts, as a program of plain loop-nest
// kernels (ir/kernel_plan.h) printed in C++ (codegen/cpp/loop_nest_cpp.h). The
// template operator's last resort after the specialized families, so that every
// captured Core ATen graph gets a correct kernel; its knobs are schedule knobs.
#pragma once

#include <algorithm>
#include <cstddef>

#include "operators/ir/kernel_plan.h"
#include "operators/ir/loop_ir.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

/// A program whose kernels run fewer loop iterations in all (ir::Iterations summed)
/// than kSmallProgramIterations, and fewer than kSmallKernelIterations per kernel on
/// average, gets its heavy draft on one thread first: at ~1 ns per iteration the
/// program is about 4 ms of scalar work and well under 1 ms in the tiled main loops,
/// and each kernel (one parallel region) a few microseconds of GEMM work, so a
/// whole-layer graph of tens of kernels spends a large share in the fork and join of
/// their parallel regions, and on a machine whose cores are busy each region waits for
/// a descheduled thread (measured on the 2-vCPU development VM under load, 2026-12-05:
/// a 28-kernel transformer encoder layer, ~90K iterations per kernel, at 8.6 ms on one
/// thread against 100 ms on two). A program of few larger kernels (one batched product
/// of 4M multiply-adds) gets all threads first, and so does one of fewer than
/// kManyKernels kernels of kGrainIterations or more each on average: the fork and join
/// are paid once per kernel, and a few of them cost less than the second thread saves
/// (max_pool2d_indices, 3 kernels of 120K iterations on average: 0.78x of eager on one
/// thread, 1.54x on two, same VM, 2026-12-06).
inline constexpr double kSmallProgramIterations = 1 << 22;
inline constexpr double kSmallKernelIterations = 1 << 18;
inline constexpr size_t kManyKernels = 8;
/// ATen's own threshold for splitting a loop over threads (at::internal::GRAIN_SIZE,
/// 32768 elements, aten/src/ATen/Parallel.h): a kernel of fewer iterations on average
/// is not worth a parallel region.
inline constexpr double kGrainIterations = 32768;

/// Whether a program of `kernels` kernels and `iterations` loop iterations in all gets
/// its heavy draft on one thread before all threads (the rule above).
inline bool HeavyDraftOnOneThreadFirst(size_t kernels, double iterations) {
  const double per_kernel = iterations / static_cast<double>(std::max<size_t>(1, kernels));
  return iterations < kSmallProgramIterations && per_kernel < kSmallKernelIterations &&
         (kernels >= kManyKernels || per_kernel < kGrainIterations);
}

class LoopNestTemplate : public templates::KernelTemplate {
 public:
  /// `plan`: the planned program; `multithread` false drops threads = "all";
  /// `vector_lanes`: float32 lanes of the machine's vectors (the GEMM tile's width).
  LoopNestTemplate(ir::KernelPlan plan, bool multithread, int vector_lanes = 8);

  std::string Name() const override { return "loop_nest"; }
  const templates::KnobSpace& Space() const override { return space_; }
  /// Baseline (1 thread, libm, no simd, double accumulators) first; with a matrix
  /// product, a convolution or a row-blockable reduction, then the vectorized prelude,
  /// `omp simd`, main_loop "tiled" and / or reduce_loop "outer" on all threads (on one
  /// thread first, then on all, where HeavyDraftOnOneThreadFirst);
  /// then all threads; then all threads with the vectorized prelude and `omp simd`
  /// inner loops.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

  const ir::KernelPlan& Plan() const { return plan_; }

 private:
  ir::KernelPlan plan_;
  bool multithread_;
  int vector_lanes_;
  bool has_contraction_;
  bool has_row_blockable_;  // a reduction reduce_loop acts on (pooling windows, ...)
  double iterations_;       // loop iterations of every kernel of the plan, summed
  templates::KnobSpace space_;
};

/// The loop-nest template of `graph`, or the reason LowerCore gives. `shape_graphs`:
/// the same reference captured from input sets whose inputs have other sizes
/// (core::Problem::shape_graphs); the program then reads those sizes at run time
/// (ir/generalize.h), or the match is refused with the reason Generalize gives.
templates::TemplateMatch MatchLoopNest(const core::OpGraph& graph, bool multithread, int vector_lanes = 8,
                                       const std::vector<core::OpGraph>& shape_graphs = {});

/// Knobs of "loop_nest": threads {"1", "all"}, math {"libm", "vectorized"}, simd
/// {"off", "on"}; when the program sums or scans float32 values, accumulator
/// {"float64", "float32"}; when it has a matrix product (ir/contraction.h) or a
/// convolution (ir/convolution.h), main_loop {"loops", "tiled"} (the packed GEMM of
/// codegen/cpp/gemm_cpp.h, implicit for convolutions: conv_cpp.h) with its register
/// tile {"6x2", "4x3"} (rows x vectors; "8x3" too with 16-lane vectors, where the
/// 32 registers hold 24 accumulators) and K panel depth block_k {256, 512}. With
/// `accumulation_only_in_main_loops` (every float32 sum is such a product), the
/// accumulator knob exists only under main_loop "loops": the tiled main loops
/// accumulate in float32 (as BLAS) whatever it says. With `row_blockable` (a reduction
/// other than those main loops with an output dim of more than one element: pooling,
/// sums over leading dims), reduce_loop {"inner", "outer"} (codegen/cpp/loop_nest_cpp.h).
templates::KnobSpace LoopNestKnobSpace(bool multithread, bool float_accumulation, bool contraction = false,
                                       int vector_lanes = 8, bool accumulation_only_in_main_loops = false,
                                       bool row_blockable = false);

}  // namespace kernelevolve::operators::families
