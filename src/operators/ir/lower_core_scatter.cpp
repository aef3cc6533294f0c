// Core ATen lowering rules for scatter writes: aten.scatter (src and value),
// aten.scatter_add, aten.scatter_reduce.two and aten.index_put (what index_add,
// index_copy and `x[idx] = v` / `x.index_put_(..., accumulate=True)` capture to).
//
// The loop IR has no scattered stores, so each is written in its gather form: output
// element p reduces over every scattered element j whose index names p,
//   scatter_add:  out[p] = self[p] + sum_j [index(j) == p] src[j]
//   scatter:      out[p] = src[last j with index(j) == p], or self[p] when none
// (PyTorch leaves the winner of duplicate indices unspecified; its CPU loop writes in
// order, so the last one wins, which is what this gives). O(numel(out) x numel(index))
// instead of O(numel(index)): exact and backend-neutral, fine for small scattered
// sets, slow for large ones (a real scatter kernel is the recommendation-ops issue's
// segment reductions).
#include <algorithm>

#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using V = std::vector<Expr>;
using Outs = std::vector<int>;

/// Which scattered elements land on output element p (vars 0 .. rank-1) for the
/// scatter family (torch.Tensor.scatter_*(dim, index, src)): j is var `rank` along
/// `dim`, the index tensor's other dims must cover p (index may be smaller than self).
struct ScatterSite {
  Expr match;     // bool: index[p with dim -> j] == p[dim], p inside the index's extents
  V at;           // the position of the scattered element: p with dim -> j
  Expr inside;    // p inside the index's extents outside dim (null: always)
  int64_t count;  // index.size(dim): the reduced extent
};

ScatterSite Site(CoreLowerer& l, int self, int dim, int index) {
  const auto s = l.Def(self).shape;
  const auto is = l.Def(index).shape;
  const size_t rank = s.size();
  ScatterSite site;
  site.count = is.empty() ? 1 : is[static_cast<size_t>(dim)];
  site.at = IndexVars(rank);
  for (size_t k = 0; k < rank; ++k) {
    if (static_cast<int>(k) == dim) continue;
    if (is[k] < s[k]) site.inside = And(site.inside, Op(Prim::kLt, {Var(static_cast<int>(k)), Int(is[k])}));
  }
  if (rank > 0) site.at[static_cast<size_t>(dim)] = Var(static_cast<int>(rank));
  const Expr target = Cast(l.Read(index, site.at, site.inside), DType::kInt64);
  site.match = And(site.inside, Op(Prim::kEq, {target, rank > 0 ? Var(dim) : Int(0)}));
  return site;
}

/// The scatter family's common arguments: self, the normalized dim and index.
bool ScatterArgs(CoreLowerer& l, const OpNode& n, int* self, int* dim, int* index) {
  *self = l.Tensor(n, "self");
  *index = l.Tensor(n, "index");
  if (*self < 0 || *index < 0) return false;
  const auto& s = l.Def(*self).shape;
  if (l.Def(*index).shape.size() != s.size()) {
    l.Unsupported(n, "index must have self's rank");
    return false;
  }
  *dim = s.empty() ? 0 : l.NormDim(l.IntArg(n, "dim"), s.size());
  return !l.Failed();
}

/// The last j whose index names p (var `rank` over `count`), -1 when none.
int LastMatch(CoreLowerer& l, const std::vector<int64_t>& shape, const std::vector<int64_t>& extents,
              const Expr& match, const Expr& position) {
  return l.Reduce(shape, DType::kInt64, extents, ReduceOp::kMax,
                  Op(Prim::kWhere, {match, position, Int(-1)}));
}

