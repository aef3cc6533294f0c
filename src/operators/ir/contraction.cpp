#include "operators/ir/contraction.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace kernelevolve::operators::ir {
namespace {

/// floor(x / d) (rem = false) or floor(x / d) mod m (rem = true) for a base
/// expression x (keyed by its text), d, m > 0: the index maps of reshapes
/// (Unflatten's div / mod chains) before they cancel.
struct Atom {
  std::string base;
  bool rem = false;
  int64_t d = 1, m = 0;
  bool operator<(const Atom& o) const { return std::tie(base, rem, d, m) < std::tie(o.base, o.rem, o.d, o.m); }
};

/// An affine form over vars and atoms.
struct Form {
  Affine lin;
  std::map<Atom, int64_t> atoms;
  std::map<std::string, Expr> bases;  // text -> expression, for the atoms' x
};

Affine Scaled(Affine a, int64_t s) {
  a.constant *= s;
  for (auto& c : a.coeff) c *= s;
  return a;
}

Affine Sum(Affine a, const Affine& b) {
  a.constant += b.constant;
  if (a.coeff.size() < b.coeff.size()) a.coeff.resize(b.coeff.size(), 0);
  for (size_t v = 0; v < b.coeff.size(); ++v) a.coeff[v] += b.coeff[v];
  return a;
}

Form Scaled(Form f, int64_t s) {
  f.lin = Scaled(f.lin, s);
  for (auto& [atom, c] : f.atoms) c *= s;
  return f;
}

Form Sum(Form a, const Form& b) {
  a.lin = Sum(a.lin, b.lin);
  for (const auto& [atom, c] : b.atoms) a.atoms[atom] += c;
  a.bases.insert(b.bases.begin(), b.bases.end());
  return a;
}

bool IsConstant(const Form& f) {
  return f.atoms.empty() && std::all_of(f.lin.coeff.begin(), f.lin.coeff.end(), [](int64_t c) { return c == 0; });
}

/// Var extents (var v ranges over [0, extents[v])), or null when unknown.
using Extents = const std::vector<int64_t>*;

std::optional<Form> FormOf(const Expr& e, Extents extents);

/// For an affine x and var extents: x = d q + r with q the terms whose coefficients d
/// divides (divided by d) and r the rest; when every value of r lies in [0, d),
/// floor(x / d) = q and x mod d = r exactly. nullopt when r may leave [0, d) (or an
/// extent is unknown).
std::optional<std::pair<Affine, Affine>> SplitByRange(const Affine& x, int64_t d, Extents extents) {
  if (extents == nullptr) return std::nullopt;
  Affine q, r;
  q.coeff.assign(x.coeff.size(), 0);
  r.coeff.assign(x.coeff.size(), 0);
  int64_t low = 0, high = 0;
  // The constant: its multiple of d goes to q (floor division), the remainder to r.
  q.constant = x.constant >= 0 ? x.constant / d : -((-x.constant + d - 1) / d);
  r.constant = x.constant - q.constant * d;
  low = high = r.constant;
  for (size_t v = 0; v < x.coeff.size(); ++v) {
    const int64_t c = x.coeff[v];
    if (c == 0) continue;
    if (c % d == 0) {
      q.coeff[v] = c / d;
      continue;
    }
    if (v >= extents->size() || (*extents)[v] <= 0) return std::nullopt;
    r.coeff[v] = c;
    const int64_t span = c * ((*extents)[v] - 1);
    (span < 0 ? low : high) += span;
  }
  if (low < 0 || high >= d) return std::nullopt;
  return std::make_pair(q, r);
}

/// floor(x / d) or floor(x / d) mod m as an atom, folding a nested floor division of
/// x into d (floor(floor(x / a) / b) = floor(x / (a b)) for a, b > 0). When x is
/// affine and the var extents bound its remainder (SplitByRange), the result is affine
/// instead: floor(x / d) = q, and q mod m splits again (the index maps of a permute
/// between two reshapes, e.g. an einsum's operand, which do not cancel pairwise).
std::optional<Form> AtomOf(Expr x, int64_t d, bool rem, int64_t m, Extents extents) {
  while (x->kind == ExprKind::kOp && x->op == Prim::kFloorDiv && x->args[1]->kind == ExprKind::kConst &&
         x->args[1]->ivalue > 0) {
    d *= x->args[1]->ivalue;
    x = x->args[0];
  }
  const auto base = FormOf(x, extents);
  if (!base) return std::nullopt;
  if (base->atoms.empty()) {
    if (auto qr = SplitByRange(base->lin, d, extents)) {
      if (!rem) return Form{qr->first, {}, {}};
      if (auto qm = SplitByRange(qr->first, m, extents)) return Form{qm->second, {}, {}};
    }
  }
  Form f;
  const std::string text = ExprText(x);
  f.bases.emplace(text, x);
  f.atoms[Atom{text, rem, d, rem ? m : 0}] = 1;
  return f;
}

std::optional<Form> FormOf(const Expr& e, Extents extents) {
  if (e->dtype != core::DType::kInt64) return std::nullopt;
  Form f;
  switch (e->kind) {
    case ExprKind::kConst: f.lin.constant = e->ivalue; return f;
    case ExprKind::kVar:
      f.lin.coeff.assign(static_cast<size_t>(e->var) + 1, 0);
      f.lin.coeff.back() = 1;
      return f;
    case ExprKind::kLoad: return std::nullopt;
    case ExprKind::kOp: break;
  }
  if (e->op == Prim::kNeg && e->args.size() == 1) {
    auto a = FormOf(e->args[0], extents);
    return a ? std::optional<Form>(Scaled(*a, -1)) : std::nullopt;
  }
  if (e->args.size() != 2) return std::nullopt;
  const Expr& rhs = e->args[1];
  const bool positive_constant = rhs->kind == ExprKind::kConst && rhs->ivalue > 0;
  if (e->op == Prim::kFloorDiv) {
    return positive_constant ? AtomOf(e->args[0], rhs->ivalue, false, 0, extents) : std::nullopt;
  }
  if (e->op == Prim::kRemainder) {
    if (!positive_constant) return std::nullopt;
    const Expr& q = e->args[0];  // (x // d) % m, or x % m
    if (q->kind == ExprKind::kOp && q->op == Prim::kFloorDiv && q->args[1]->kind == ExprKind::kConst &&
        q->args[1]->ivalue > 0) {
      return AtomOf(q->args[0], q->args[1]->ivalue, true, rhs->ivalue, extents);
    }
    return AtomOf(q, 1, true, rhs->ivalue, extents);
  }
  auto x = FormOf(e->args[0], extents);
  auto y = FormOf(rhs, extents);
  if (!x || !y) return std::nullopt;
  switch (e->op) {
    case Prim::kAdd: return Sum(*x, *y);
    case Prim::kSub: return Sum(*x, Scaled(*y, -1));
    case Prim::kMul:
      if (IsConstant(*y)) return Scaled(*x, y->lin.constant);
      if (IsConstant(*x)) return Scaled(*y, x->lin.constant);
      return std::nullopt;
    default: return std::nullopt;
  }
}

/// Cancels c * (floor(x/d) mod m) + c m * floor(x/(d m)) = c * floor(x/d) until no
/// pair is left, then floor(x/1) = x; with var extents, an atom left over whose base is
/// affine is resolved by SplitByRange (the per-head index of b h // H * H + b h % H
/// pairs first, then floor(x / d) of the permuted flat index is a var). nullopt when an
/// atom remains.
std::optional<Affine> Cancel(Form f, Extents extents) {
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = f.atoms.begin(); it != f.atoms.end(); ++it) {
      const auto [atom, c] = *it;
      if (c == 0) {
        f.atoms.erase(it);
        changed = true;
        break;
      }
      if (atom.rem) {
        auto div = f.atoms.find(Atom{atom.base, false, atom.d * atom.m, 0});
        if (div == f.atoms.end() || div->second != c * atom.m) continue;
        f.atoms.erase(div);
        f.atoms.erase(Atom{atom.base, true, atom.d, atom.m});
        f.atoms[Atom{atom.base, false, atom.d, 0}] += c;
        changed = true;
        break;
      }
      if (atom.d == 1) {  // floor(x / 1) = x
        auto x = FormOf(f.bases.at(atom.base), nullptr);
        f.atoms.erase(it);
        f = Sum(std::move(f), Scaled(*x, c));
        changed = true;
        break;
      }
    }
    for (auto it = f.atoms.begin(); !changed && it != f.atoms.end(); ++it) {
      const auto [atom, c] = *it;
      const auto base = FormOf(f.bases.at(atom.base), extents);
      if (!base || !base->atoms.empty()) continue;
      auto qr = SplitByRange(base->lin, atom.d, extents);
      if (!qr) continue;
      Affine value = qr->first;
      if (atom.rem) {
        auto qm = SplitByRange(value, atom.m, extents);
        if (!qm) continue;
        value = qm->second;
      }
      f.atoms.erase(it);
      f.lin = Sum(f.lin, Scaled(value, c));
      changed = true;
    }
  }
  if (!f.atoms.empty()) return std::nullopt;
  return f.lin;
}

