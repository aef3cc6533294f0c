// Scaled dot-product attention (F.scaled_dot_product_attention, or its explicit
// softmax(q k^T) v spelling: attention_explicit.h), matched once from the captured
// graph for the "attention" family (codegen/cpp/attention_cpp.h). On the CPU, PyTorch
// dispatches SDPA on float32 4-d inputs of one head size to
// aten._scaled_dot_product_flash_attention_for_cpu, which the capture keeps whole
// (worker/kernelevolve_worker/core_aten.py, KEEP); every other target and every graph
// this matcher refuses lowers the same node into loop-nest kernels
// (lower_core_heavy.cpp).
#pragma once

#include <optional>
#include <string>

#include "core/op_graph.h"

namespace kernelevolve::operators::ir {

/// out[b, h, i, :] = sum_j softmax_j(scale * q[b, h, i, :] . k[b, h, j, :] + mask[b, h, i, j]) v[b, h, j, :]
/// over float32 q [B, H, L, E], k and v [B, H, S, E] (the head sizes are equal, as the
/// CPU flash kernel requires), or, with `rank` 3, q [B, L, E], k and v [B, S, E] (one
/// head: the explicit torch.bmm spelling). `causal` masks j > i (top-left aligned, as
/// torch.ones(L, S).tril()). A query row whose every key is masked gives 0, as SDPA, or
/// NaN with `masked_row_nan` (the explicit spelling, whose softmax of a row of -inf is
/// 0 / 0).
struct AttentionSpec {
  int num_inputs = 0;      // ABI inputs the entry expects (at least)
  int q = -1, k = -1, v = -1;  // ABI input indices
  int rank = 4;            // 4: [B, H, *, E]; 3: [B, *, E] (H = 1)
  /// ABI input index of the mask, or -1. `mask_bool`: a bool tensor, true = attend
  /// (the capture's where(mask, 0, -inf) is folded back), or true = masked out when
  /// `mask_inverted` (the explicit spelling's masked_fill(mask, -inf)); else a float32
  /// additive mask. Either broadcasts to [B, H, L, S] ([B, L, S] at rank 3;
  /// right-aligned, size-1 dims repeat).
  int mask = -1;
  bool mask_bool = false;
  bool mask_inverted = false;
  bool causal = false;
  /// A query row with every key masked: NaN (true: the explicit softmax(...) v spelling,
  /// as eager computes it) or 0 (false: F.scaled_dot_product_attention on the CPU).
  bool masked_row_nan = false;
  /// Softmax scale as given (any finite value, 0 and negative ones too); nullopt:
  /// PyTorch's default 1 / sqrt(E).
  std::optional<double> scale;
  /// E, the head size of the captured graph (q's last dim); the kernels read every size
  /// at run time, this one picks their drafts' tiles.
  int64_t head_dim = 0;
};

/// The spec when the graph's calls are one aten._scaled_dot_product_flash_attention_for_cpu
/// (dropout 0) on ABI inputs q [B, H, L, E], k and v [B, H, S, E] (float32; k and v with
/// q's batch and heads, so no grouped-query attention), its attention output (getitem 0)
/// the graph's only output, and its mask absent, an ABI float32 input, or the capture's
/// where(bool input, 0, -inf) (plus getitems and that where's two scalar_tensor calls);
/// or, failing that, the explicit spelling softmax(q k^T * scale + mask) v that
/// MatchExplicitAttention (attention_explicit.h) reads back; nullopt otherwise (the loop
/// nest lowers it).
std::optional<AttentionSpec> MatchAttention(const core::OpGraph& graph);

/// The mask for a generated kernel's header: "" (none), ", additive mask", ", boolean
/// mask" or ", boolean mask (true = masked out)".
std::string MaskText(const AttentionSpec& spec);

}  // namespace kernelevolve::operators::ir
