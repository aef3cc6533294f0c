// Stream compaction on the GPU, shared by the Triton printers whose output length
// depends on the data (masked_select, unique) and by the segment offsets of index_add:
// per-block counts of set flags, one exclusive scan of the counts, then each block
// writes its set elements at its start plus their rank inside the block (Blelloch,
// "Prefix sums and their applications", 1990, section 1.3: the scan-then-scatter pack).
// The text is Python: @triton.jit functions named _ke_*, for a module that already
// imports triton and triton.language as tl.
#pragma once

#include <string>

namespace kernelevolve::operators::codegen {

/// Three @triton.jit functions:
///   _ke_exclusive_scan(x, out, n, BLOCK)    one program: out[0] = 0 and
///       out[i + 1] = max(x[0], 0) + ... + max(x[i], 0) (int64; x int32 or int64 [n]);
///   _ke_block_counts(flags, counts, n, BLOCK)  program b: counts[b] = the nonzero flags
///       among flags[b * BLOCK, (b + 1) * BLOCK) (int64; flags any integer or bool [n]);
///   _ke_block_ranks(chosen, starts)        inside a kernel of program b (BLOCK set
///       flags as int1): starts[b] plus each element's exclusive rank among the set ones.
std::string StreamCompactionTriton();

}  // namespace kernelevolve::operators::codegen
