// The Triton printer of the "embedding_bag" family (families/embedding_bag): one pooled
// embedding lookup whose sizes (rows, dim, number of indices, number of bags) are read
// from the tensors at run time, so the kernel serves input sets of any length
// (docs/abi.md, "Shapes that vary between input sets"; docs/gpu.md).
#pragma once

#include <string>

#include "operators/ir/embedding_bag.h"

namespace kernelevolve::operators::codegen {

/// Schedule of the kernel. A program pools `bags` consecutive bags (one after the
/// other) over `block` columns of the embedding dim; each step gathers `gather` indices
/// of the bag at once, so `gather` weight rows are in flight per step (the GPU's way
/// of hiding a gather's latency, where the CPU prefetches). Knob names: docs/templates.md.
struct EmbeddingBagTritonSchedule {
  int block = 128;    // "block": embedding columns per program (a power of two)
  int gather = 8;     // "gather": indices gathered per step (a power of two)
  int bags = 1;       // "block_rows": bags per program
  int num_warps = 4;  // "num_warps"
};

/// The whole Python module after `header`: the @triton.jit kernel and
/// kernelevolve_entry(inputs, outputs). The entry raises ValueError for a tensor of
/// another dtype or rank or an output other than [bags, dim]. Weight rows are read only
/// for indices in [0, rows) and positions in [0, n) (others count as absent), so
/// offsets or indices out of range never read past the tensors; PyTorch raises on them.
std::string PrintEmbeddingBagTriton(const ir::EmbeddingBagSpec& spec, const EmbeddingBagTritonSchedule& schedule,
                                    const std::string& header);

}  // namespace kernelevolve::operators::codegen
