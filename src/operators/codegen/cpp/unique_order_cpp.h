// The orderings of the unique printer (unique_cpp.cpp): the generated functions that put
// the input in ascending order before the runs of equal values are read off. Each piece
// is C++ text pasted into the kernel after the shared helpers (T, Key, ke_key, ke_value,
// ke_before, ke_same, ke_blocks, ke_edge, KeScratch, KeOut, ke_write_groups).
#pragma once

#include <string>

#include "operators/codegen/cpp/unique_cpp.h"

namespace kernelevolve::operators::codegen {

/// What the printer needs of a spec and a schedule.
struct UniqueParts {
  bool is_float = false;
  bool values = false;   // the distinct values are returned
  bool inverse = false;  // the inverse is returned
  bool counts = false;   // the counts are returned
  bool with_pos = false;  // positions travel with the order (inverse, or float32's -0.0 / NaN)
  bool threads_all = false;
};

/// ke_sort_blocks and `int ke_unique_sort(x, n, o, scratch)`: positions (int64 without
/// positions: the values) sorted by std::stable_sort (`a` kStableSort) or std::sort
/// (kIntroSort; float32 ties broken by position), one block per thread then merged at
/// co-ranks, then ke_write_groups.
std::string PrintUniqueSortSource(const UniqueParts& parts, UniqueAlgorithm a);

/// ke_radix_sort and `int ke_unique_radix(x, n, o, scratch)`: LSD radix sort of the keys
/// (and positions) with `digit_bits`-bit digits, only the passes whose digit differs
/// between keys, then ke_write_groups.
std::string PrintUniqueRadixSource(const UniqueParts& parts, int digit_bits);

}  // namespace kernelevolve::operators::codegen
