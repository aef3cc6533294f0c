// x[mask] (aten.index.Tensor with one bool index tensor over x's leading dims), matched
// once for every target: the "masked_select" family's C++ printer
// (codegen/cpp/masked_select_cpp.h) and the Triton one (codegen/triton/masked_select_triton.h)
// both take this spec and the mask's kernel plan. x is an ABI input; the mask is computed
// by any graph the loop IR lowers (a comparison, a length mask, a bool input). The
// output's length is the number of true elements, a data-dependent size (a bounded
// output, docs/abi.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "operators/ir/kernel_plan.h"

namespace kernelevolve::operators::ir {

struct MaskedSelectSpec {
  int self = -1;       // ABI input selected from, of rank `rank` (any ABI dtype: rows are copied whole)
  int rank = 1;        // its rank
  int mask_rank = 1;   // the mask covers its first mask_rank dims; the rest form a row
  int num_inputs = 0;  // ABI inputs the entry expects (at least)
};

/// A matched x[mask]: the spec and the mask's program (whose one output is the bool
/// mask of x's first mask_rank dims, sizes read at run time where the input sets'
/// sizes differ), or, when the loop IR cannot lower the mask, the lowering's reason.
struct MaskedSelectMatch {
  MaskedSelectSpec spec;
  std::optional<KernelPlan> mask_plan;  // nullopt: see `unsupported`
  std::string unsupported;
};

/// The match when `graph`'s one output is aten.index.Tensor(x, [mask]) with x an ABI
/// input and mask a bool (or uint8) tensor of x's leading dims (`shape_graphs`: the
/// graphs of the input sets of other sizes, which must have the same form); nullopt
/// otherwise (the other families are tried).
std::optional<MaskedSelectMatch> MatchMaskedSelect(const core::OpGraph& graph,
                                                   const std::vector<core::OpGraph>& shape_graphs);

}  // namespace kernelevolve::operators::ir
