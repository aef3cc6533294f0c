// Attention spelled out, softmax(q k^T * scale + mask) v, matched back into the
// AttentionSpec of F.scaled_dot_product_attention (attention.h), so that it gets the
// same fused kernel (the CPU's attention family, Triton's triton_attention).
//
// What make_fx records for the 4-d torch.matmul spelling (the 3-d torch.bmm spelling
// has no view / expand, and its k^T is permute(k, [0, 2, 1])):
//
//   kt     = permute(k, [0, 1, 3, 2])                      [B, H, E, S]
//   qv     = view(expand(q, [B, H, L, E]), [B*H, L, E])
//   kv     = view(expand(kt, [B, H, E, S]), [B*H, E, S])
//   s      = _unsafe_view(bmm(qv, kv), [B, H, L, S])
//   s      = mul(s, c) | div(s, c)                          optional scale
//   s      = where(cond, scalar_tensor(-inf), s)            masked_fill(cond, -inf)
//          | where(cond, s, scalar_tensor(-inf))            keep where cond
//          | add(s, m)                                      additive float mask
//   p      = _softmax(s, -1, False)
//   out    = _unsafe_view(bmm(view(expand(p)), view(expand(v))), [B, H, L, E])
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/ir/attention.h"

namespace kernelevolve::operators::ir {

/// The spec of a graph that is exactly the explicit attention above, nullopt otherwise
/// (the loop nest then lowers it as it stands, correct but unfused). Accepted:
///   - q, k, v: float32 ABI inputs (placeholders or parameters), q [B, H, L, E] and k, v
///     [B, H, S, E] (rank 4) or q [B, L, E] and k, v [B, S, E] (rank 3), one B, H and E;
///   - the scores: bmm of q and permute(k) swapping its last two dims, each reached
///     through view / _unsafe_view / expand that only merge B and H (an expand that
///     broadcasts is refused) and clone;
///   - scale: mul or div by a finite constant (mul.Tensor / mul.Scalar / div.Tensor /
///     div.Scalar) on q, on k (before or after its permute) or on the scores before any
///     mask; several multiply; none means 1 (the explicit spelling has no default);
///   - masks on the scores, after the scale, in any order, at most one of each kind:
///     causal: where(cond, -inf, s) with cond the grid half-plane j > i
///       (torch.triu(ones(L, S, bool), 1), grid_predicate.h) or where(cond, s, -inf) with
///       cond j <= i (torch.tril), negations through logical_not / bitwise_not too;
///     a bool ABI input m (its rank at most the scores', broadcasting to them):
///       where(m, -inf, s) (mask_inverted: true = masked out) or where(m, s, -inf) (true =
///       attend), logical_not / bitwise_not of m flipping it;
///     an additive float32 ABI input m: add(s, m) or add(m, s) with alpha 1;
///   - _softmax over the last dim (half_to_float false), then bmm with v (no scale on
///     v), back to q's shape, the graph's only output;
///   - no other call in the graph (every call is one of the above).
/// Refused, among others: softmax over another dim, a fill other than -inf (-1e9), a
/// triangle other than the causal one (triu diagonal 0 or 2, tril diagonal 1), a mask
/// before the scale, dropout or any extra op, k^T as a computed transpose of q's layout,
/// grouped or broadcast heads, a float64 input.
std::optional<AttentionSpec> MatchExplicitAttention(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::ir
