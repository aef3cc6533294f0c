// Python text of the triton_rowwise template: @triton.jit kernels over the [O, R, I]
// region of the loop IR and the kernelevolve_entry launcher.
#pragma once

#include <cstdint>
#include <string>

#include "operators/ir/region.h"

namespace kernelevolve::operators::templates {

/// How the region is cut into programs.
enum class TritonLayout {
  kRows,     // I == 1: a program takes `rows_per_program` rows, r along the fast axis
  kColumns,  // I > 1: a program takes one o and `block_i` columns i (coalesced), r along axis 0
  kSplit,    // I == 1: each row split over `programs_per_row` programs writing partials,
             // combined in a fixed order by a second kernel (deterministic)
};

/// One setting of the generator (from the template's knobs).
struct TritonRowwiseSettings {
  TritonLayout layout = TritonLayout::kRows;
  bool single_pass = false;       // kRows / kColumns: the whole reduced extent in one block
  int64_t block_r = 1024;         // r per step (looped and split), power of two
  int64_t rows_per_program = 1;   // kRows, single pass: power of two
  int64_t block_i = 64;           // kColumns: power of two
  int64_t programs_per_row = 64;  // kSplit
  int num_warps = 4;
  int num_stages = 1;  // software pipelining of r loops (tl.range)
  bool acc64 = false;  // sums and products accumulate in float64
};

/// Rows of the tail kernel's block and the widest block of one program (elements):
/// 16384 float32 values is 64 KiB of registers over 8 warps, the size Triton's own
/// softmax tutorial keeps in one program.
inline constexpr int64_t kTritonTailBlock = 1024;
inline constexpr int64_t kTritonMaxTile = 16384;

/// The smallest power of two >= n (1 for n <= 1).
int64_t PowerOfTwoAtLeast(int64_t n);

/// The whole candidate module (imports, kernels, kernelevolve_entry) for `region`.
/// `header` is prepended as is (comment lines). Throws InternalError for a value
/// without a Triton spelling (TritonEmitter::Unsupported() says so beforehand).
std::string TritonRowwiseModule(const ir::Region& region, const TritonRowwiseSettings& settings,
                                const std::string& header);

}  // namespace kernelevolve::operators::templates
