// Recognizes the reductions of a TensorProgram that are (batched) matrix products,
// so that a backend can run them with a tiled main loop instead of the plain loop
// nest (issue 18, item 1). The lowering spells mm / bmm / addmm / baddbmm / matmul /
// linear as `out[b..., i, j] = sum_k A[...] * B[...]` (lower_core_heavy.cpp); this
// file reads the operands' element strides back out of the load indices. Views that
// stay affine (transposes, permutes, expands, slices) are folded into the strides;
// anything else (reshapes through div/mod, masks, gathers) is not a contraction.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::ir {

/// out[b..., i, j] = sum_{k < K} A[a_offset + sum b_d * a_batch[d] + i * a_m + k * a_k]
///                                * B[b_offset + sum b_d * b_batch[d] + k * b_k + j * b_n]
/// over float32 operands `a` and `b` (def ids), the output dense row-major of shape
/// batch..., M, N. Strides and offsets are in elements (may be 0: broadcast).
struct Contraction {
  int a = -1, b = -1;
  /// Extents of the batch dims the operands' strides are per (empty: mm); the def's own
  /// leading dims, except that a flattened batch (b h of per-head operands) may be split
  /// into two; `out_batch` keeps the def's own (the same flat order), for the indices
  /// an epilogue reads.
  std::vector<int64_t> batch;
  std::vector<int64_t> out_batch;
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> a_batch, b_batch;  // per batch dim
  int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0;
  int64_t a_offset = 0, b_offset = 0;
};

/// A product with one row or one column (`nn.Linear` on one row): a matrix-vector
/// product, which reuses no operand element and so gains nothing from a tiled main loop.
inline bool IsMatrixVector(const Contraction& c) { return c.m == 1 || c.n == 1; }

/// The contraction `def` computes, if it is one: a float32 sum reduction over one
/// extent of rank >= 2 whose term is the product of two unmasked float32 loads with
/// affine indices, one independent of j, the other of i (when the first batch dim is
/// not affine, it is tried as two dims, u H + w, for each divisor H). nullopt otherwise.
std::optional<Contraction> MatchContraction(const TensorProgram& program, const TensorDef& def);

/// An int64 index expression as constant + sum coeff[v] * var v, if it is affine:
/// constants, vars, +, -, negation, multiplication by a constant, and the floor
/// division / remainder chains of a reshape where they cancel
/// (m * floor(x / (d m)) + floor(x / d) mod m = floor(x / d), d, m > 0; floor(x / 1) = x).
/// With `extents` (var v over [0, extents[v])), a floor division or remainder of an
/// affine x by d is also affine when the terms d does not divide stay in [0, d) over
/// those ranges: floor((d q + r) / d) = q and (d q + r) mod d = r (a permute between two
/// reshapes, as in an einsum operand). nullopt otherwise.
struct Affine {
  int64_t constant = 0;
  std::vector<int64_t> coeff;  // indexed by var number; missing entries are 0
  int64_t Coeff(int var) const { return var < static_cast<int>(coeff.size()) ? coeff[static_cast<size_t>(var)] : 0; }
};
std::optional<Affine> AffineOf(const Expr& e, const std::vector<int64_t>* extents = nullptr);
/// True when two affine forms are the same function of the vars.
bool SameAffine(const Affine& a, const Affine& b);

/// True when `load`, unmasked, reads the element of a dense tensor of `shape` whose
/// flat position is the flat position of the loop's own indices in `own_shape` (the
/// same element of a same-sized tensor, read directly or through a reshape). Vars over
/// unit dims of `own_shape` are ignored, since they are always 0.
bool ReadsOwnElement(const ExprNode& load, const std::vector<int64_t>& shape, const std::vector<int64_t>& own_shape);

}  // namespace kernelevolve::operators::ir
