#include "operators/ir/index_simplify.h"

#include <unordered_map>

#include "operators/ir/contraction.h"

namespace kernelevolve::operators::ir {
namespace {

/// What an int64 subexpression holds, for deciding whether AffineOf is worth a try.
struct Shape {
  bool div_or_rem = false;  // a floor division or remainder somewhere inside
  bool in_range = true;     // every var a loop index below the extents' count, no loads
};

class IndexSimplifier {
 public:
  explicit IndexSimplifier(const std::vector<int64_t>& extents) : extents_(extents) {}

  /// An index expression, simplified top-down: the largest affine subexpressions first;
  /// where the whole is not affine as written, its operands, then the whole again.
  Expr Index(const Expr& e) {
    if (!e || e->kind != ExprKind::kOp || e->dtype != core::DType::kInt64) return e;
    if (auto it = done_.find(e.get()); it != done_.end()) return it->second;
    Expr out = e;
    const Shape s = ShapeOf(e);
    if (s.div_or_rem && s.in_range) {
      if (auto affine = AffineOf(e, &extents_)) out = Rebuild(*affine);
    }
    if (out == e && s.div_or_rem) {
      std::vector<Expr> args;
      bool same = true;
      for (const Expr& a : e->args) {
        args.push_back(Index(a));
        same = same && args.back() == a;
      }
      if (!same) {
        out = Op(e->op, std::move(args), e->dtype);
        // With its operands simplified, the whole may now be affine: (29 i0 + i1) mod 29
        // once the dividend, a reshape's chain of divisions, has become 29 i0 + i1.
        if (s.in_range) {
          if (auto affine = AffineOf(out, &extents_)) out = Rebuild(*affine);
        }
      }
    }
    done_.emplace(e.get(), out);
    return out;
  }

 private:
  Shape ShapeOf(const Expr& e) {
    if (auto it = shapes_.find(e.get()); it != shapes_.end()) return it->second;
    Shape s;
    switch (e->kind) {
      case ExprKind::kConst: break;
      case ExprKind::kVar: s.in_range = !IsSizeVar(e->var) && e->var < static_cast<int>(extents_.size()); break;
      case ExprKind::kLoad: s.in_range = false; break;
      case ExprKind::kOp:
        s.div_or_rem = e->op == Prim::kFloorDiv || e->op == Prim::kRemainder;
        for (const Expr& a : e->args) {
          const Shape sa = ShapeOf(a);
          s.div_or_rem = s.div_or_rem || sa.div_or_rem;
          s.in_range = s.in_range && sa.in_range;
        }
        break;
    }
    shapes_.emplace(e.get(), s);
    return s;
  }

  static Expr Rebuild(const Affine& a) {
    Expr out;
    for (size_t v = 0; v < a.coeff.size(); ++v) {
      if (a.coeff[v] == 0) continue;
      const Expr term = IMul(Var(static_cast<int>(v)), a.coeff[v]);
      out = out ? IAdd(out, term) : term;
    }
    if (!out) return Int(a.constant);
    return a.constant == 0 ? out : IAdd(out, a.constant);
  }

  const std::vector<int64_t>& extents_;
  std::unordered_map<const ExprNode*, Expr> done_;
  std::unordered_map<const ExprNode*, Shape> shapes_;
};

}  // namespace

Expr SimplifyIndices(const Expr& body, const std::vector<int64_t>& extents) {
  if (!body) return body;
  IndexSimplifier simplifier(extents);
  Rewriter r;
  r.load = [&](const ExprNode& load, std::vector<Expr> index, Expr mask) -> Expr {
    for (Expr& i : index) i = simplifier.Index(i);
    return Load(load.tensor, load.dtype, std::move(index), std::move(mask));
  };
  return Rewrite(body, r);
}

Expr SimplifiedBody(const TensorDef& def) {
  if (!def.symbolic_shape.empty() || !def.symbolic_reduce_extents.empty()) return def.body;
  std::vector<int64_t> extents = def.shape;
  extents.insert(extents.end(), def.reduce_extents.begin(), def.reduce_extents.end());
  return SimplifyIndices(def.body, extents);
}

Expr SplitConstantTerm(const Expr& offset, int64_t* constant) {
  int64_t c = 0;
  if (IsIntConst(offset, &c) && offset->dtype == core::DType::kInt64) {
    *constant += c;
    return Int(0);
  }
  if (offset->kind != ExprKind::kOp || offset->dtype != core::DType::kInt64) return offset;
  switch (offset->op) {
    case Prim::kAdd:
    case Prim::kSub: {
      int64_t a = 0, b = 0;
      Expr ra = SplitConstantTerm(offset->args[0], &a);
      Expr rb = SplitConstantTerm(offset->args[1], &b);
      const bool add = offset->op == Prim::kAdd;
      *constant += add ? a + b : a - b;
      return Op(offset->op, {std::move(ra), std::move(rb)}, core::DType::kInt64);
    }
    case Prim::kMul: {
      int64_t factor = 0;
      for (size_t k = 0; k < 2; ++k) {
        if (!IsIntConst(offset->args[k], &factor)) continue;
        int64_t inner = 0;
        Expr rest = SplitConstantTerm(offset->args[1 - k], &inner);
        *constant += inner * factor;
        return IMul(std::move(rest), factor);
      }
      return offset;
    }
    case Prim::kNeg: {
      int64_t inner = 0;
      Expr rest = SplitConstantTerm(offset->args[0], &inner);
      *constant -= inner;
      return Op(Prim::kNeg, {std::move(rest)}, core::DType::kInt64);
    }
    default: return offset;
  }
}

}  // namespace kernelevolve::operators::ir
