// Sizes read at run time (issue 19): a TensorProgram lowered from the first input set's
// graph has that set's sizes as constants. When inputs have other sizes on other input
// sets (jagged values, a batch of varying length), the same graph lowered from those
// sets' shapes gives programs of the same structure whose size constants differ; the
// constants that differ are the ones that depend on input sizes. Generalize compares
// the programs node by node and replaces each such constant c by a * s + b, where s is
// an input size that differs between the sets (a size symbol, SizeVar) and a, b are
// integers that reproduce c on every set (anti-unification of the traces; each
// constant is checked on every set given). The result serves any size for which the
// captured graph's structure stays the same. Sizes PyTorch computes in Python from
// input sizes (`values.shape[0] - 1` in a clamp) are covered too: they are constants of
// the graph that differ between sets.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::ir {

struct GeneralizeResult {
  std::optional<TensorProgram> program;  // with symbols, symbolic extents and bodies
  std::string unsupported;               // "unsupported_graph: ..." when !program
};

/// `first` generalized against `others` (the same graph lowered from other input sets'
/// shapes). Symbols are the dims of ABI inputs whose size differs between the
/// programs; dims with the same sizes on every set share one symbol. A program of
/// another structure, a float constant that differs, or an integer constant that is
/// no affine function of one symbol is refused with the place named. With `others`
/// empty, `first` comes back unchanged.
GeneralizeResult Generalize(const TensorProgram& first, const std::vector<TensorProgram>& others);

/// LowerCore of `graph` and of every graph in `shape_graphs` (the same reference
/// captured from input sets of other sizes), then Generalize; the first refusal
/// (LowerCore's or Generalize's reason) when any step refuses.
GeneralizeResult LowerGeneralized(const core::OpGraph& graph, const std::vector<core::OpGraph>& shape_graphs);

}  // namespace kernelevolve::operators::ir
