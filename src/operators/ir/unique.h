// One torch.unique(x, sorted=True) (aten._unique2.default), matched once for every
// target: the "unique" family's C++ printer (codegen/cpp/unique_cpp.h) and the Triton one
// (codegen/triton/unique_triton.h) both take this spec. The distinct values and counts
// have a data-dependent length (bounded outputs, docs/abi.md); the inverse has the
// input's shape.
#pragma once

#include <optional>
#include <vector>

#include "core/dtype.h"
#include "core/op_graph.h"

namespace kernelevolve::operators::ir {

/// What an output of aten._unique2 is (its getitem index).
enum class UniqueOutput { kValues = 0, kInverse = 1, kCounts = 2 };

struct UniqueSpec {
  core::DType dtype = core::DType::kInt64;  // float32 or int64
  int input = 0;       // ABI input index of the tensor
  int rank = 1;        // its rank (>= 0; it is flattened)
  int num_inputs = 1;  // ABI inputs the entry expects (at least)
  /// The forward() outputs in order, each a different one of the three.
  std::vector<UniqueOutput> outputs;
};

/// The spec when `graph`'s only call is aten._unique2.default with sorted=True (constant
/// flags) of a float32 or int64 ABI input, and every output is a different one of its
/// distinct values (getitem 0), inverse (1, only with return_inverse) or counts (2, only
/// with return_counts); nullopt otherwise.
std::optional<UniqueSpec> MatchUnique(const core::OpGraph& graph);

/// "unique" / "inverse" / "counts".
const char* UniqueOutputName(UniqueOutput o);

}  // namespace kernelevolve::operators::ir
