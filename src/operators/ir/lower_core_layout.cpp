// Core ATen lowering rules for views, layout, padding, masks and indexing: each is
// an index map (or a masked, data-dependent read) from the output's indices to the
// source's, inlined into its consumers by the kernel plan.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using V = std::vector<Expr>;
using Outs = std::vector<int>;

/// Out = x's elements in row-major order with the node's shape (view, reshape, ...).
Outs Reshape(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  if (Numel(s) != Numel(n.shape)) {
    l.Unsupported(n, "element counts differ");
    return {};
  }
  const Expr flat = FlatOffset(IndexVars(n.shape.size()), n.shape);
  return {l.Compute(n.shape, n.dtype, l.Read(x, Unflatten(flat, s)))};
}

Outs Expand(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  return {l.Compute(n.shape, n.dtype, l.ReadBroadcast(x, n.shape))};
}

/// out[i_0, ..] = x[j] with j[perm[k]] = i_k.
int Permuted(CoreLowerer& l, int x, const std::vector<int>& perm, const std::vector<int64_t>& shape,
             DType dtype) {
  V index(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) index[static_cast<size_t>(perm[k])] = Var(static_cast<int>(k));
  return l.Compute(shape, dtype, l.Read(x, index));
}

Outs Permute(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const size_t rank = l.Def(x).shape.size();
  std::vector<int> perm;
  for (int64_t d : l.IntList(n, "dims")) perm.push_back(l.NormDim(d, rank));
  if (perm.size() != rank) {
    l.Unsupported(n, "dims do not list every dim");
    return {};
  }
  return {Permuted(l, x, perm, n.shape, n.dtype)};
}

Outs Transpose(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const size_t rank = l.Def(x).shape.size();
  std::vector<int> perm(rank);
  for (size_t k = 0; k < rank; ++k) perm[k] = static_cast<int>(k);
  if (rank >= 2) {
    const int a = n.Arg("dim0") ? l.NormDim(l.IntArg(n, "dim0"), rank) : 0;
    const int b = n.Arg("dim1") ? l.NormDim(l.IntArg(n, "dim1"), rank) : 1;
    std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  }
  return {Permuted(l, x, perm, n.shape, n.dtype)};
}

/// unsqueeze / squeeze: x's non-unit dims keep their order; unit dims read 0.
Outs DropOrAddUnitDims(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  // Match x's dims to the output's, skipping unit dims on either side.
  V index(s.size(), Int(0));
  size_t o = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == 1) continue;
    while (o < n.shape.size() && n.shape[o] == 1) ++o;
    if (o >= n.shape.size() || n.shape[o] != s[k]) {
      l.Unsupported(n, "the shapes do not differ by unit dims only");
      return {};
    }
    index[k] = Var(static_cast<int>(o++));
  }
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

