// The Triton printer of the "unique" family (families/unique) for int64 tensors:
// torch.unique(x, sorted=True) with the inverse and the counts when asked for, by a
// counting table over [min, max] (O(n + max - min), no sort): the ids' range by atomic
// min / max, a histogram by atomic adds, a stream compaction of the table's nonzero slots
// (compaction_triton.h) that writes the distinct values, their counts and each slot's
// rank, then the inverse as a gather of ranks. Sizes are read at run time.
//
// Outputs as for the C++ printer (codegen/cpp/unique_cpp.h, docs/abi.md): forward()'s,
// then with OUTPUT_BOUNDS one int64 [1] size tensor per values / counts output into which
// the entry writes the number of distinct values. The entry reads the range and the
// count back to the host (two synchronizations; eager's unique synchronizes too). Errors
// (a range wider than max(8 n, 2^24) values, more distinct values than a bound holds, a
// wrong dtype or shape) raise ValueError.
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
