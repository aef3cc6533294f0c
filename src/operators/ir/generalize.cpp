#include "operators/ir/generalize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "operators/ir/lower_core.h"

namespace kernelevolve::operators::ir {
namespace {

/// Per size symbol, its value in each program (index 0: the first).
using SymbolValues = std::vector<std::vector<int64_t>>;

/// The expression giving `values` (one per program): the constant when they agree, else
/// a * s + b for the first size symbol s that reproduces every value with integer a, b;
/// nullptr when none does.
Expr Fit(const std::vector<int64_t>& values, const SymbolValues& symbols) {
  bool same = true;
  for (int64_t v : values) same = same && v == values[0];
  if (same) return Int(values[0]);
  for (size_t k = 0; k < symbols.size(); ++k) {
    const auto& s = symbols[k];
    size_t q = 1;
    while (q < s.size() && s[q] == s[0]) ++q;
    if (q == s.size()) continue;
    const int64_t ds = s[q] - s[0], dv = values[q] - values[0];
    if (dv % ds != 0) continue;
    const int64_t a = dv / ds, b = values[0] - a * s[0];
    bool fits = true;
    for (size_t p = 0; p < values.size(); ++p) fits = fits && values[p] == a * s[p] + b;
    if (fits) return IAdd(IMul(SizeVar(static_cast<int>(k)), a), b);
  }
  return nullptr;
}

/// Walks the same expression in every program at once (anti-unification).
class Unifier {
 public:
  explicit Unifier(const SymbolValues& symbols) : symbols_(symbols) {}

  /// The first program's `es[0]` with every integer constant that differs between the
  /// programs replaced by its fit; nullptr (and error()) when they differ otherwise.
  Expr Go(const std::vector<Expr>& es) {
    const Expr& e = es[0];
    if (!e) {
      for (const Expr& o : es) {
        if (o) return Fail("an operand present in one input set's program only");
      }
      return nullptr;
    }
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    for (const Expr& o : es) {
      if (!o || o->kind != e->kind || o->dtype != e->dtype || o->op != e->op || o->var != e->var ||
          o->tensor != e->tensor || o->args.size() != e->args.size() || !o->mask != !e->mask) {
        return Fail(fmt::format("the first input set's program has {} where another's has {}: a size changes "
                                "what is computed there (a size of 1 folds an index away; a value the capture "
                                "baked in, such as a length read with .item(), differs)",
                                ExprText(e), o ? ExprText(o) : std::string("nothing")));
      }
    }
    Expr out = e;
    switch (e->kind) {
      case ExprKind::kVar: break;
      case ExprKind::kConst: out = Constant(es); break;
      case ExprKind::kLoad:
      case ExprKind::kOp: {
        std::vector<Expr> args;
        bool changed = false;
        for (size_t a = 0; a < e->args.size(); ++a) {
          std::vector<Expr> column;
          for (const Expr& o : es) column.push_back(o->args[a]);
          args.push_back(Go(column));
          if (!args.back()) return nullptr;
          changed = changed || args.back() != e->args[a];
        }
        Expr mask;
        if (e->mask) {
          std::vector<Expr> column;
          for (const Expr& o : es) column.push_back(o->mask);
          mask = Go(column);
          if (!mask) return nullptr;
          changed = changed || mask != e->mask;
        }
        if (changed) out = e->kind == ExprKind::kLoad ? Load(e->tensor, e->dtype, std::move(args), std::move(mask))
                                                     : Op(e->op, std::move(args), e->dtype);
        break;
      }
    }
    if (out) memo_.emplace(e.get(), out);
    return out;
  }

  const std::string& error() const { return error_; }

 private:
  Expr Constant(const std::vector<Expr>& es) {
    const Expr& e = es[0];
    if (core::IsFloatingPoint(e->dtype)) {
      for (const Expr& o : es) {
        const bool both_nan = std::isnan(o->fvalue) && std::isnan(e->fvalue);
        if (!both_nan && o->fvalue != e->fvalue) {
          return Fail(fmt::format("the constant {} differs between input sets ({}): it depends on their sizes",
                                  e->fvalue, o->fvalue));
        }
      }
      return e;
    }
    std::vector<int64_t> values;
    for (const Expr& o : es) values.push_back(o->ivalue);
    Expr fit = e->dtype == core::DType::kInt64 ? Fit(values, symbols_) : nullptr;
    if (fit && IsConst(fit)) return e;
    if (!fit) {
      return Fail(fmt::format("the constant {} differs between input sets ({}) and is no a * size + b of one "
                              "input size", values[0], values.back()));
    }
    return fit;
  }

  Expr Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return nullptr;
  }