/// select(self, dim, index): x with dim fixed at index.
Outs Select(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  int64_t i = l.IntArg(n, "index");
  if (i < 0) i += s[static_cast<size_t>(d)];
  V index;
  int o = 0;
  for (size_t k = 0; k < s.size(); ++k) index.push_back(static_cast<int>(k) == d ? Int(i) : Var(o++));
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

/// A start / end argument clamped to [0, size] as Python slicing does.
int64_t SliceBound(const OpNode& n, const std::string& name, int64_t fallback, int64_t size) {
  const auto v = CoreLowerer::Value(n, name);
  int64_t b = v.is_number_integer() ? v.get<int64_t>() : fallback;
  if (b < 0) b += size;
  return std::clamp<int64_t>(b, 0, size);
}

Outs Slice(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  const int64_t size = s[static_cast<size_t>(d)];
  const int64_t start = SliceBound(n, "start", 0, size);
  const int64_t step = l.IntArg(n, "step", 1);
  V index = IndexVars(s.size());
  index[static_cast<size_t>(d)] = IAdd(IMul(Var(d), step), start);
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

/// cat(tensors, dim): a where chain over the pieces, each read masked to its range.
Outs Cat(CoreLowerer& l, const OpNode& n) {
  std::vector<int> parts = l.TensorList(n, "tensors");
  const int d = l.NormDim(l.IntArg(n, "dim"), n.shape.size());
  std::vector<std::pair<int, int64_t>> pieces;  // def, offset
  int64_t offset = 0;
  for (int p : parts) {
    if (p < 0) continue;
    const auto s = l.Def(p).shape;
    if (s.size() != n.shape.size()) continue;  // legacy empty 1-D pieces
    pieces.push_back({p, offset});
    offset += s[static_cast<size_t>(d)];
  }
  Expr body = Constant(0, n.dtype);
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
    const int64_t len = l.Def(it->first).shape[static_cast<size_t>(d)];
    V index = IndexVars(n.shape.size());
    index[static_cast<size_t>(d)] = IAdd(Var(d), -it->second);
    const Expr inside = InRange(index[static_cast<size_t>(d)], len);
    body = Op(Prim::kWhere, {inside, Cast(l.Read(it->first, index, inside), n.dtype), body});
  }
  return {l.Compute(n.shape, n.dtype, body)};
}

/// stack(tensors, dim): the new dim picks the piece.
Outs Stack(CoreLowerer& l, const OpNode& n) {
  std::vector<int> parts = l.TensorList(n, "tensors");
  const int d = l.NormDim(l.IntArg(n, "dim"), n.shape.size());
  V index;
  for (size_t k = 0; k < n.shape.size(); ++k) {
    if (static_cast<int>(k) != d) index.push_back(Var(static_cast<int>(k)));
  }
  Expr body = Constant(0, n.dtype);
  for (size_t k = parts.size(); k-- > 0;) {
    const Expr here = Op(Prim::kEq, {Var(d), Int(static_cast<int64_t>(k))});
    body = Op(Prim::kWhere, {here, Cast(l.Read(parts[k], index, here), n.dtype), body});
  }
  return {l.Compute(n.shape, n.dtype, body)};
}

/// split_with_sizes / split / unbind / chunk: one slice per piece.
Outs Split(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  const int64_t size = s[static_cast<size_t>(d)];
  std::vector<int64_t> sizes;
  const bool unbind = n.target.find("unbind") != std::string::npos;
  if (unbind) {
    sizes.assign(static_cast<size_t>(size), 1);
  } else if (n.Arg("split_sizes") != nullptr) {
    sizes = l.IntList(n, "split_sizes");
  } else {
    const int64_t each = l.IntArg(n, "split_size", size);
    for (int64_t at = 0; at < size; at += std::max<int64_t>(each, 1)) sizes.push_back(std::min(each, size - at));
  }
  Outs outs;
  int64_t start = 0;
  for (int64_t len : sizes) {
    std::vector<int64_t> shape = s;
    V index = IndexVars(s.size());
    if (unbind) {
      shape.erase(shape.begin() + d);
      index.clear();
      int o = 0;
      for (size_t k = 0; k < s.size(); ++k) index.push_back(static_cast<int>(k) == d ? Int(start) : Var(o++));
    } else {
      shape[static_cast<size_t>(d)] = len;
      index[static_cast<size_t>(d)] = IAdd(Var(d), start);
    }
    outs.push_back(l.Compute(shape, l.Def(x).dtype, l.Read(x, index)));
    start += len;
  }
  return outs;
}

/// constant_pad_nd(self, pad, value): pad pairs from the last dim; negative pads crop.
Outs ConstantPad(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const auto pad = l.IntList(n, "pad");
  V index = IndexVars(s.size());
  Expr mask;
  for (size_t p = 0; p + 1 < pad.size() + 1 && p / 2 < s.size(); p += 2) {
    const size_t d = s.size() - 1 - p / 2;
    index[d] = IAdd(Var(static_cast<int>(d)), -pad[p]);
    mask = And(mask, InRange(index[d], s[d]));
  }
  const Expr value = Constant(l.Number(n, "value", 0), n.dtype);
  return {l.Compute(n.shape, n.dtype, mask ? Op(Prim::kWhere, {mask, l.Read(x, index, mask), value}) : l.Read(x, index))};
}

/// reflection_pad{1,2,3}d / replication_pad{1,2,3}d(self, padding).
template <bool kReflect>
Outs IndexPad(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const auto pad = l.IntList(n, "padding");
  V index = IndexVars(s.size());
  for (size_t p = 0; p + 1 < pad.size() + 1 && p / 2 < s.size(); p += 2) {
    const size_t d = s.size() - 1 - p / 2;
    const Expr src = IAdd(Var(static_cast<int>(d)), -pad[p]);
    const int64_t last = s[d] - 1;
    if (kReflect) {
      const Expr low = Op(Prim::kWhere, {Op(Prim::kLt, {src, Int(0)}), Op(Prim::kNeg, {src}), src});
      index[d] = Op(Prim::kWhere, {Op(Prim::kGt, {low, Int(last)}), IAdd(Op(Prim::kNeg, {low}), 2 * last), low});
    } else {
      index[d] = Op(Prim::kMinimum, {Op(Prim::kMaximum, {src, Int(0)}), Int(last)});
    }
  }
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

Outs Flip(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  V index = IndexVars(s.size());
  for (int64_t dim : l.IntList(n, "dims")) {
    const int d = l.NormDim(dim, s.size());
    index[static_cast<size_t>(d)] = IAdd(Op(Prim::kNeg, {Var(d)}), s[static_cast<size_t>(d)] - 1);
  }
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

/// roll(self, shifts, dims): (i - shift) mod size per dim, or over the flat tensor.
Outs Roll(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const auto shifts = l.IntList(n, "shifts");
  const auto dims = l.IntList(n, "dims");
  if (Numel(s) == 0) return {l.Compute(n.shape, n.dtype, Constant(0, n.dtype))};
  if (dims.empty()) {
    const int64_t numel = Numel(s);
    const Expr flat = FlatOffset(IndexVars(s.size()), s);
    const Expr src = IRem(IAdd(flat, numel - (shifts.at(0) % numel)), numel);
    return {l.Compute(n.shape, n.dtype, l.Read(x, Unflatten(src, s)))};
  }
  V index = IndexVars(s.size());
  for (size_t k = 0; k < dims.size() && k < shifts.size(); ++k) {
    const int d = l.NormDim(dims[k], s.size());
    const int64_t size = s[static_cast<size_t>(d)];
    index[static_cast<size_t>(d)] = IRem(IAdd(index[static_cast<size_t>(d)], size - (shifts[k] % size)), size);
  }
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

/// repeat(self, repeats): i mod size on x's (right-aligned) dims.
Outs Repeat(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  V index;
  const size_t lead = n.shape.size() - s.size();
  for (size_t k = 0; k < s.size(); ++k) index.push_back(IRem(Var(static_cast<int>(lead + k)), s[k]));
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

/// diagonal(self, offset, dim1, dim2): the remaining dims, then the diagonal.
Outs Diagonal(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const int64_t offset = l.IntArg(n, "offset", 0);
  const int d1 = l.NormDim(l.IntArg(n, "dim1", 0), s.size()), d2 = l.NormDim(l.IntArg(n, "dim2", 1), s.size());
  V index(s.size());
  int o = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    if (static_cast<int>(k) != d1 && static_cast<int>(k) != d2) index[k] = Var(o++);
  }
  const Expr diag = Var(o);
  index[static_cast<size_t>(d1)] = IAdd(diag, std::max<int64_t>(-offset, 0));
  index[static_cast<size_t>(d2)] = IAdd(diag, std::max<int64_t>(offset, 0));
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

/// as_strided(self, size, stride, storage_offset) over x's row-major elements.
Outs AsStrided(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto stride = l.IntList(n, "stride");
  Expr flat = Int(l.IntArg(n, "storage_offset", 0));
  for (size_t k = 0; k < stride.size() && k < n.shape.size(); ++k) flat = IAdd(flat, IMul(Var(static_cast<int>(k)), stride[k]));
  return {l.Compute(n.shape, n.dtype, l.Read(x, Unflatten(flat, l.Def(x).shape)))};
}

/// triu / tril(self, diagonal): x where (col - row) >= diagonal (triu) / <= (tril), else 0.
template <bool kUpper>
Outs Triangle(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const int rank = static_cast<int>(n.shape.size());
  if (rank < 2) {
    l.Unsupported(n, "needs at least 2 dims");
    return {};
  }
  const Expr diff = IAdd(Var(rank - 1), Op(Prim::kNeg, {Var(rank - 2)}));
  const Expr k = Int(l.IntArg(n, "diagonal", 0));
  const Expr keep = Op(kUpper ? Prim::kGe : Prim::kLe, {diff, k});
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {keep, l.Read(x, IndexVars(n.shape.size())), Constant(0, n.dtype)}))};
}

/// index_select(self, dim, index).
Outs IndexSelect(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self"), idx = l.Tensor(n, "index");
  if (x < 0 || idx < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  V index = IndexVars(s.size());
  auto [i, ok] = IndexValue(l, idx, {Var(d)}, s[static_cast<size_t>(d)], false);
  index[static_cast<size_t>(d)] = i;
  return {l.Compute(n.shape, n.dtype, l.Read(x, index, ok))};
}

/// gather(self, dim, index): out[i] = x[i with dim replaced by index[i]].
Outs Gather(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self"), idx = l.Tensor(n, "index");
  if (x < 0 || idx < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  V index = IndexVars(s.size());
  auto [i, ok] = IndexValue(l, idx, IndexVars(n.shape.size()), s[static_cast<size_t>(d)], false);
  index[static_cast<size_t>(d)] = i;
  return {l.Compute(n.shape, n.dtype, l.Read(x, index, ok))};
}

/// embedding(weight, indices): out[..., j] = weight[indices[...], j].
Outs Embedding(CoreLowerer& l, const OpNode& n) {
  const int w = l.Tensor(n, "weight"), idx = l.Tensor(n, "indices");
  if (w < 0 || idx < 0) return {};
  const auto ws = l.Def(w).shape;
  const int rank = static_cast<int>(n.shape.size());
  auto [i, ok] = IndexValue(l, idx, IndexVars(static_cast<size_t>(rank - 1)), ws[0], false);
  return {l.Compute(n.shape, n.dtype, l.Read(w, {i, Var(rank - 1)}, ok))};
}

/// index.Tensor(self, indices): advanced indexing with integer index tensors
/// (broadcast together); the indexed dims' result goes where the first indexed dim
/// was when they are adjacent, else first (NumPy's rule).
Outs IndexTensor(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const std::vector<int> idx = l.TensorList(n, "indices");
  std::vector<size_t> indexed;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (idx[k] < 0) continue;
    const DType dt = l.Def(idx[k]).dtype;
    if (dt == DType::kBool || dt == DType::kUInt8) {
      l.Unsupported(n, "boolean mask indexing has a data-dependent shape");
      return {};
    }
    indexed.push_back(k);
  }
  if (indexed.empty()) return {l.Compute(n.shape, n.dtype, l.Read(x, IndexVars(s.size())))};
  bool adjacent = true;
  for (size_t k = 1; k < indexed.size(); ++k) adjacent = adjacent && indexed[k] == indexed[k - 1] + 1;
  const size_t rest = s.size() - indexed.size();
  const size_t brank = n.shape.size() - rest;  // rank of the broadcast index shape
  const size_t bstart = adjacent ? indexed.front() : 0;
  V index(s.size());
  Expr mask;
  // Adjacent: the plain dims before the indexed block keep vars 0 .. bstart - 1; the
  // rest (both cases) follow the broadcast index vars.
  int o = 0;
  for (size_t k = 0; adjacent && k < indexed.front(); ++k) index[k] = Var(o++);
  // The broadcast index vars are bstart .. bstart + brank - 1.
  for (size_t k : indexed) {
    const auto is = l.Def(idx[k]).shape;
    V at(is.size());
    for (size_t j = 0; j < is.size(); ++j) {
      const int b = static_cast<int>(bstart + brank - is.size() + j);
      at[j] = is[j] == 1 ? Int(0) : Var(b);
    }
    auto [i, ok] = IndexValue(l, idx[k], at, s[k], true);
    index[k] = i;
    mask = And(mask, ok);
  }
  o = static_cast<int>(bstart + brank);
  for (size_t k = 0; k < s.size(); ++k) {
    if (!index[k]) index[k] = Var(o++);
  }
  return {l.Compute(n.shape, n.dtype, l.Read(x, index, mask))};
}

/// select_scatter(self, src, dim, index): src where dim == index, else self.
Outs SelectScatter(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self"), src = l.Tensor(n, "src");
  if (x < 0 || src < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  int64_t i = l.IntArg(n, "index");
  if (i < 0) i += s[static_cast<size_t>(d)];
  V at;
  for (size_t k = 0; k < s.size(); ++k) {
    if (static_cast<int>(k) != d) at.push_back(Var(static_cast<int>(k)));
  }
  const Expr here = Op(Prim::kEq, {Var(d), Int(i)});
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {here, Cast(l.Read(src, at, here), n.dtype), l.Read(x, IndexVars(s.size()))}))};
}

/// slice_scatter(self, src, dim, start, end, step): src at start + k step along dim.
Outs SliceScatter(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self"), src = l.Tensor(n, "src");
  if (x < 0 || src < 0) return {};
  const auto s = l.Def(x).shape;
  const auto ss = l.Def(src).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  const int64_t start = SliceBound(n, "start", 0, s[static_cast<size_t>(d)]);
  const int64_t step = std::max<int64_t>(l.IntArg(n, "step", 1), 1);
  const Expr rel = IAdd(Var(d), -start);
  const Expr k = IFloorDiv(rel, step);
  const Expr inside = Op(Prim::kLogicalAnd, {InRange(k, ss[static_cast<size_t>(d)]),
                                             Op(Prim::kEq, {IRem(rel, step), Int(0)})});
  V at = IndexVars(s.size());
  at[static_cast<size_t>(d)] = k;
  const Expr inside_all = Op(Prim::kLogicalAnd, {inside, Op(Prim::kGe, {rel, Int(0)})});
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {inside_all, Cast(l.Read(src, at, inside_all), n.dtype), l.Read(x, IndexVars(s.size()))}))};
}

