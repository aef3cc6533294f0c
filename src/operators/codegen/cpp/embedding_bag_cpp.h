// The C++ printer of the "embedding_bag" family (families/embedding_bag): one pooled
// embedding lookup whose sizes (rows, dim, number of indices, number of bags) are read
// from the DLTensor shapes at run time, so the kernel serves input sets of any length
// (docs/abi.md, "Shapes that vary between input sets").
#pragma once

#include <string>

namespace kernelevolve::operators::codegen {

/// What the kernel computes: torch.nn.functional.embedding_bag(indices, weight, offsets,
/// mode, per_sample_weights, include_last_offset) with the ATen defaults otherwise
/// (no padding_idx, no max_norm).
struct EmbeddingBagSpec {
  enum class Mode { kSum = 0, kMean = 1, kMax = 2 };  // ATen's mode codes
  Mode mode = Mode::kSum;
  bool include_last_offset = false;  // offsets has bags + 1 entries, the last = #indices
  int num_inputs = 0;                // ABI inputs the entry expects (at least)
  int weight = -1;                   // ABI input index: float32 [rows, dim]
  int indices = -1;                  // int64 [n], each in [0, rows)
  int offsets = -1;                  // int64 [bags] or [bags + 1], non-decreasing, in [0, n]
  int per_sample_weights = -1;       // float32 [n], or -1 (sum mode only)
};

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
std::string PrintEmbeddingBagCpp(const EmbeddingBagSpec& spec, const EmbeddingBagSchedule& schedule,
                                 const std::string& header);

}  // namespace kernelevolve::operators::codegen
