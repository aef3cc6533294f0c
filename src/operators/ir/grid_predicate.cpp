#include "operators/ir/grid_predicate.h"

#include <cmath>
#include <string>
#include <vector>

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;

/// a * i + b * j + c over the grid.
struct GridAffine {
  int64_t a = 0, b = 0, c = 0;
};

struct Reader {
  const core::OpGraph& graph;
  int64_t rows, cols;
  std::set<const OpNode*>& used;

  /// The node argument `name` of `n` refers to, or nullptr.
  const OpNode* Operand(const OpNode& n, const char* name) const {
    const core::OpArg* arg = n.Arg(name);
    return arg != nullptr && arg->IsRef() ? graph.Find(arg->ref) : nullptr;
  }

  /// A call node of `dtype` class (integer or bool), marked used; nullptr otherwise.
  const OpNode* Call(const OpNode* n, bool want_bool) const {
    if (n == nullptr || n->kind != core::OpNodeKind::kCall) return nullptr;
    const bool is_bool = n->dtype == DType::kBool;
    const bool is_int = n->dtype == DType::kInt64 || n->dtype == DType::kInt32 ||
                        n->dtype == DType::kInt16 || n->dtype == DType::kInt8 ||
                        n->dtype == DType::kUInt8;
    if (want_bool ? !is_bool : !is_int) return nullptr;
    used.insert(n);
    return n;
  }

  std::optional<GridAffine> Arange(const OpNode* n, bool as_row) const;
  std::optional<GridAffine> Affine(const OpNode* n) const;
  std::optional<GridHalfPlane> Plane(const OpNode* n) const;
  std::optional<GridHalfPlane> Compare(const std::string& op, const GridAffine& x, int64_t c) const;
  std::optional<GridHalfPlane> Indicator(const OpNode& n, double value, bool equal) const;
  std::optional<double> Constant(const OpNode* n) const;
};

/// A constant number argument (a bool reads as 0 / 1), or nullopt.
std::optional<double> Number(const OpNode& n, const char* name) {
  const core::OpArg* arg = n.Arg(name);
  if (arg == nullptr || arg->IsRef()) return std::nullopt;
  if (arg->value.is_boolean()) return arg->value.get<bool>() ? 1.0 : 0.0;
  if (arg->value.is_number()) return arg->value.get<double>();
  return std::nullopt;
}