/// upsample_nearest{1,2,3}d: src = min(floor(dst * in / out), in - 1) per spatial dim
/// (torch's "nearest" mode; scale factors given as arguments use 1 / scale).
Outs UpsampleNearest(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "input");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  std::vector<double> scales;
  const auto sf = CoreLowerer::Value(n, "scale_factors");
  if (sf.is_array()) {
    for (const auto& v : sf) scales.push_back(v.get<double>());
  }
  V index = IndexVars(s.size());
  for (size_t d = 2; d < s.size(); ++d) {
    const double scale = scales.size() == s.size() - 2 ? 1.0 / scales[d - 2]
                                                       : static_cast<double>(s[d]) / static_cast<double>(n.shape[d]);
    const Expr src = Cast(Op(Prim::kFloor, {Op(Prim::kMul, {Cast(Var(static_cast<int>(d)), DType::kFloat32), Float(scale)})}), DType::kInt64);
    index[d] = Op(Prim::kMinimum, {src, Int(s[d] - 1)});
  }
  return {l.Compute(n.shape, n.dtype, l.Read(x, index))};
}

const std::vector<LoweringRule> kRules = {
    {"aten.view.default", Reshape, "index map: row-major reshape"},
    {"aten._unsafe_view.default", Reshape, "index map: row-major reshape"},
    {"aten.reshape.default", Reshape, "index map: row-major reshape"},
    {"aten.view_copy.default", Reshape, "index map: row-major reshape"},
    {"aten.flatten.using_ints", Reshape, "index map: row-major reshape"},
    {"aten.expand.default", Expand, "index map: broadcast"},
    {"aten.expand_copy.default", Expand, "index map: broadcast"},
    {"aten.permute.default", Permute, "index map: permutation"},
    {"aten.permute_copy.default", Permute, "index map: permutation"},
    {"aten.t.default", Transpose, "index map: swap the two dims"},
    {"aten.transpose.int", Transpose, "index map: swap two dims"},
    {"aten.transpose_.default", Transpose,
     "index map: swap two dims (the in-place spelling nn.GRU / nn.RNN with batch_first record; the graph's later "
     "uses read the node)"},
    {"aten.unsqueeze.default", DropOrAddUnitDims, "index map: unit dim added"},
    {"aten.unsqueeze_copy.default", DropOrAddUnitDims, "index map: unit dim added"},
    {"aten.squeeze.default", DropOrAddUnitDims, "index map: unit dims dropped"},
    {"aten.squeeze.dim", DropOrAddUnitDims, "index map: unit dim dropped"},
    {"aten.squeeze.dims", DropOrAddUnitDims, "index map: unit dims dropped"},
    {"aten.squeeze_copy.dims", DropOrAddUnitDims, "index map: unit dims dropped"},
    {"aten.select.int", Select, "index map: one dim fixed"},
    {"aten.select_copy.int", Select, "index map: one dim fixed"},
    {"aten.slice.Tensor", Slice, "index map: start + i step"},
    {"aten.slice_copy.Tensor", Slice, "index map: start + i step"},
    {"aten.narrow.default", Slice, "index map: start + i"},
    {"aten.cat.default", Cat, "masked reads, one per piece, in a where chain"},
    {"aten.stack.default", Stack, "masked reads, one per piece, in a where chain"},
    {"aten.split_with_sizes.default", Split, "index maps: one slice per piece"},
    {"aten.split.Tensor", Split, "index maps: one slice per piece"},
    {"aten.unbind.int", Split, "index maps: one select per piece"},
    {"aten.constant_pad_nd.default", ConstantPad, "masked read, the value outside"},
    {"aten.reflection_pad1d.default", IndexPad<true>, "index map: reflected"},
    {"aten.reflection_pad2d.default", IndexPad<true>, "index map: reflected"},
    {"aten.reflection_pad3d.default", IndexPad<true>, "index map: reflected"},
    {"aten.replication_pad1d.default", IndexPad<false>, "index map: clamped"},
    {"aten.replication_pad2d.default", IndexPad<false>, "index map: clamped"},
    {"aten.replication_pad3d.default", IndexPad<false>, "index map: clamped"},
    {"aten.flip.default", Flip, "index map: size - 1 - i"},
    {"aten.roll.default", Roll, "index map: (i - shift) mod size"},
    {"aten.repeat.default", Repeat, "index map: i mod size"},
    {"aten.diagonal.default", Diagonal, "index map: the diagonal"},
    {"aten.diagonal_copy.default", Diagonal, "index map: the diagonal"},
    {"aten.as_strided.default", AsStrided, "index map: storage offset + sum i stride"},
    {"aten.as_strided_copy.default", AsStrided, "index map: storage offset + sum i stride"},
    {"aten.triu.default", Triangle<true>, "element: where(col - row >= k, x, 0)"},
    {"aten.tril.default", Triangle<false>, "element: where(col - row <= k, x, 0)"},
    {"aten.index_select.default", IndexSelect, "data-dependent read, masked to the table"},
    {"aten.gather.default", Gather, "data-dependent read, masked to the table"},
    {"aten.embedding.default", Embedding, "data-dependent read of rows, masked to the table"},
    {"aten.index.Tensor", IndexTensor, "data-dependent read (integer indices, broadcast), masked"},
    {"aten.select_scatter.default", SelectScatter, "element: where(index matches, masked read of src, self)"},
    {"aten.slice_scatter.default", SliceScatter, "element: where(on the slice, masked read of src, self)"},
    {"aten.upsample_nearest1d.vec", UpsampleNearest, "index map: floor(dst in / out)"},
    {"aten.upsample_nearest2d.vec", UpsampleNearest, "index map: floor(dst in / out)"},
    {"aten.upsample_nearest2d.default", UpsampleNearest, "index map: floor(dst in / out)"},
    {"aten.upsample_nearest3d.vec", UpsampleNearest, "index map: floor(dst in / out)"},
};

}  // namespace

std::pair<Expr, Expr> IndexValue(CoreLowerer& l, int index_def, V at, int64_t size, bool wrap) {
  Expr i = Cast(l.Read(index_def, std::move(at)), DType::kInt64);
  if (wrap) i = Op(Prim::kWhere, {Op(Prim::kLt, {i, Int(0)}), IAdd(i, size), i});
  return {i, InRange(i, size)};
}

const std::vector<LoweringRule>& LayoutRules() { return kRules; }

}  // namespace kernelevolve::operators::ir
