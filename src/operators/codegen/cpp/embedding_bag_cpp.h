// The C++ printer of the "embedding_bag" family (families/embedding_bag): one pooled
// embedding lookup whose sizes (rows, dim, number of indices, number of bags) are read
// from the DLTensor shapes at run time, so the kernel serves input sets of any length
// (docs/abi.md, "Shapes that vary between input sets").
#pragma once

#include <string>

#include "operators/ir/embedding_bag.h"

namespace kernelevolve::operators::codegen {

/// Schedule of the kernel: `threads_all` an OpenMP loop over bags (`chunk` bags per
/// dynamic chunk) else one thread; `prefetch` > 0 prefetches the weight row of the
/// index that many positions ahead (0: none).
struct EmbeddingBagSchedule {
  bool threads_all = false;
  int chunk = 16;
  int prefetch = 0;
};

/// The complete translation unit (kernelevolve_entry). The entry returns 1 for a wrong
/// tensor count, 2 a wrong dtype or rank, 3 an output shape other than [bags, dim], 5
/// an index outside [0, rows) or offsets that are not non-decreasing within [0, n] (PyTorch
/// raises on those), before reading any weight row. `header` is pasted first.
std::string PrintEmbeddingBagCpp(const ir::EmbeddingBagSpec& spec, const EmbeddingBagSchedule& schedule,
                                 const std::string& header);

}  // namespace kernelevolve::operators::codegen
