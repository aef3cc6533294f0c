#include "operators/ir/interior_split.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <utility>

namespace kernelevolve::operators::ir {
namespace {

/// a - b + shift, coefficient by coefficient.
Affine Difference(const Affine& a, const Affine& b, int64_t shift) {
  Affine out;
  out.constant = a.constant - b.constant + shift;
  out.coeff.resize(std::max(a.coeff.size(), b.coeff.size()), 0);
  for (size_t v = 0; v < out.coeff.size(); ++v) {
    out.coeff[v] = a.Coeff(static_cast<int>(v)) - b.Coeff(static_cast<int>(v));
  }
  return out;
}

/// `cmp` (lt / le / gt / ge of two int64 operands) as form >= 0, or nullopt.
std::optional<Affine> BoundOf(const ExprNode& cmp) {
  if (cmp.kind != ExprKind::kOp || cmp.args.size() != 2) return std::nullopt;
  for (const Expr& a : cmp.args) {
    if (a->dtype != core::DType::kInt64) return std::nullopt;
  }
  const auto x = AffineOf(cmp.args[0]);
  const auto y = AffineOf(cmp.args[1]);
  if (!x || !y) return std::nullopt;
  switch (cmp.op) {
    case Prim::kGe: return Difference(*x, *y, 0);
    case Prim::kGt: return Difference(*x, *y, -1);
    case Prim::kLe: return Difference(*y, *x, 0);
    case Prim::kLt: return Difference(*y, *x, -1);
    default: return std::nullopt;
  }
}

/// Adds the comparisons of the conjunction `mask` to `atoms`, each with its bound (a
/// comparison shared by several masks once); false when a part of it is not a
/// comparison BoundOf reads (true constants are skipped).
bool CollectConjunction(const Expr& mask, std::unordered_map<const ExprNode*, Affine>& atoms,
                        std::vector<MaskBound>& bounds) {
  if (mask->kind == ExprKind::kConst && mask->dtype == core::DType::kBool) return mask->ivalue != 0;
  if (mask->kind == ExprKind::kOp && mask->op == Prim::kLogicalAnd && mask->args.size() == 2) {
    return CollectConjunction(mask->args[0], atoms, bounds) && CollectConjunction(mask->args[1], atoms, bounds);
  }
  if (atoms.count(mask.get())) return true;
  auto bound = BoundOf(*mask);
  if (!bound) return false;
  atoms.emplace(mask.get(), *bound);
  bounds.push_back({std::move(*bound)});
  return true;
}

bool IsTrue(const Expr& e) { return e->kind == ExprKind::kConst && e->dtype == core::DType::kBool && e->ivalue != 0; }

/// `e` with every node of `atoms` replaced by the constant true (shared nodes stay shared).
Expr ReplaceByTrue(const Expr& root, const std::unordered_map<const ExprNode*, Affine>& atoms) {
  std::unordered_map<const ExprNode*, Expr> done;
  std::function<Expr(const Expr&)> go = [&](const Expr& e) -> Expr {
    if (!e) return e;
    if (atoms.count(e.get())) return Bool(true);
    if (auto it = done.find(e.get()); it != done.end()) return it->second;
    Expr out = e;
    if (e->kind == ExprKind::kLoad || e->kind == ExprKind::kOp) {
      std::vector<Expr> args;
      bool same = true;
      for (const Expr& a : e->args) {
        args.push_back(go(a));
        same = same && args.back() == a;
      }
      if (e->kind == ExprKind::kLoad) {
        Expr mask = go(e->mask);
        const bool always = mask && IsTrue(mask);
        if (!same || mask != e->mask) out = Load(e->tensor, e->dtype, std::move(args), always ? nullptr : mask);
      } else if (e->op == Prim::kLogicalAnd && args.size() == 2 && (IsTrue(args[0]) || IsTrue(args[1]))) {
        out = IsTrue(args[0]) ? args[1] : args[0];  // true and x = x: masks of true vanish
      } else if (!same) {
        out = Op(e->op, std::move(args), e->dtype);
      }
    }
    done.emplace(e.get(), out);
    return out;
  };
  return go(root);
}

}  // namespace

std::optional<InteriorSplit> SplitAtMaskBounds(const Expr& body) {
  std::unordered_map<const ExprNode*, Affine> atoms;
  InteriorSplit split;
  bool masked = false, readable = true;
  VisitPostOrder(body, [&](const ExprNode& n) {
    if (n.kind != ExprKind::kLoad || !n.mask) return;
    masked = true;
    readable = readable && CollectConjunction(n.mask, atoms, split.bounds);
  });
  if (!masked || !readable) return std::nullopt;
  split.interior_body = ReplaceByTrue(body, atoms);
  return split;
}

std::optional<std::vector<Affine>> ConjunctionBounds(const Expr& cond) {
  std::unordered_map<const ExprNode*, Affine> atoms;
  std::vector<MaskBound> bounds;
  if (!cond || cond->dtype != core::DType::kBool || !CollectConjunction(cond, atoms, bounds)) return std::nullopt;
  std::vector<Affine> out;
  for (MaskBound& b : bounds) out.push_back(std::move(b.form));
  return out;
}

}  // namespace kernelevolve::operators::ir
