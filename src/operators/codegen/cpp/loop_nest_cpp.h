// The C++ printer of a kernel plan (ir/kernel_plan.h): one OpenMP loop nest per
// kernel, in order, inside the DLPack entry point (docs/abi.md); intermediates are
// heap buffers the entry owns. Element math is printed through the primitive table
// (codegen/prim_spelling.h), so this file knows loops, not ops.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "operators/codegen/cpp/gemm_cpp.h"
#include "operators/ir/epilogue_fusion.h"
#include "operators/ir/kernel_plan.h"

namespace kernelevolve::operators::codegen {

/// Schedule knobs of a loop-nest program (spelled as in the knob vocabulary).
struct LoopNestSchedule {
  bool parallel = false;       // "threads": OpenMP over the outer loops (and small full reductions)
  bool vector_math = false;    // "math": the float32 prelude (ke_exp, ...) instead of libm
  bool simd = false;           // "simd": #pragma omp simd on element-wise inner loops
  bool double_accumulator = true;  // "accumulator": float32 sums and scans accumulate in double
  /// "main_loop" = "tiled": reductions that are matrix products (ir/contraction.h) run
  /// as the packed GEMM of gemm_cpp.h with this tile (float32 accumulation); others
  /// stay loop nests. nullopt: every reduction is a loop nest.
  std::optional<GemmTile> gemm;
  /// "reduce_loop" = "outer": reductions (ReduceLoopApplies) run their reduced loops
  /// outside a vectorized block of the innermost output dim (pooling windows, sums
  /// over leading dims); "inner" (false): one output at a time, window innermost.
  bool reduce_outer = false;
};

/// A kernel with fewer loop iterations (ir::Iterations: elements times reduced
/// extents) than this runs on one thread even when "threads" is "all". An OpenMP
/// parallel-for fork/join costs microseconds (EPCC OpenMP microbenchmarks: Bull,
/// "Measuring synchronisation and scheduling overheads in OpenMP", EWOMP 1999), about
/// the work of 8192 simple iterations at ~1 ns each, so splitting fewer saves less
/// than it costs. Kernels with sizes read at run time keep their threads.
inline constexpr double kMinParallelIterations = 8192;

/// Whether the reduce_loop knob changes how `def` is printed: a reduction (not any /
/// all) with an output dim of more than one element.
bool ReduceLoopApplies(const ir::TensorDef& def);

/// The element kernels fused into a main loop's store (ir::PlanMainLoopEpilogues over
/// the kernels with a main loop), by heavy kernel; none unless `schedule.gemm` is set
/// (main_loop = tiled).
std::unordered_map<int, ir::MainLoopEpilogue> PlanCppMainLoopEpilogues(const ir::KernelPlan& plan,
                                                                       const LoopNestSchedule& schedule);

/// The body of the translation unit after the generated header: includes, ABI
/// helpers, any prelude or helper functions used, and `extern "C" int
/// kernelevolve_entry(...)`, which returns 1 for too few inputs (fewer than the
/// largest abi_index read + 1: unread state_dict tensors may follow) or another
/// output count, 2 for a
/// tensor of another dtype or device, 3 for another element count, 4 for a
/// non-dense tensor, else 0. With another `entry_name`, the same entry is a `static`
/// function of that name, for a family that runs the program as one step of its own
/// entry (families/masked_select).
std::string PrintLoopNestCpp(const ir::KernelPlan& plan, const LoopNestSchedule& schedule,
                             const std::string& entry_name = "kernelevolve_entry");

}  // namespace kernelevolve::operators::codegen
