#include "operators/ir/kernel_plan.h"

#include <algorithm>
#include <functional>

#include "operators/ir/contraction.h"
#include "operators/ir/convolution.h"

namespace kernelevolve::operators::ir {
namespace {

/// The defs each def's body loads.
std::vector<std::vector<int>> Producers(const TensorProgram& p) {
  std::vector<std::vector<int>> out(p.defs.size());
  for (const TensorDef& d : p.defs) {
    if (!d.body) continue;
    VisitPostOrder(d.body, [&](const ExprNode& n) {
      if (n.kind == ExprKind::kLoad) out[static_cast<size_t>(d.id)].push_back(n.tensor);
    });
    auto& v = out[static_cast<size_t>(d.id)];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return out;
}

/// Value math in a body (ops on non-index values other than casts).
bool HasValueMath(const Expr& body) {
  bool math = false;
  VisitPostOrder(body, [&](const ExprNode& n) {
    if (n.kind == ExprKind::kOp && n.op != Prim::kCast && n.dtype != core::DType::kInt64 &&
        n.dtype != core::DType::kBool) {
      math = true;
    }
  });
  return math;
}

/// Makes every output a distinct non-input def (a copy def where needed).
void SeparateOutputs(TensorProgram& p) {
  std::vector<bool> used(p.defs.size(), false);
  for (int& out : p.outputs) {
    const TensorDef& d = p.defs[static_cast<size_t>(out)];
    if (d.kind != DefKind::kInput && !used[static_cast<size_t>(out)]) {
      used[static_cast<size_t>(out)] = true;
      continue;
    }
    TensorDef copy;
    copy.id = static_cast<int>(p.defs.size());
    copy.kind = DefKind::kCompute;
    copy.dtype = d.dtype;
    copy.shape = d.shape;
    copy.symbolic_shape = d.symbolic_shape;
    copy.body = Load(out, d.dtype, IndexVars(d.shape.size()));
    copy.origin = "copy of " + (d.origin.empty() ? "t" + std::to_string(out) : d.origin) + " (an output)";
    p.defs.push_back(std::move(copy));
    used.push_back(true);
    out = p.defs.back().id;
  }
}

/// An output that only reshapes another computed def (the same elements in the same
/// row-major order: a squeeze after a pooling, a view after a matrix product) takes that
/// def's place, so the def is written straight into the output buffer instead of into
/// an intermediate that a copy kernel then moves. Outputs stay distinct and non-input.
void AliasReshapedOutputs(TensorProgram& p) {
  std::vector<bool> is_output(p.defs.size(), false);
  for (int out : p.outputs) is_output[static_cast<size_t>(out)] = true;
  for (int& out : p.outputs) {
    const TensorDef& d = p.defs[static_cast<size_t>(out)];
    if (d.kind != DefKind::kCompute || !d.body || d.body->kind != ExprKind::kLoad || !d.symbolic_shape.empty()) {
      continue;
    }
    const int src = d.body->tensor;
    const TensorDef& s = p.defs[static_cast<size_t>(src)];
    if (s.kind == DefKind::kInput || is_output[static_cast<size_t>(src)] || s.dtype != d.dtype ||
        !s.symbolic_shape.empty() || !ReadsOwnElement(*d.body, s.shape, d.shape)) {
      continue;
    }
    is_output[static_cast<size_t>(out)] = false;
    is_output[static_cast<size_t>(src)] = true;
    out = src;
  }
}


/// A reduction that would be a matrix product or a convolution but for the views its
/// operands are read through (the rows of an attention in-projection permuted
/// (i % B) * S + i / B by a transpose before a reshape; a convolution over a permuted
/// input) is not one: inlined, those index maps are not affine. Materializing an
/// operand it loads directly (not an input, not already a kernel) turns its reads into
/// plain ones of a dense buffer, at the cost of one copy kernel. Each operand alone is
/// tried first, smallest first, then all of them; the first choice under which the
/// reduction matches is kept, none otherwise. `original` is the body before inlining;
/// `inline_into` inlines with the current flags.
void MaterializeOperandsForMainLoop(TensorProgram& p, size_t k, const Expr& original, std::vector<bool>& materialized,
                                    const std::function<Expr(const Expr&)>& inline_into) {
  std::vector<size_t> operands;
  VisitPostOrder(original, [&](const ExprNode& n) {
    if (n.kind != ExprKind::kLoad) return;
    const size_t src = static_cast<size_t>(n.tensor);
    if (!materialized[src] && std::find(operands.begin(), operands.end(), src) == operands.end()) operands.push_back(src);
  });
  std::stable_sort(operands.begin(), operands.end(),
                   [&](size_t a, size_t b) { return Numel(p.defs[a].shape) < Numel(p.defs[b].shape); });
  std::vector<std::vector<size_t>> choices;
  for (size_t src : operands) choices.push_back({src});
  if (operands.size() > 1) choices.push_back(operands);
  for (const auto& choice : choices) {
    for (size_t src : choice) materialized[src] = true;
    TensorDef trial = p.defs[k];
    trial.body = inline_into(original);
    if (HasMainLoop(p, trial)) {
      p.defs[k].body = trial.body;
      return;
    }
    for (size_t src : choice) materialized[src] = false;
  }
}

}  // namespace

bool HasMainLoop(const TensorProgram& p, const TensorDef& def) {
  if (const auto c = MatchContraction(p, def)) return !IsMatrixVector(*c);
  return MatchConvolution(p, def).has_value();
}

double Iterations(const TensorDef& def) {
  double n = static_cast<double>(Numel(def.shape));
  for (int64_t e : def.reduce_extents) n *= static_cast<double>(e);
  return n;
}

bool AccumulatesFloat32(const TensorDef& d) {
  if (d.dtype != core::DType::kFloat32) return false;
  if (d.kind == DefKind::kReduce) return d.reduce == ReduceOp::kSum || d.reduce == ReduceOp::kProd;
  if (d.kind == DefKind::kScan) return d.scan == ScanOp::kSum || d.scan == ScanOp::kProd;
  return false;
}

KernelPlan PlanKernels(TensorProgram program, const PlanOptions& options) {
  SeparateOutputs(program);
  AliasReshapedOutputs(program);
  const size_t count = program.defs.size();
  KernelPlan plan;
  plan.output_slot.assign(count, -1);
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    plan.output_slot[static_cast<size_t>(program.outputs[k])] = static_cast<int>(k);
  }
  // Reverse pass (consumers come after their producers): how many iterations read each
  // element, summed over its consumers, and from that whether it is materialized (an
  // LSTM's cell state c_t read once by h_t and once by c_{t+1}: inlined into both, every
  // later step would compute it again, so the sum cuts the chain into buffers). An inlined element-wise consumer
  // passes on its consumers' count; a materialized one computes each element once, so
  // its producers see only its own iterations (relu(x @ w + b) feeding a second product:
  // the relu is a buffer, the bias add inlines into it, and the pair becomes the first
  // product's epilogue).
  const auto producers = Producers(program);
  std::vector<double> demand(count, 0);
  plan.materialized.assign(count, false);
  for (size_t k = count; k-- > 0;) {
    const TensorDef& d = program.defs[k];
    plan.materialized[k] = d.kind != DefKind::kCompute || plan.output_slot[k] >= 0 ||
                           (HasValueMath(d.body) &&
                            demand[k] > options.max_recompute * std::max(1.0, static_cast<double>(Numel(d.shape))));
    const bool transparent = d.kind == DefKind::kCompute && !plan.materialized[k];
    const double reads = std::max(Iterations(d), transparent ? demand[k] : 0.0);
    for (int p : producers[k]) demand[static_cast<size_t>(p)] += reads;
  }
  // Forward pass: inline the non-materialized producers into each body.
  std::vector<Expr> inlined(count);  // bodies of inlinable defs after their own inlining
  const auto inline_into = [&](const Expr& body) {
    Rewriter r;
    r.load = [&](const ExprNode& load, std::vector<Expr> index, Expr mask) -> Expr {
      const size_t p = static_cast<size_t>(load.tensor);
      if (plan.materialized[p]) return nullptr;
      Expr inner = SubstituteVars(inlined[p], index);
      if (!mask) return inner;
      // Every read of the inlined body happens only where the outer read would.
      Rewriter masked;
      masked.load = [&](const ExprNode& load_inner, std::vector<Expr> idx, Expr m) -> Expr {
        return Load(load_inner.tensor, load_inner.dtype, std::move(idx), And(mask, m));
      };
      return Op(Prim::kWhere, {mask, Rewrite(inner, masked), Constant(0, load.dtype)});
    };
    return Rewrite(body, r);
  };
  for (size_t k = 0; k < count; ++k) {
    TensorDef& d = program.defs[k];
    if (d.kind == DefKind::kInput) continue;
    const Expr original = d.body;
    d.body = inline_into(original);
    if (d.kind == DefKind::kReduce && !HasMainLoop(program, d)) {
      MaterializeOperandsForMainLoop(program, k, original, plan.materialized, inline_into);
    }
    if (!plan.materialized[k] && CountNodes(d.body) > options.max_inline_nodes) plan.materialized[k] = true;
    if (!plan.materialized[k]) inlined[k] = d.body;
  }
  // Dead kernels: a materialized def no output reads (the argmax of a max pooling whose
  // indices are dropped, attention's logsumexp) is neither computed nor allocated.
  const auto final_producers = Producers(program);
  std::vector<bool> live(count, false);
  for (int out : program.outputs) live[static_cast<size_t>(out)] = true;
  for (size_t k = count; k-- > 0;) {
    if (!live[k]) continue;
    for (int p : final_producers[k]) live[static_cast<size_t>(p)] = true;
  }
  for (size_t k = 0; k < count; ++k) {
    if (program.defs[k].kind == DefKind::kInput) continue;
    if (!live[k]) plan.materialized[k] = false;
    if (plan.materialized[k]) plan.kernels.push_back(static_cast<int>(k));
  }
  plan.program = std::move(program);
  return plan;
}

}  // namespace kernelevolve::operators::ir
