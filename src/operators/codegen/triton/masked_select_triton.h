// The Triton printer of the "masked_select" family (families/masked_select): x[mask],
// the rows of an ABI input whose mask (over its first mask_rank dims) is true,
// concatenated in order. The mask comes from a loop-nest program (ir/masked_select.h,
// printed by loop_nest_triton.h into a function of this module); the rows are then packed
// by a stream compaction (compaction_triton.h): per-block counts of the mask, one scan,
// and a copy of each selected row to its rank. Nothing is read back to the host (no
// synchronization; eager's nonzero synchronizes).
//
// Output ABI (docs/abi.md): with two outputs, output 0 is bounded (its first dim is the
// bound) and output 1 its int64 size tensor [ndim], which the kernels fill with the actual
// shape (a device-to-device copy of the count); with one output, its first dim must be
// the count. Rows past the output's first dim are never written: more selected rows than
// the bound leave a size larger than the bound (which the harness fails), fewer than an
// exact-length output leave its tail unwritten. Wrong dtypes, ranks and row shapes raise
// ValueError.
#pragma once

#include <string>

#include "operators/ir/masked_select.h"

namespace kernelevolve::operators::codegen {

struct MaskedSelectTritonSchedule {
  int block = 1024;   // "block": mask elements (rows of x) a program packs
  int num_warps = 4;  // "num_warps"
};

/// The whole module after `header`: `mask_program` (a Triton loop-nest module whose entry
/// is named `_ke_mask`, writing the bool mask as its one output), the compaction kernels
/// and kernelevolve_entry.
std::string PrintMaskedSelectTriton(const ir::MaskedSelectSpec& spec, const MaskedSelectTritonSchedule& schedule,
                                    const std::string& header, const std::string& mask_program);

}  // namespace kernelevolve::operators::codegen
