// The Triton printer of the "attention" family (families/attention) for --target
// triton: scaled dot-product attention as one fused kernel with an online softmax
// (Milakov and Gimelshein, arXiv:1805.02867, 2018; the tiling of Dao et al.,
// "FlashAttention", NeurIPS 2022). One program per (block of query rows, batch x head):
// the q block stays in registers, key blocks are walked with a running max, a running
// sum and the output accumulator; both products are tl.dot with float32 operands, in
// IEEE float32 or as 3xTF32 (input_precision "ieee" or "tf32x3": never plain TF32; the
// knob of templates::InputPrecisionKnob), 3xTF32 either Triton's or split by the kernel
// with the query block's split hoisted out of the key loop. Sizes are read at run time.
#pragma once

#include <string>

#include "operators/ir/attention.h"

namespace kernelevolve::operators::codegen {

struct AttentionTritonSchedule {
  int block_m = 64;   // query rows a program ("BLOCK_M", >= 16 for tl.dot)
  int block_n = 64;   // keys a step ("BLOCK_N", >= 16)
  int num_warps = 4;  // "num_warps"
  int num_stages = 2; // "num_stages" (software pipelining of the key loop)
  std::string input_precision = "ieee";  // "input_precision" of both tl.dot: "ieee" or "tf32x3"
  /// With "tf32x3": the kernel splits the operands itself, q once per program
  /// ("operand_split" "hoisted"), instead of Triton's tl.dot at every product ("per_dot").
  bool split_hoisted = false;
};

/// The whole module after `header`: kernelevolve_entry(inputs, outputs) raises ValueError
/// on a wrong count, dtype, rank, layout or on shapes that do not agree.
std::string PrintAttentionTriton(const ir::AttentionSpec& spec, const AttentionTritonSchedule& schedule,
                                 const std::string& header);

}  // namespace kernelevolve::operators::codegen