/// scatter.src(self, dim, index, src) / scatter.value(self, dim, index, value).
Outs Scatter(CoreLowerer& l, const OpNode& n) {
  int x, d, idx;
  if (!ScatterArgs(l, n, &x, &d, &idx)) return {};
  const auto s = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const size_t rank = s.size();
  const ScatterSite site = Site(l, x, d, idx);
  const Expr self = l.Read(x, IndexVars(rank));
  if (!CoreLowerer::IsTensor(n, "src")) {  // a value: where any index names p
    const int any = l.Reduce(s, DType::kBool, {site.count}, ReduceOp::kAny, site.match);
    const Expr value = Constant(l.Number(n, "value"), dt);
    return {l.Compute(s, dt, Op(Prim::kWhere, {l.Read(any, IndexVars(rank)), value, self}))};
  }
  const int src = l.Tensor(n, "src");
  if (src < 0) return {};
  const int last = LastMatch(l, s, {site.count}, site.match, Var(static_cast<int>(rank)));
  const Expr j = l.Read(last, IndexVars(rank));
  const Expr found = Op(Prim::kGe, {j, Int(0)});
  V at = IndexVars(rank);
  if (rank > 0) at[static_cast<size_t>(d)] = j;
  return {l.Compute(s, dt, Op(Prim::kWhere, {found, Cast(l.Read(src, at, found), dt), self}))};
}

/// scatter_add(self, dim, index, src).
Outs ScatterAdd(CoreLowerer& l, const OpNode& n) {
  int x, d, idx;
  if (!ScatterArgs(l, n, &x, &d, &idx)) return {};
  const int src = l.Tensor(n, "src");
  if (src < 0) return {};
  const auto s = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const ScatterSite site = Site(l, x, d, idx);
  const Expr term = Op(Prim::kWhere, {site.match, Cast(l.Read(src, site.at, site.inside), dt), Constant(0, dt)});
  const int sum = l.Reduce(s, dt, {site.count}, ReduceOp::kSum, term);
  const V p = IndexVars(s.size());
  return {l.Compute(s, dt, Op(Prim::kAdd, {l.Read(x, p), l.Read(sum, p)}))};
}

/// scatter_reduce.two(self, dim, index, src, reduce, include_self=True), reduce one of
/// "sum", "prod", "mean", "amax", "amin". Elements no index names keep self (PyTorch).
Outs ScatterReduce(CoreLowerer& l, const OpNode& n) {
  int x, d, idx;
  if (!ScatterArgs(l, n, &x, &d, &idx)) return {};
  const int src = l.Tensor(n, "src");
  if (src < 0) return {};
  const nlohmann::json how = CoreLowerer::Value(n, "reduce");
  const std::string reduce = how.is_string() ? how.get<std::string>() : "";
  const bool include_self = l.IntArg(n, "include_self", 1) != 0;
  const auto s = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const V p = IndexVars(s.size());
  const ScatterSite site = Site(l, x, d, idx);
  const Expr v = Cast(l.Read(src, site.at, site.inside), dt);
  const auto along = [&](ReduceOp op, const Expr& identity) {
    return l.Read(l.Reduce(s, dt, {site.count}, op, Op(Prim::kWhere, {site.match, v, identity})), p);
  };
  const Expr self = l.Read(x, p);
  const Expr count = l.Read(l.Reduce(s, DType::kInt64, {site.count}, ReduceOp::kSum, Cast(site.match, DType::kInt64)), p);
  Expr combined;
  if (reduce == "sum") {
    const Expr sum = along(ReduceOp::kSum, Constant(0, dt));
    combined = include_self ? Op(Prim::kAdd, {self, sum}) : sum;
  } else if (reduce == "prod") {
    const Expr prod = along(ReduceOp::kProd, Constant(1, dt));
    combined = include_self ? Op(Prim::kMul, {self, prod}) : prod;
  } else if (reduce == "amax" || reduce == "amin") {
    const bool max = reduce == "amax";
    const Expr m = along(max ? ReduceOp::kMax : ReduceOp::kMin, ExtremeValue(dt, max));
    combined = include_self ? Op(max ? Prim::kMaximum : Prim::kMinimum, {self, m}) : m;
  } else if (reduce == "mean") {
    const Expr sum = along(ReduceOp::kSum, Constant(0, dt));
    const Expr total = include_self ? Op(Prim::kAdd, {self, sum}) : sum;
    // At least 1: both sides of the final where are evaluated, and an integer division
    // by a zero count (an element nothing names) would trap.
    const Expr num = Cast(include_self ? IAdd(count, 1) : Op(Prim::kMaximum, {count, Int(1)}), dt);
    // Integer means round toward minus infinity (PyTorch divides with rounding_mode="floor").
    combined = Op(core::IsFloatingPoint(dt) ? Prim::kDiv : Prim::kFloorDiv, {total, num});
  } else {
    l.Unsupported(n, "reduce \"" + reduce + "\"");
    return {};
  }
  return {l.Compute(s, dt, Op(Prim::kWhere, {Op(Prim::kGt, {count, Int(0)}), combined, self}))};
}

