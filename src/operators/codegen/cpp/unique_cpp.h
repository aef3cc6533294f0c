// The C++ printer of the "unique" family (families/unique): torch.unique(x, sorted=True)
// of a float32 or int64 tensor of any rank (aten._unique2.default: flattened, distinct
// values ascending), with the inverse map and the counts when asked for. Sizes are read
// from the DLTensor shapes at run time.
//
// Outputs, per docs/abi.md: the distinct values and their counts have a data-dependent
// length. A problem that bounds them (OUTPUT_BOUNDS) hands them over at their bound,
// followed, after every forward() output, by one int64 [1] size tensor per bounded output
// (in output order) into which the kernel writes the number of distinct values; the
// values go dense into the prefix. Without bounds each has its exact length. The inverse
// has the input's shape.
//
// Result: torch's exactly. The distinct values ascending; counts[g] the elements equal
// to value g; inverse[i] the g of element i. Float32: -0.0 and +0.0 are one value, every
// NaN a value of its own, after +inf (torch compares with !=). Where torch 2.11's CPU
// result depends on its unstable sort (which of -0.0 / +0.0 is kept, which NaN gets which
// inverse index on long inputs), these kernels take input order: the zero kept compares
// equal under any tolerance, but an inverse over several NaNs cannot be matched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "operators/ir/unique.h"

namespace kernelevolve::operators::codegen {


/// How the distinct values are found:
///   kStableSort  std::stable_sort of the positions by value (of the values themselves
///                for int64 without inverse), then one pass over the runs of equal values;
///   kIntroSort   the same with std::sort (float32: ties broken by position);
///   kRadix       LSD radix sort of order-preserving unsigned keys (with their positions
///                when the inverse needs them or the input is float32), `digit_bits`-bit
///                digits; only the passes whose digit differs between keys run (an OR of
///                every key's bits that differ from the first's: ids below 2^16 take 2
///                passes of 8 bits out of 8), their histograms counted in one sweep; stable;
///   kCounting    int64 only: a table of counts over [min, max] (one slot per value in the
///                range) when max - min < 3 n + 1024, else kRadix with 8-bit digits;
///                O(n + max - min), no sort.
/// Scratch memory (positions, keys, tables) is kept from call to call, as fresh pages
/// cost about as much as the work at these sizes; a concurrent second call takes its own.
enum class UniqueAlgorithm { kStableSort, kIntroSort, kRadix, kCounting };

/// `threads_all`: OpenMP over equal blocks of the input, one per thread: the keys, the
/// histograms and scatters of each radix pass, the block sorts and a merge split by
/// co-ranks (merge path), the runs' pass, the counting tables; else one thread.
struct UniqueSchedule {
  UniqueAlgorithm algorithm = UniqueAlgorithm::kStableSort;
  bool threads_all = false;
  int digit_bits = 8;  // kRadix: 8 or 11
};

/// "stable_sort", "introsort", "radix", "counting".
const char* UniqueAlgorithmName(UniqueAlgorithm a);

/// The complete translation unit (kernelevolve_entry). The entry returns 1 for a wrong
/// tensor count (num_outputs must be the forward() outputs, or those plus one size
/// tensor per values/counts output), 2 a wrong dtype or rank (or a tensor not on the
/// CPU), 3 a wrong output shape (the inverse not the input's, a size tensor not [1], an
/// output without a bound whose length is not the number of distinct values), 4 a
/// tensor not dense row-major, 5 more distinct values than a bound holds (PyTorch never
/// gives that: the problem's OUTPUT_BOUNDS is too small), 6 when scratch memory cannot
/// be allocated. `header` is pasted first. Throws InternalError for a spec with no
/// outputs, or kCounting on float32.
std::string PrintUniqueCpp(const ir::UniqueSpec& spec, const UniqueSchedule& schedule, const std::string& header);

}  // namespace kernelevolve::operators::codegen