/// The flat element offset of an unmasked float32 load, as an affine form.
std::optional<Affine> LoadOffset(const TensorProgram& program, const Expr& e, Extents extents) {
  if (e->kind != ExprKind::kLoad || e->mask || e->dtype != core::DType::kFloat32) return std::nullopt;
  const TensorDef& src = program.defs.at(static_cast<size_t>(e->tensor));
  if (src.dtype != core::DType::kFloat32) return std::nullopt;
  return AffineOf(FlatOffset(e->args, src.shape), extents);
}

}  // namespace

bool SameAffine(const Affine& a, const Affine& b) {
  if (a.constant != b.constant) return false;
  const size_t n = std::max(a.coeff.size(), b.coeff.size());
  for (size_t v = 0; v < n; ++v) {
    if (a.Coeff(static_cast<int>(v)) != b.Coeff(static_cast<int>(v))) return false;
  }
  return true;
}

bool ReadsOwnElement(const ExprNode& load, const std::vector<int64_t>& shape, const std::vector<int64_t>& own_shape) {
  if (load.mask || load.args.size() != shape.size() || Numel(shape) != Numel(own_shape)) return false;
  auto read = AffineOf(FlatOffset(load.args, shape));
  auto own = AffineOf(FlatOffset(IndexVars(own_shape.size()), own_shape));
  if (!read || !own) return false;
  // A loop var over a unit dim is always 0: its coefficient is not part of the function
  // (a load simplified to [0, i1, i2] still reads the own element of a [1, m, n] loop).
  for (size_t v = 0; v < own_shape.size(); ++v) {
    if (own_shape[v] != 1) continue;
    for (Affine* f : {&*read, &*own}) {
      if (v < f->coeff.size()) f->coeff[v] = 0;
    }
  }
  return SameAffine(*read, *own);
}

