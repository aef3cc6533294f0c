#include "operators/ir/expr.h"

#include <fmt/format.h>

#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;

Expr Make(ExprNode n) { return std::make_shared<const ExprNode>(std::move(n)); }

/// Floor division and Python remainder of int64 values (b != 0).
int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t PyRem(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

/// Folds an int64 op over constants; nullptr when it does not fold.
Expr FoldInt(Prim op, const std::vector<Expr>& args, DType dtype) {
  if (dtype != DType::kInt64) return nullptr;
  int64_t a = 0, b = 0;
  const bool ca = IsIntConst(args[0], &a);
  const bool cb = args.size() > 1 && IsIntConst(args[1], &b);
  switch (op) {
    case Prim::kAdd:
      if (ca && cb) return Int(a + b);
      if (ca && a == 0) return args[1];
      if (cb && b == 0) return args[0];
      return nullptr;
    case Prim::kSub:
      if (ca && cb) return Int(a - b);
      if (cb && b == 0) return args[0];
      return nullptr;
    case Prim::kMul:
      if (ca && cb) return Int(a * b);
      if ((ca && a == 0) || (cb && b == 0)) return Int(0);
      if (ca && a == 1) return args[1];
      if (cb && b == 1) return args[0];
      return nullptr;
    case Prim::kFloorDiv:
      if (ca && cb && b != 0) return Int(FloorDiv(a, b));
      if (cb && b == 1) return args[0];
      return nullptr;
    case Prim::kRemainder:
      if (ca && cb && b != 0) return Int(PyRem(a, b));
      if (cb && b == 1) return Int(0);
      return nullptr;
    case Prim::kNeg:
      if (ca) return Int(-a);
      return nullptr;
    case Prim::kMaximum:
      if (ca && cb) return Int(std::max(a, b));
      return nullptr;
    case Prim::kMinimum:
      if (ca && cb) return Int(std::min(a, b));
      return nullptr;
    default:
      return nullptr;
  }
}

}  // namespace

Expr Float(double value, DType dtype) {
  ExprNode n;
  n.kind = ExprKind::kConst;
  n.dtype = dtype;
  n.fvalue = value;
  return Make(std::move(n));
}

Expr Int(int64_t value, DType dtype) {
  ExprNode n;
  n.kind = ExprKind::kConst;
  n.dtype = dtype;
  n.ivalue = value;
  return Make(std::move(n));
}

Expr Bool(bool value) { return Int(value ? 1 : 0, DType::kBool); }

Expr Constant(double value, DType dtype) {
  if (core::IsFloatingPoint(dtype)) return Float(value, dtype);
  if (dtype == DType::kBool) return Bool(value != 0);
  return Int(static_cast<int64_t>(value), dtype);
}

Expr Var(int k) {
  ExprNode n;
  n.kind = ExprKind::kVar;
  n.dtype = DType::kInt64;
  n.var = k;
  return Make(std::move(n));
}

Expr SizeVar(int k) { return Var(kFirstSizeVar + k); }

Expr Load(int tensor, DType dtype, std::vector<Expr> index, Expr mask) {
  ExprNode n;
  n.kind = ExprKind::kLoad;
  n.dtype = dtype;
  n.tensor = tensor;
  n.args = std::move(index);
  int64_t m = 0;
  if (mask && IsIntConst(mask, &m)) {
    if (m == 0) return Constant(0, dtype);  // never read
    mask = nullptr;
  }
  n.mask = std::move(mask);
  return Make(std::move(n));
}

Expr Op(Prim op, std::vector<Expr> args) {
  if (args.empty()) throw core::InternalError("ir::Op: no operands");
  const DType dtype = op == Prim::kWhere ? args.at(1)->dtype : args[0]->dtype;
  return Op(op, std::move(args), dtype);
}

Expr Op(Prim op, std::vector<Expr> args, DType dtype) {
  const PrimInfo& info = Info(op);
  if (static_cast<int>(args.size()) != info.arity) {
    throw core::InternalError(fmt::format("ir::Op: {} takes {} operands, got {}", info.name,
                                          info.arity, args.size()));
  }
  if (op == Prim::kCast && args[0]->dtype == dtype) return args[0];
  if (ReturnsBool(op)) dtype = DType::kBool;
  if (op == Prim::kWhere) {
    int64_t c = 0;
    if (IsIntConst(args[0], &c)) return c != 0 ? args[1] : args[2];
    if (args[1] == args[2]) return args[1];
  }
  if (op == Prim::kCast && args[0]->kind == ExprKind::kConst) {
    const double v = core::IsFloatingPoint(args[0]->dtype) ? args[0]->fvalue
                                                           : static_cast<double>(args[0]->ivalue);
    if (!core::IsFloatingPoint(args[0]->dtype) && !core::IsFloatingPoint(dtype) &&
        dtype != DType::kBool) {
      return Int(args[0]->ivalue, dtype);
    }
    if (std::isfinite(v) || core::IsFloatingPoint(dtype)) return Constant(v, dtype);
  }
  if (Expr folded = FoldInt(op, args, dtype)) return folded;
  ExprNode n;
  n.kind = ExprKind::kOp;
  n.dtype = dtype;
  n.op = op;
  n.args = std::move(args);
  return Make(std::move(n));
}

Expr Cast(Expr x, DType dtype) { return Op(Prim::kCast, {std::move(x)}, dtype); }