/// index_put(self, indices, values, accumulate=False): self[indices] = values (or +=)
/// with integer index tensors (broadcast together to shape B; negative indices wrap)
/// and full slices (None) between or around them. Values broadcast to the shape of
/// self[indices], NumPy's rule: B replaces the indexed dims where they stand when they
/// are adjacent, else B comes first, followed by the other dims of self.
Outs IndexPut(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  const int vals = l.Tensor(n, "values");
  if (x < 0 || vals < 0) return {};
  const auto s = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const std::vector<int> idx = l.TensorList(n, "indices");
  if (idx.size() > s.size()) {
    l.Unsupported(n, "more indices than self's dims");
    return {};
  }
  std::vector<size_t> indexed;  // dims of self with an index tensor
  std::vector<int64_t> b;       // the broadcast shape of the index tensors
  for (size_t k = 0; k < idx.size(); ++k) {
    if (idx[k] < 0) continue;
    const DType it = l.Def(idx[k]).dtype;
    if (it == DType::kBool || it == DType::kUInt8) {
      l.Unsupported(n, "boolean mask indices (a data-dependent count)");
      return {};
    }
    indexed.push_back(k);
    const auto& ts = l.Def(idx[k]).shape;
    if (ts.size() > b.size()) b.insert(b.begin(), ts.size() - b.size(), 1);
    for (size_t j = 0; j < ts.size(); ++j) {
      int64_t& e = b[b.size() - ts.size() + j];
      if (e == 1) e = ts[j];
      else if (ts[j] != 1 && ts[j] != e) {
        l.Unsupported(n, "index tensors that do not broadcast");
        return {};
      }
    }
  }
  if (indexed.empty()) {
    l.Unsupported(n, "no index tensors");
    return {};
  }
  if (b.empty()) b.push_back(1);  // 0-d index tensors: one scattered element
  const size_t rank = s.size();
  bool adjacent = true;
  for (size_t k = 1; k < indexed.size(); ++k) adjacent = adjacent && indexed[k] == indexed[k - 1] + 1;
  // Reduced vars rank .. rank + |B| - 1 walk the broadcast index shape.
  const V bvars = IndexVars(b.size(), static_cast<int>(rank));
  Expr match;
  for (size_t k : indexed) {
    const auto& ts = l.Def(idx[k]).shape;
    V at(ts.size());
    for (size_t j = 0; j < ts.size(); ++j) at[j] = ts[j] == 1 ? Int(0) : bvars[b.size() - ts.size() + j];
    // An index outside [0, size) names no element, so its range check is not needed.
    const Expr i = IndexValue(l, idx[k], at, s[k], /*wrap=*/true).first;
    match = And(match, Op(Prim::kEq, {i, Var(static_cast<int>(k))}));
  }
  // The shape of self[indices] and a position in it for broadcast position `bpos`.
  const auto frame_index = [&](const V& bpos, std::vector<int64_t>* shape) {
    V full;
    const size_t before = adjacent ? indexed.front() : 0;
    for (size_t k = 0; k < before; ++k) full.push_back(Var(static_cast<int>(k))), shape->push_back(s[k]);
    for (size_t j = 0; j < b.size(); ++j) full.push_back(bpos[j]), shape->push_back(b[j]);
    for (size_t k = before; k < rank; ++k) {
      if (std::find(indexed.begin(), indexed.end(), k) != indexed.end()) continue;
      full.push_back(Var(static_cast<int>(k)));
      shape->push_back(s[k]);
    }
    return full;
  };
  const auto value_at = [&](const V& bpos) {
    std::vector<int64_t> shape;
    const V full = frame_index(bpos, &shape);
    const auto& vs = l.Def(vals).shape;
    if (vs.size() > shape.size()) return Expr();
    V at(vs.size());
    for (size_t k = 0; k < vs.size(); ++k) at[k] = vs[k] == 1 ? Int(0) : full[shape.size() - vs.size() + k];
    return Cast(l.Read(vals, at), dt);
  };
  const Expr v = value_at(bvars);
  if (!v) {
    l.Unsupported(n, "values of more dims than self[indices]");
    return {};
  }
  const V p = IndexVars(rank);
  const Expr self = l.Read(x, p);
  if (l.IntArg(n, "accumulate", 0) != 0) {
    if (dt == DType::kBool) {
      l.Unsupported(n, "accumulate on bool");
      return {};
    }
    const int sum = l.Reduce(s, dt, b, ReduceOp::kSum, Op(Prim::kWhere, {match, v, Constant(0, dt)}));
    return {l.Compute(s, dt, Op(Prim::kAdd, {self, l.Read(sum, p)}))};
  }
  // Without accumulate the last of duplicate indices wins (PyTorch's CPU order).
  const int last = LastMatch(l, s, b, match, FlatOffset(bvars, b));
  const Expr j = l.Read(last, p);
  const Expr found = Op(Prim::kGe, {j, Int(0)});
  const V bpos = Unflatten(Op(Prim::kWhere, {found, j, Int(0)}), b);
  return {l.Compute(s, dt, Op(Prim::kWhere, {found, value_at(bpos), self}))};
}

