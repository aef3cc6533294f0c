// The C++ printer of the "attention" family (families/attention): scaled dot-product
// attention as one fused kernel with an online softmax, so the [L, S] score matrix is
// never stored: per (batch, head, block of query rows) a running max, a running sum
// and an output accumulator are updated block of keys by block of keys (the online
// normalizer of Milakov and Gimelshein, "Online normalizer calculation for softmax",
// arXiv:1805.02867, 2018; tiled as in Dao et al., "FlashAttention", NeurIPS 2022).
// Every size is read from the DLTensor shapes at run time.
#pragma once

#include <string>

#include "operators/ir/attention.h"

namespace kernelevolve::operators::codegen {

/// `threads_all`: an OpenMP loop over (batch x head x query block) tasks, else one
/// thread. `block_m` query rows (rounded up to whole vectors of `lanes`; transposed and
/// scaled once per task, [E, block_m] floats) walk the keys `block_n` at a time; the
/// scores of a block are held transposed, [block_n, block_m], so that the softmax runs
/// along query vectors. q k^T runs up to 8 keys x 4 query vectors in registers, P v 4
/// query rows x up to 4 vectors of the head dim (24 accumulators at most with 16 lanes,
/// 12 with 8).
struct AttentionSchedule {
  bool threads_all = false;
  int block_m = 32;
  int block_n = 64;  // rounded up to a multiple of 2 `lanes`
  int lanes = 8;     // float32 lanes of one machine vector (8: AVX2, 16: AVX-512)
};

/// The complete translation unit (kernelevolve_entry). Float32 math: scores, softmax
/// and the accumulator in float32 (as PyTorch's CPU flash kernel for float32), exp
/// from the math prelude (ke_exp). The entry returns 1 for a wrong tensor count, 2 a
/// wrong dtype, rank or layout, 3 shapes that do not agree (k, v [B, H, S, E]; y [B,
/// H, L, E]; a mask that does not broadcast to [B, H, L, S]). `header` is pasted first.
std::string PrintAttentionCpp(const ir::AttentionSpec& spec, const AttentionSchedule& schedule,
                              const std::string& header);

}  // namespace kernelevolve::operators::codegen