Expr IAdd(Expr a, Expr b) { return Op(Prim::kAdd, {std::move(a), std::move(b)}, DType::kInt64); }
Expr IMul(Expr a, Expr b) { return Op(Prim::kMul, {std::move(a), std::move(b)}, DType::kInt64); }
Expr IAdd(Expr a, int64_t b) { return IAdd(std::move(a), Int(b)); }
Expr IMul(Expr a, int64_t b) { return IMul(std::move(a), Int(b)); }
Expr IFloorDiv(Expr a, int64_t b) { return Op(Prim::kFloorDiv, {std::move(a), Int(b)}, DType::kInt64); }
Expr IRem(Expr a, int64_t b) { return Op(Prim::kRemainder, {std::move(a), Int(b)}, DType::kInt64); }

Expr And(const Expr& a, const Expr& b) {
  if (!a) return b;
  if (!b) return a;
  return Op(Prim::kLogicalAnd, {a, b});
}

Expr InRange(const Expr& e, int64_t size) {
  return And(Op(Prim::kGe, {e, Int(0)}), Op(Prim::kLt, {e, Int(size)}));
}

bool KnownNonNegative(const Expr& e) {
  if (!e || core::IsFloatingPoint(e->dtype)) return false;
  switch (e->kind) {
    case ExprKind::kVar: return true;
    case ExprKind::kConst: return e->ivalue >= 0;
    case ExprKind::kLoad: return false;
    case ExprKind::kOp: break;
  }
  int64_t divisor = 0;
  switch (e->op) {
    case Prim::kAdd:
    case Prim::kMul:
    case Prim::kMaximum:
      return (e->op == Prim::kMaximum && (KnownNonNegative(e->args[0]) || KnownNonNegative(e->args[1]))) ||
             (KnownNonNegative(e->args[0]) && KnownNonNegative(e->args[1]));
    case Prim::kMinimum:
      return KnownNonNegative(e->args[0]) && KnownNonNegative(e->args[1]);
    case Prim::kFloorDiv:
    case Prim::kRemainder:
      return KnownNonNegative(e->args[0]) && IsIntConst(e->args[1], &divisor) && divisor > 0;
    case Prim::kWhere:
      return KnownNonNegative(e->args[1]) && KnownNonNegative(e->args[2]);
    default:
      return false;
  }
}

bool IsConst(const Expr& e) { return e && e->kind == ExprKind::kConst; }

bool IsIntConst(const Expr& e, int64_t* value) {
  if (!IsConst(e) || core::IsFloatingPoint(e->dtype)) return false;
  if (value != nullptr) *value = e->ivalue;
  return true;
}

Expr Rewrite(const Expr& root, const Rewriter& rewriter) {
  std::unordered_map<const ExprNode*, Expr> done;
  std::function<Expr(const Expr&)> go = [&](const Expr& e) -> Expr {
    if (!e) return e;
    auto it = done.find(e.get());
    if (it != done.end()) return it->second;
    Expr out;
    switch (e->kind) {
      case ExprKind::kConst:
        out = e;
        break;
      case ExprKind::kVar:
        out = rewriter.var ? rewriter.var(e->var) : e;
        break;
      case ExprKind::kLoad: {
        std::vector<Expr> index;
        for (const Expr& a : e->args) index.push_back(go(a));
        Expr mask = go(e->mask);
        if (rewriter.load) out = rewriter.load(*e, index, mask);
        if (!out) out = Load(e->tensor, e->dtype, std::move(index), std::move(mask));
        break;
      }
      case ExprKind::kOp: {
        std::vector<Expr> args;
        bool same = true;
        for (const Expr& a : e->args) {
          args.push_back(go(a));
          same = same && args.back() == a;
        }
        out = same ? e : Op(e->op, std::move(args), e->dtype);
        break;
      }
    }
    done.emplace(e.get(), out);
    return out;
  };
  return go(root);
}

Expr SubstituteVars(const Expr& e, const std::vector<Expr>& vars) {
  Rewriter r;
  r.var = [&](int k) -> Expr {
    if (IsSizeVar(k)) return Var(k);
    if (k < 0 || k >= static_cast<int>(vars.size())) {
      throw core::InternalError(fmt::format("ir::SubstituteVars: no value for i{}", k));
    }
    return vars[static_cast<size_t>(k)];
  };
  return Rewrite(e, r);
}

void VisitPostOrder(const Expr& root, const std::function<void(const ExprNode&)>& fn) {
  std::unordered_set<const ExprNode*> seen;
  std::function<void(const Expr&)> go = [&](const Expr& e) {
    if (!e || !seen.insert(e.get()).second) return;
    for (const Expr& a : e->args) go(a);
    go(e->mask);
    fn(*e);
  };
  go(root);
}

int CountNodes(const Expr& e) {
  int n = 0;
  VisitPostOrder(e, [&](const ExprNode&) { ++n; });
  return n;
}

std::string ExprText(const Expr& e) {
  if (!e) return "null";
  switch (e->kind) {
    case ExprKind::kConst:
      return core::IsFloatingPoint(e->dtype) ? fmt::format("{}", e->fvalue) : fmt::format("{}", e->ivalue);
    case ExprKind::kVar:
      return IsSizeVar(e->var) ? fmt::format("s{}", e->var - kFirstSizeVar) : fmt::format("i{}", e->var);
    case ExprKind::kLoad: {
      std::vector<std::string> idx;
      for (const Expr& a : e->args) idx.push_back(ExprText(a));
      return fmt::format("load(t{}, [{}]{})", e->tensor, fmt::join(idx, ", "),
                         e->mask ? ", mask=" + ExprText(e->mask) : "");
    }
    case ExprKind::kOp: {
      std::vector<std::string> args;
      for (const Expr& a : e->args) args.push_back(ExprText(a));
      return fmt::format("{}({})", Info(e->op).name, fmt::join(args, ", "));
    }
  }
  return "?";
}

}  // namespace kernelevolve::operators::ir