std::optional<Affine> AffineOf(const Expr& e, const std::vector<int64_t>* extents) {
  auto f = FormOf(e, extents);
  if (!f) return std::nullopt;
  return Cancel(std::move(*f), extents);
}

namespace {

/// The contraction out[shape..., i, j] = sum_k x * y for the loads `x_load` and `y_load`,
/// whose indices use vars 0 .. shape.size() (the last one k, over [0, k)).
std::optional<Contraction> MatchLoads(const TensorProgram& program, const Expr& x_load, const Expr& y_load,
                                      const std::vector<int64_t>& shape, int64_t k) {
  // Output vars then the reduced var, each over [0, extent).
  std::vector<int64_t> extents = shape;
  extents.push_back(k);
  auto x = LoadOffset(program, x_load, &extents);
  auto y = LoadOffset(program, y_load, &extents);
  if (!x || !y) return std::nullopt;
  const int rank = static_cast<int>(shape.size());
  const int vi = rank - 2, vj = rank - 1, vk = rank;
  int xa = x_load->tensor, ya = y_load->tensor;
  // A depends on i (not j), B on j (not i); the operands may come in either order.
  if (x->Coeff(vj) != 0 || y->Coeff(vi) != 0) {
    std::swap(x, y);
    std::swap(xa, ya);
  }
  if (x->Coeff(vj) != 0 || y->Coeff(vi) != 0) return std::nullopt;
  // Only the output and reduced vars may appear.
  for (const Affine* f : {&*x, &*y}) {
    for (size_t v = static_cast<size_t>(vk) + 1; v < f->coeff.size(); ++v) {
      if (f->coeff[v] != 0) return std::nullopt;
    }
  }
  Contraction c;
  c.a = xa;
  c.b = ya;
  c.batch.assign(shape.begin(), shape.end() - 2);
  c.out_batch = c.batch;
  c.m = shape[static_cast<size_t>(vi)];
  c.n = shape[static_cast<size_t>(vj)];
  c.k = k;
  for (int d = 0; d < vi; ++d) {
    c.a_batch.push_back(x->Coeff(d));
    c.b_batch.push_back(y->Coeff(d));
  }
  c.a_m = x->Coeff(vi);
  c.a_k = x->Coeff(vk);
  c.b_k = y->Coeff(vk);
  c.b_n = y->Coeff(vj);
  c.a_offset = x->constant;
  c.b_offset = y->constant;
  return c;
}

}  // namespace

std::optional<Contraction> MatchContraction(const TensorProgram& program, const TensorDef& def) {
  if (def.kind != DefKind::kReduce || def.reduce != ReduceOp::kSum || def.dtype != core::DType::kFloat32 ||
      def.reduce_extents.size() != 1 || def.shape.size() < 2) {
    return std::nullopt;
  }
  const Expr& body = def.body;
  if (body->kind != ExprKind::kOp || body->op != Prim::kMul || body->args.size() != 2) return std::nullopt;
  const int64_t k = def.reduce_extents[0];
  if (auto c = MatchLoads(program, body->args[0], body->args[1], def.shape, k)) return c;
  // A batch flattened across a permute (bmm over b h of per-head operands, whose head h
  // of batch b starts at b S H D + h D): the first batch var as b = u H + w, two batch
  // dims, for the first H that makes both operands affine.
  if (def.shape.size() < 3) return std::nullopt;
  const int64_t flat = def.shape[0];
  for (int64_t h = 2; h < flat; ++h) {
    if (flat % h != 0) continue;
    std::vector<Expr> vars = {IAdd(IMul(Var(0), h), Var(1))};
    for (size_t v = 1; v <= def.shape.size(); ++v) vars.push_back(Var(static_cast<int>(v) + 1));
    std::vector<int64_t> shape = {flat / h, h};
    shape.insert(shape.end(), def.shape.begin() + 1, def.shape.end());
    auto c = MatchLoads(program, SubstituteVars(body->args[0], vars), SubstituteVars(body->args[1], vars), shape, k);
    if (!c) continue;
    c->out_batch.assign(def.shape.begin(), def.shape.end() - 2);
    return c;
  }
  return std::nullopt;
}

}  // namespace kernelevolve::operators::ir
