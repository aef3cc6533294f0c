// Element-wise epilogues fused into the kernel they read (issues 17 and 18).
//
// Main loops: the element-wise kernel that is the one consumer of a heavy kernel (a
// matrix product or a convolution run as a tiled main loop) and reads it only at its own
// element (bias, activation, residual, clamp, a triangular mask) is applied to the
// accumulator tile as the main loop stores it, so the product needs no buffer and no
// second pass. Shared by the C++ and Triton loop-nest printers, which decide which
// kernels are heavy on their target.
//
// Reductions: every element-wise kernel that reads a reduction at its own element (max
// pooling's value and index from the argmax, average pooling's divisor, a mean's
// division) is computed by the reduction's kernel once its rows are reduced. The
// reduction is stored only where it is an output or another kernel reads it; each
// consumer still stores its own buffer. Used by the Triton loop nest, where each launch and each round trip through
// memory costs what these small kernels compute.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "operators/ir/kernel_plan.h"

namespace kernelevolve::operators::ir {

struct MainLoopEpilogue {
  int epilogue = -1;  // the element kernel fused into the heavy kernel
  /// The epilogue's body over the heavy kernel's own index vars (a consumer of another
  /// shape, such as linear's [B S, O] read as [B, S, O], is re-indexed through their
  /// common flat position); it loads the heavy kernel at its own element.
  Expr body;
};

/// Per heavy kernel of `plan` (those `heavy` accepts, not written to an output): its
/// epilogue, when its one reader is a float32 element kernel of as many elements that
/// loads it only at its own element (same flat position) and whose other loads are of
/// inputs or of kernels that run before it. Deterministic.
std::unordered_map<int, MainLoopEpilogue> PlanMainLoopEpilogues(
    const KernelPlan& plan, const std::function<bool(const TensorDef&)>& heavy);

/// For a generated kernel's header: " (fused into tN's main loop)" when `kernel` is the
/// epilogue of heavy kernel N in `epilogues`, else "".
std::string FusedIntoNote(const std::unordered_map<int, MainLoopEpilogue>& epilogues, int kernel);

struct ReductionEpilogue {
  /// The element kernels computed by the reduction's kernel, in plan order, and each
  /// one's body over the reduction's own index vars (loading the reduction only at its
  /// own element).
  std::vector<int> consumers;
  std::vector<Expr> bodies;
  /// Whether the reduction itself is stored (it is an output, or another kernel reads
  /// it); else it has no buffer.
  bool store_reduction = false;
};

/// Per reduction kernel of `plan` (a kReduce of constant shape that `eligible` accepts):
/// its epilogues, the kernels reading it that are element kernels of constant shape and
/// as many elements, load it only at its own element (a masked read too, which the
/// printer makes 0 where its mask is off), load otherwise only inputs or kernels that run
/// before the reduction, and that `eligible_consumer` accepts; reductions with none are
/// left out. Deterministic.
std::unordered_map<int, ReductionEpilogue> PlanReductionEpilogues(
    const KernelPlan& plan, const std::function<bool(const TensorDef&)>& eligible,
    const std::function<bool(const TensorDef&)>& eligible_consumer);

}  // namespace kernelevolve::operators::ir
