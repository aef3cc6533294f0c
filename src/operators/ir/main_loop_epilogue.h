// Epilogues fused into main loops (issue 18): the element-wise kernel that is the one
// consumer of a heavy kernel (a matrix product or a convolution run as a tiled main
// loop) and reads it only at its own element (bias, activation, residual, clamp, a
// triangular mask) is applied to the accumulator tile as the main loop stores it, so
// the product needs no buffer and no second pass. Shared by the C++ and Triton
// loop-nest printers, which decide which kernels are heavy on their target.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>

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

}  // namespace kernelevolve::operators::ir
