// Partition of a TensorProgram into kernels (issue 17, item 3): reductions, scans and
// outputs are materialized; element-wise definitions (views, masks, math) are inlined
// into their consumers, except when an inlined body would grow past a size limit or
// when its math would be recomputed many times per element by its consumers together
// (a matmul reading relu(x) N times per element; an LSTM's cell state that every later
// step would compute again), or when a reduction is a matrix
// product or a convolution only if its operands are read from dense buffers (an
// attention in-projection whose rows a transpose and a reshape permute). An output
// that only reshapes another computed definition is that definition, written into the
// output buffer. Definitions no output reads are dropped (not computed, no buffer).
// Every backend prints the plan's kernels in order; the entry owns the intermediate
// buffers.
#pragma once

#include <vector>

#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::ir {

struct PlanOptions {
  /// A definition whose inlined body has more distinct nodes is materialized.
  int max_inline_nodes = 400;
  /// A definition with value math is materialized when its consumers together iterate
  /// more than this many times per element of it (a heavy consumer, or several that
  /// would each compute it again).
  double max_recompute = 2.0;
};

struct KernelPlan {
  /// The program with every body rewritten to load only materialized definitions;
  /// outputs are distinct, non-input definitions (copies added where needed).
  TensorProgram program;
  std::vector<bool> materialized;  // per def (inputs: true; dead defs: false)
  std::vector<int> kernels;        // the materialized non-input defs outputs read, in order
  /// Per def: the output position it is written to, or -1 (an intermediate buffer).
  std::vector<int> output_slot;
};

/// Plans the kernels of `program`. Deterministic.
KernelPlan PlanKernels(TensorProgram program, const PlanOptions& options = {});

/// Whether a backend runs `def` as a tiled main loop: a matrix product other than a
/// matrix-vector one (contraction.h), or a convolution (convolution.h).
bool HasMainLoop(const TensorProgram& program, const TensorDef& def);

/// Iterations of a definition's loop nest: elements times reduced extents.
double Iterations(const TensorDef& def);

/// Whether `def` sums or multiplies float32 values (a kReduce of kSum / kProd, or a
/// kScan of kSum / kProd): the definitions an "accumulator" knob (float or double
/// partial results) acts on.
bool AccumulatesFloat32(const TensorDef& def);

}  // namespace kernelevolve::operators::ir