/// masked_scatter(self, mask, source): where the mask (broadcast to self) is true, the
/// next element of `source` in row-major order: out[p] = source.flat[c(p) - 1] with
/// c the inclusive prefix count of the mask (a scan over the flattened mask), else self.
Outs MaskedScatter(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self"), mask = l.Tensor(n, "mask"), src = l.Tensor(n, "source");
  if (x < 0 || mask < 0 || src < 0) return {};
  const auto s = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const int64_t total = Numel(s);
  const Expr flat_mask = l.ReadBroadcast(mask, s);  // at vars 0 .. rank-1
  // The inclusive count over the flattened positions (one dim of `total`).
  const int count = l.Scan({total}, DType::kInt64, 0, ScanOp::kSum,
                           Cast(SubstituteVars(flat_mask, Unflatten(Var(0), s)), DType::kInt64));
  const V p = IndexVars(s.size());
  const Expr chosen = Cast(flat_mask, DType::kBool);
  const Expr at = IAdd(l.Read(count, {FlatOffset(p, s)}), -1);
  const auto& ss = l.Def(src).shape;
  const Expr ok = And(chosen, Op(Prim::kLt, {at, Int(Numel(ss))}));
  const Expr value = Cast(l.Read(src, Unflatten(Op(Prim::kWhere, {ok, at, Int(0)}), ss), ok), dt);
  return {l.Compute(s, dt, Op(Prim::kWhere, {ok, value, l.Read(x, p)}))};
}

const std::vector<LoweringRule> kRules = {
    {"aten.scatter.src", Scatter, "reduce max of the last position whose index names the element, then where(found, read of src, self)"},
    {"aten.scatter.value", Scatter, "reduce any index naming the element, then where(any, value, self)"},
    {"aten.scatter_add.default", ScatterAdd, "reduce sum of src where the index names the element, plus self"},
    {"aten.scatter_reduce.two", ScatterReduce, "reduce (sum, prod, mean, amax, amin) of src where the index names the element, with or without self"},
    {"aten.masked_scatter.default", MaskedScatter, "scan count of the flattened mask, then where(mask, read of source at count - 1, self)"},
    {"aten.index_put.default", IndexPut, "reduce over the broadcast indices: sum of matching values (accumulate) or the last match's value, else self"},
};

}  // namespace

const std::vector<LoweringRule>& ScatterRules() { return kRules; }

}  // namespace kernelevolve::operators::ir
