// The Triton printer of the "sort" family (families/sort) for float32 tensors: torch.sort
// or torch.topk along one dim, one program per row (every index outside the sorted dim),
// the whole row sorted in registers by tl.sort (a bitonic network). Each element becomes
// one int64 key: an order-preserving integer image of its value in the high 32 bits
// (-0.0 equal to +0.0, every NaN above +inf; negated for a descending order) and its
// position in the low 32 bits, so that equal values keep their input order (stable) and
// the sorted keys give the indices; the values are then read back through them, bit for
// bit. Sizes are read at run time; a row longer than 16384 elements raises ValueError.
#pragma once

#include <string>

#include "operators/ir/sort.h"

namespace kernelevolve::operators::codegen {

/// The longest row one program sorts (tl.sort keeps the row in registers).
constexpr int kTritonSortMaxRow = 16384;

struct SortTritonSchedule {
  int num_warps = 8;  // "num_warps"
};

/// The whole module after `header`. Throws core::InternalError for a spec that is not
/// float32.
std::string PrintSortTriton(const ir::SortSpec& spec, const SortTritonSchedule& schedule, const std::string& header);

}  // namespace kernelevolve::operators::codegen
