// The C++ printer of the "index_add" family (families/index_add): rows of `values`
// accumulated into rows of the output, out = self; out[index[i]] += values[i]
// (torch.index_add along dim 0, which the Core ATen capture spells
// aten.index_put(self, [index], values, accumulate=True)). Two index forms:
//   - an index tensor (any order, repeats allowed): a scatter-add;
//   - segment ids repeat_interleave(arange(segments), lengths): row b of the output
//     gets the contiguous run values[offset_b : offset_b + lengths[b]] (a jagged
//     segment sum), optionally divided by max(lengths[b], 1) (segment mean).
// Every size (rows, row width, number of values, segments) is read from the DLTensor
// shapes at run time, so one kernel serves input sets of any length (docs/abi.md).
//
// Order of accumulation: every schedule below adds each output element's values in
// increasing i (self + values[i0] + values[i1] + ...), as PyTorch's CPU index_put with
// accumulate=True does on one thread (checked with torch 2.11: bit-identical in float32
// on one thread, not on two). With large values that cancel, float32 in any order can
// miss the float64 reference of the 'large' edge set by more than its tolerance, hence
// the double accumulator (the default).
#pragma once

#include <string>

#include "operators/ir/index_add.h"

namespace kernelevolve::operators::codegen {


/// `threads_all`: segments (and bucket): an OpenMP loop over output rows, `chunk` rows
/// per dynamic chunk; index tensor: each thread owns a contiguous range of output rows and
/// scans every index, applying the values that fall in its range (owner computes: no
/// atomics, and each element keeps PyTorch's order). Otherwise one thread.
/// `double_accumulator`: each output element is summed in double and rounded once
/// (within one rounding of the float64 reference even where large values cancel;
/// scratch: one row per thread, or the output's size for the direct index form), else
/// in float32 in the output itself (PyTorch's own arithmetic on one thread; its
/// multi-threaded order differs).
///
/// `bucket` (index tensor only): a counting sort of the value positions by output row
/// first (stable, O(n + rows), 8 bytes of scratch per value and 16 per row), then each
/// output row sums its own values as in a segment sum: parallel over rows (`chunk`
/// rows per dynamic chunk) and a double accumulator of one row per thread, instead of
/// scratch the size of the output.
struct IndexAddSchedule {
  bool threads_all = false;
  int chunk = 16;
  bool double_accumulator = true;
  bool bucket = false;
};

/// The complete translation unit (kernelevolve_entry). The entry returns 1 for a wrong
/// tensor count, 2 a wrong dtype or layout, 3 shapes that do not fit (values' trailing
/// dims other than the output's, self's shape other than the output's, a mean whose
/// rows differ from the segments), 5 an index outside [-rows, rows), a negative length,
/// lengths that do not sum to the number of values, or more segments than rows (PyTorch
/// raises on those), before accumulating; 6 when scratch memory cannot be allocated. `header` is pasted first.
std::string PrintIndexAddCpp(const ir::IndexAddSpec& spec, const IndexAddSchedule& schedule, const std::string& header);

}  // namespace kernelevolve::operators::codegen
