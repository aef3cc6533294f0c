// The Triton printer of the "index_add" family (families/index_add): rows of `values`
// accumulated into rows of the output (ir/index_add.h), every size read from the
// tensors at run time (docs/abi.md, "Shapes that vary between input sets"; docs/gpu.md).
//   - Index form: the accumulator buffer (float64 with the double accumulator) is
//     zeroed, every value row is added to its output row with tl.atomic_add, and the
//     output is self (or the fill) plus the accumulator, rounded once. The order of the
//     atomic additions is not fixed; in float64 that changes nothing a float32 result
//     can show (PyTorch's CUDA index_add also uses atomics, in float32).
//   - Segment form: one kernel writes the offsets (an exclusive scan of the lengths in
//     one program), then one program per output row and column block sums its
//     contiguous run of values (gather rows a step, as in embedding_bag) and stores
//     self + sum, or (segment mean) that over max(length, 1), rounded once.
#pragma once

#include <string>

#include "operators/ir/index_add.h"

namespace kernelevolve::operators::codegen {

/// Knob names: docs/templates.md.
struct IndexAddTritonSchedule {
  int block = 128;                 // "block": row elements per program (a power of two)
  int gather = 8;                  // "gather": value rows per program (index) or per step (segments)
  int num_warps = 4;               // "num_warps"
  bool double_accumulator = true;  // "accumulator": float64 partial sums, rounded once
};

/// The whole Python module after `header`: the @triton.jit kernels and
/// kernelevolve_entry(inputs, outputs). The entry raises ValueError for a tensor of
/// another dtype or shape (values whose trailing dims differ from the output's, a self
/// of another shape, more segments than rows, a mean whose rows differ from the
/// segments). Value rows are read only at positions in [0, n); an index outside
/// [-rows, rows) or lengths that do not sum to n (PyTorch raises on both) never make a
/// kernel read or write past a tensor.
std::string PrintIndexAddTriton(const ir::IndexAddSpec& spec, const IndexAddTritonSchedule& schedule,
                                const std::string& header);

}  // namespace kernelevolve::operators::codegen
