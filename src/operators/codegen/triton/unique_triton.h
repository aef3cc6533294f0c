// The Triton printer of the "unique" family (families/unique) for int64 tensors:
// torch.unique(x, sorted=True) with the inverse and the counts when asked for, by a
// counting table (O(n + max - min), no sort): the ids' range by atomic min / max, a
// histogram by atomic adds into max(4 n, 2^16) int32 slots from the least id, a stream
// compaction of the nonzero slots (compaction_triton.h) that writes the distinct values,
// their counts and each slot's rank, then the inverse as a gather of ranks. Sizes are
// read at run time, and nothing is read back to the host (no synchronization; eager's
// unique synchronizes).
//
// Outputs as for the C++ printer (codegen/cpp/unique_cpp.h, docs/abi.md): forward()'s,
// then with OUTPUT_BOUNDS one int64 [1] size tensor per values / counts output into which
// the kernels write the number of distinct values. Values past an output's length are
// never written. Ids spanning more slots than the table has are not counted: the size
// tensors read -1 and the outputs are left unwritten (the harness fails them). Wrong
// tensor counts, dtypes and shapes, and inputs of 2^31 elements or more, raise ValueError.
#pragma once

#include <string>

#include "operators/ir/unique.h"

namespace kernelevolve::operators::codegen {

struct UniqueTritonSchedule {
  int block = 1024;   // "block": elements (of the input, of the table) a program handles
  int num_warps = 4;  // "num_warps"
};

/// The whole module after `header`. Throws core::InternalError for a spec that is not
/// int64 or has no outputs.
std::string PrintUniqueTriton(const ir::UniqueSpec& spec, const UniqueTritonSchedule& schedule,
                              const std::string& header);

}  // namespace kernelevolve::operators::codegen
