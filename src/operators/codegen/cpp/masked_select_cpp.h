// The C++ printer of the "masked_select" family (families/masked_select): rows of an
// ABI input selected by a bool mask over its leading dims, x[mask] (aten.index.Tensor
// with one bool index), concatenated in order: a stream compaction whose output length
// depends on the data. The mask itself is any loop-nest program (ir/, printed by
// loop_nest_cpp.h as a static step of this entry), so `x[labels == 1]` and
// `dense[arange(L)[None] < lengths[:, None]]` share one kernel shape.
//
// Output ABI (docs/abi.md): with two outputs, output 0 is bounded (its first dim is the
// bound) and output 1 its int64 size tensor [ndim], which the kernel fills with the actual
// shape; with one output, its first dim must be the actual count (return 3 otherwise).
#pragma once

#include <string>

#include "operators/ir/masked_select.h"

namespace kernelevolve::operators::codegen {


/// `threads_all`: the mask program on all threads, and the compaction in two parallel
/// sweeps over one block of rows per thread (count, then copy at the block's prefix
/// offset); else one thread, one sweep.
struct MaskedSelectSchedule {
  bool threads_all = false;
};

/// The complete translation unit: `mask_program` (a loop-nest program whose entry is the
/// static function `ke_mask`, writing the bool mask as its one output) followed by
/// kernelevolve_entry. Returns 1 for a wrong tensor count, 2 a wrong dtype or rank, 3
/// shapes that do not fit (a row other than the input's, an exact-length output of
/// another count), 5 more selected rows than the bound holds, 6 when the mask buffer
/// cannot be allocated, or ke_mask's own code. `header` is pasted first.
std::string PrintMaskedSelectCpp(const ir::MaskedSelectSpec& spec, const MaskedSelectSchedule& schedule,
                                 const std::string& header, const std::string& mask_program);

}  // namespace kernelevolve::operators::codegen