/// A constant integer argument (an integral float too), or `fallback` when absent or null.
std::optional<int64_t> Integer(const OpNode& n, const char* name, std::optional<int64_t> fallback) {
  const core::OpArg* arg = n.Arg(name);
  if (arg == nullptr || (!arg->IsRef() && arg->value.is_null())) return fallback;
  const std::optional<double> v = Number(n, name);
  if (!v || std::floor(*v) != *v || std::fabs(*v) > 1e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

/// Shape `shape` is `want` after dropping leading 1s.
bool ShapeIs(std::vector<int64_t> shape, const std::vector<int64_t>& want) {
  while (shape.size() > want.size() && shape.front() == 1) shape.erase(shape.begin());
  return shape == want;
}

/// arange(start, end, 1) as the row index (as_row: i + start) or column index (j + start).
/// Only the Core ATen overload: the capture decomposes arange(end) and arange(start, end)
/// into it (test_graph_capture.py keeps matchers to core or kept names).
std::optional<GridAffine> Reader::Arange(const OpNode* n, bool as_row) const {
  n = Call(n, false);
  if (n == nullptr || n->shape.size() != 1 || n->shape[0] != (as_row ? rows : cols))
    return std::nullopt;
  if (n->target != "aten.arange.start_step") return std::nullopt;
  const std::optional<int64_t> start = Integer(*n, "start", std::nullopt);
  const std::optional<int64_t> step = Integer(*n, "step", 1);
  if (!start || step != 1) return std::nullopt;
  return as_row ? GridAffine{1, 0, *start} : GridAffine{0, 1, *start};
}

std::optional<GridAffine> Reader::Affine(const OpNode* n) const {
  n = Call(n, false);
  if (n == nullptr) return std::nullopt;
  if (n->target.rfind("aten.arange.", 0) == 0) return Arange(n, false);  // [cols]: broadcasts as j
  if (n->target == "aten.unsqueeze.default") {
    if (n->shape == std::vector<int64_t>{rows, 1}) return Arange(Operand(*n, "self"), true);
    if (n->shape == std::vector<int64_t>{1, cols}) return Arange(Operand(*n, "self"), false);
    return std::nullopt;
  }
  const bool add = n->target == "aten.add.Tensor" || n->target == "aten.add.Scalar";
  const bool sub = n->target == "aten.sub.Tensor" || n->target == "aten.sub.Scalar";
  if (!add && !sub) return std::nullopt;
  const std::optional<GridAffine> x = Affine(Operand(*n, "self"));
  const std::optional<int64_t> alpha = Integer(*n, "alpha", 1);
  if (!x || !alpha) return std::nullopt;
  GridAffine y;
  if (const OpNode* other = Operand(*n, "other")) {
    const std::optional<GridAffine> o = Affine(other);
    if (!o) return std::nullopt;
    y = *o;
  } else {
    const std::optional<int64_t> c = Integer(*n, "other", std::nullopt);
    if (!c) return std::nullopt;
    y.c = *c;
  }
  const int64_t sign = add ? *alpha : -*alpha;
  return GridAffine{x->a + sign * y.a, x->b + sign * y.b, x->c + sign * y.c};
}

/// x OP c as a half-plane, for OP in ge, gt, le, lt.
std::optional<GridHalfPlane> Reader::Compare(const std::string& op, const GridAffine& x,
                                             int64_t c) const {
  if (op == "ge") return GridHalfPlane{x.a, x.b, x.c - c};
  if (op == "gt") return GridHalfPlane{x.a, x.b, x.c - c - 1};
  if (op == "le") return GridHalfPlane{-x.a, -x.b, c - x.c};
  if (op == "lt") return GridHalfPlane{-x.a, -x.b, c - x.c - 1};
  return std::nullopt;
}

/// The value of a constant tensor: full(size, v) or scalar_tensor(v), marked used.
std::optional<double> Reader::Constant(const OpNode* n) const {
  if (n == nullptr || n->kind != core::OpNodeKind::kCall) return std::nullopt;
  std::optional<double> v;
  if (n->target == "aten.full.default") v = Number(*n, "fill_value");
  if (n->target == "aten.scalar_tensor.default") v = Number(*n, "s");
  if (v) used.insert(n);
  return v;
}

/// (n == value) when `equal`, else (n != value), where n is a bool half-plane or a
/// where(p, x, y) of constants x != y.
std::optional<GridHalfPlane> Reader::Indicator(const OpNode& n, double value, bool equal) const {
  std::optional<GridHalfPlane> p;
  bool on_true = false, on_false = false;  // what n == value is where p holds / does not
  if (n.dtype == DType::kBool) {
    if (value != 0 && value != 1) return std::nullopt;
    p = Plane(&n);
    on_true = value == 1;
    on_false = value == 0;
  } else {
    if (n.kind != core::OpNodeKind::kCall || n.target != "aten.where.self") return std::nullopt;
    used.insert(&n);
    const std::optional<double> x = Constant(Operand(n, "self"));
    const std::optional<double> y = Constant(Operand(n, "other"));
    if (!x || !y || *x == *y) return std::nullopt;
    p = Plane(Operand(n, "condition"));
    on_true = *x == value;
    on_false = *y == value;
  }
  if (!p || on_true == on_false) return std::nullopt;
  return on_true == equal ? p : p->Not();
}

std::optional<GridHalfPlane> Reader::Plane(const OpNode* n) const {
  n = Call(n, true);
  if (n == nullptr) return std::nullopt;
  const std::string& t = n->target;
  const size_t dot = t.rfind('.');
  const std::string op =
      t.rfind("aten.", 0) == 0 && dot != std::string::npos ? t.substr(5, dot - 5) : "";
  const std::string overload = dot != std::string::npos ? t.substr(dot + 1) : "";
  if (op == "ge" || op == "gt" || op == "le" || op == "lt") {
    const std::optional<GridAffine> x = Affine(Operand(*n, "self"));
    if (!x) return std::nullopt;
    if (overload == "Scalar") {
      const std::optional<int64_t> c = Integer(*n, "other", std::nullopt);
      return c ? Compare(op, *x, *c) : std::nullopt;
    }
    const std::optional<GridAffine> y =
        overload == "Tensor" ? Affine(Operand(*n, "other")) : std::nullopt;
    if (!y) return std::nullopt;
    return Compare(op, GridAffine{x->a - y->a, x->b - y->b, x->c - y->c}, 0);
  }
  if ((op == "eq" || op == "ne") && overload == "Scalar") {
    const OpNode* x = Operand(*n, "self");
    const std::optional<double> v = Number(*n, "other");
    if (x == nullptr || !v) return std::nullopt;
    return Indicator(*x, *v, op == "eq");
  }
  if (t == "aten._to_copy.default") {  // a 0 / 1 indicator cast to bool: != 0
    const OpNode* x = Operand(*n, "self");
    return x != nullptr && x->dtype != DType::kBool ? Indicator(*x, 0, false) : std::nullopt;
  }
  if (t == "aten.logical_not.default" || t == "aten.bitwise_not.default") {
    const std::optional<GridHalfPlane> p = Plane(Operand(*n, "self"));
    return p ? std::optional(p->Not()) : std::nullopt;
  }
  if (t == "aten.logical_and.default" || t == "aten.bitwise_and.Tensor") {
    const OpNode* x = Operand(*n, "self");
    const OpNode* y = Operand(*n, "other");
    if (x == nullptr || y == nullptr) return std::nullopt;
    // AND with an all-true full() is the other side (torch.triu / tril on ones).
    if (Constant(y) == 1.0 && y->dtype == DType::kBool) return Plane(x);
    if (Constant(x) == 1.0 && x->dtype == DType::kBool) return Plane(y);
  }
  return std::nullopt;
}

}  // namespace

std::optional<GridHalfPlane> MatchGridHalfPlane(const core::OpGraph& graph,
                                                const core::OpNode& node, int64_t rows,
                                                int64_t cols, std::set<const core::OpNode*>& used) {
  if (rows <= 0 || cols <= 0 || !ShapeIs(node.shape, {rows, cols})) return std::nullopt;
  return Reader{graph, rows, cols, used}.Plane(&node);
}

}  // namespace kernelevolve::operators::ir