  const SymbolValues& symbols_;
  std::unordered_map<const ExprNode*, Expr> memo_;
  std::string error_;
};

/// `sizes` (one vector per program) as expressions, or nullopt when one is no fit.
std::optional<std::vector<Expr>> FitSizes(const std::vector<const std::vector<int64_t>*>& sizes,
                                          const SymbolValues& symbols, bool* symbolic) {
  std::vector<Expr> out;
  for (size_t d = 0; d < sizes[0]->size(); ++d) {
    std::vector<int64_t> values;
    for (const auto* s : sizes) values.push_back((*s)[d]);
    Expr fit = Fit(values, symbols);
    if (!fit) return std::nullopt;
    *symbolic = *symbolic || !IsConst(fit);
    out.push_back(std::move(fit));
  }
  return out;
}

}  // namespace

GeneralizeResult Generalize(const TensorProgram& first, const std::vector<TensorProgram>& others) {
  if (others.empty()) return {first, ""};
  const auto refuse = [](const std::string& why) {
    return GeneralizeResult{std::nullopt, "unsupported_graph: inputs of other sizes on other input sets, and " + why};
  };
  std::vector<const TensorProgram*> all = {&first};
  for (const TensorProgram& o : others) all.push_back(&o);
  for (const TensorProgram* p : all) {
    if (p->defs.size() != first.defs.size() || p->outputs != first.outputs || p->num_inputs != first.num_inputs) {
      return refuse("the graph captured from them has another structure (a size decides which ops run)");
    }
  }
  // Symbols: the input dims whose size differs; dims that agree on every set share one.
  SymbolValues values;
  std::vector<SizeSymbol> symbols;
  for (const TensorDef& d : first.defs) {
    if (d.kind != DefKind::kInput) continue;
    for (size_t dim = 0; dim < d.shape.size(); ++dim) {
      std::vector<int64_t> v;
      for (const TensorProgram* p : all) {
        const TensorDef& o = p->defs[static_cast<size_t>(d.id)];
        if (o.kind != DefKind::kInput || o.abi_index != d.abi_index || o.shape.size() != d.shape.size()) {
          return refuse(fmt::format("input {} differs in kind or rank", d.abi_index));
        }
        v.push_back(o.shape[dim]);
      }
      bool same = true;
      for (int64_t x : v) same = same && x == v[0];
      if (same) continue;
      bool known = false;
      for (const auto& s : values) known = known || s == v;
      if (!known) {
        values.push_back(v);
        symbols.push_back({d.abi_index, static_cast<int>(dim), v[0], *std::min_element(v.begin(), v.end()),
                           *std::max_element(v.begin(), v.end())});
      }
    }
  }
  TensorProgram out = first;
  out.symbols = symbols;
  Unifier unifier(values);
  for (TensorDef& d : out.defs) {
    const size_t k = static_cast<size_t>(d.id);
    std::vector<const std::vector<int64_t>*> shapes, extents;
    std::vector<Expr> bodies;
    for (const TensorProgram* p : all) {
      const TensorDef& o = p->defs[k];
      if (o.kind != d.kind || o.dtype != d.dtype || o.shape.size() != d.shape.size() ||
          o.reduce_extents.size() != d.reduce_extents.size() || o.reduce != d.reduce || o.scan != d.scan ||
          o.scan_dim != d.scan_dim || o.abi_index != d.abi_index || !o.body != !d.body) {
        return refuse(fmt::format("t{} ({}) differs in kind, dtype or rank between them", d.id, d.origin));
      }
      shapes.push_back(&o.shape);
      extents.push_back(&o.reduce_extents);
      bodies.push_back(o.body);
    }
    bool symbolic_shape = false, symbolic_extents = false;
    auto shape = FitSizes(shapes, values, &symbolic_shape);
    auto reduce = FitSizes(extents, values, &symbolic_extents);
    if (!shape || !reduce) {
      return refuse(fmt::format("a size of t{} ({}) is no a * size + b of one input size", d.id, d.origin));
    }
    if (symbolic_shape) d.symbolic_shape = std::move(*shape);
    if (symbolic_extents) d.symbolic_reduce_extents = std::move(*reduce);
    if (d.body) {
      d.body = unifier.Go(bodies);
      if (!d.body) return refuse(fmt::format("in t{} ({}) {}", d.id, d.origin, unifier.error()));
    }
  }
  return {std::move(out), ""};
}

GeneralizeResult LowerGeneralized(const core::OpGraph& graph, const std::vector<core::OpGraph>& shape_graphs) {
  CoreLowerResult lowered = LowerCore(graph);
  if (!lowered.program) return {std::nullopt, lowered.unsupported};
  std::vector<TensorProgram> others;
  for (const core::OpGraph& g : shape_graphs) {
    CoreLowerResult other = LowerCore(g);
    if (!other.program) return {std::nullopt, other.unsupported};
    others.push_back(std::move(*other.program));
  }
  return Generalize(*lowered.program, others);
}

}  // namespace kernelevolve::operators::ir
