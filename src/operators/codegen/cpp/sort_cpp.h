// The C++ printer of the "sort" family (families/sort): torch.sort or torch.topk along
// one dim of a float32 or int64 tensor, sizes read from the DLTensor shapes at run time
// (any length of the sorted dim; the rank is fixed).
//
// Order: torch's. Descending (largest) puts NaN first, ascending puts it last
// (docs.pytorch.org/docs/stable/generated/torch.sort.html: NaN is larger than any other
// value); -0.0 and +0.0 are equal; equal elements keep their input order (stable=True).
// Every algorithm below produces exactly that order, so values and indices are
// deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "operators/ir/sort.h"

namespace kernelevolve::operators::codegen {


/// How each row is ordered:
///   kStableSort  std::stable_sort of positions by value (merge sort, O(n log n));
///   kIntroSort   std::sort of positions with ties broken by position (same order);
///   kRadix       LSD radix sort, 8-bit digits, of order-preserving unsigned keys
///                (4 passes for float32, 8 for int64; passes whose digit is the same for
///                the whole row are skipped); stable by construction;
///   kPartialSort topk only: std::partial_sort of the first k positions;
///   kNthElement  topk only: std::nth_element around the k-th, then std::sort of the k;
///   kInsertion   topk only: one pass keeping the best k so far in a sorted buffer (an
///                element enters only when it beats the k-th: O(n) compares plus the
///                insertions, few on unordered data, O(n k) on data sorted the wrong way).
enum class SortAlgorithm { kStableSort, kIntroSort, kRadix, kPartialSort, kNthElement, kInsertion };

/// `threads_all`: an OpenMP loop over rows (every index outside the sorted dim), `chunk`
/// rows per dynamic chunk, one scratch buffer per thread; else one thread.
struct SortSchedule {
  SortAlgorithm algorithm = SortAlgorithm::kStableSort;
  bool threads_all = false;
  int chunk = 4;
};

/// "stable_sort", "introsort", "radix", "partial_sort", "nth_element", "insertion".
const char* SortAlgorithmName(SortAlgorithm a);

/// The complete translation unit (kernelevolve_entry). The entry returns 1 for a wrong
/// tensor count, 2 a wrong dtype or rank, 3 an output shape other than the input's with
/// the sorted dim replaced by k (or k larger than that dim), 4 a tensor not dense
/// row-major, 6 when scratch memory cannot be allocated. `header` is pasted first.
std::string PrintSortCpp(const ir::SortSpec& spec, const SortSchedule& schedule, const std::string& header);

}  // namespace kernelevolve::operators::codegen
