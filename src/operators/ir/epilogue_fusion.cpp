#include "operators/ir/epilogue_fusion.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "operators/ir/contraction.h"
#include "operators/ir/index_simplify.h"
#include "operators/ir/loop_ir.h"

namespace kernelevolve::operators::ir {
namespace {

/// Where each kernel runs in `plan`, and which kernels load each def.
struct PlanOrder {
  std::unordered_map<int, size_t> position;
  std::unordered_map<int, std::vector<int>> readers;

  explicit PlanOrder(const KernelPlan& plan) {
    const TensorProgram& p = plan.program;
    for (size_t k = 0; k < plan.kernels.size(); ++k) position[plan.kernels[k]] = k;
    for (int k : plan.kernels) {
      std::vector<int> loaded;
      VisitPostOrder(p.defs[static_cast<size_t>(k)].body, [&](const ExprNode& n) {
        if (n.kind == ExprKind::kLoad) loaded.push_back(n.tensor);
      });
      std::sort(loaded.begin(), loaded.end());
      loaded.erase(std::unique(loaded.begin(), loaded.end()), loaded.end());
      for (int t : loaded) readers[t].push_back(k);
    }
  }

  /// `c`'s body over `d`'s index vars, when `c` is an element kernel of as many elements
  /// as `d` that loads `d` only at its own element (under a mask of its own where
  /// `masked_reads`: the printer then reads 0 where the mask is off) and otherwise only
  /// inputs or kernels that run before `d`; nullopt otherwise.
  std::optional<Expr> EpilogueBody(const TensorProgram& p, const TensorDef& d, const TensorDef& c,
                                   bool masked_reads) const {
    if (c.kind != DefKind::kCompute || Numel(c.shape) != Numel(d.shape) || !c.symbolic_shape.empty()) {
      return std::nullopt;
    }
    bool ok = true;
    const size_t own_position = position.at(d.id);
    VisitPostOrder(c.body, [&](const ExprNode& n) {
      if (n.kind != ExprKind::kLoad) return;
      if (n.tensor == d.id) {
        ExprNode read = n;
        if (masked_reads) read.mask = nullptr;
        ok = ok && ReadsOwnElement(read, d.shape, c.shape);
      } else if (p.defs[static_cast<size_t>(n.tensor)].kind != DefKind::kInput) {
        auto it = position.find(n.tensor);
        ok = ok && it != position.end() && it->second < own_position;
      }
    });
    if (!ok) return std::nullopt;
    // The epilogue runs over `d`'s indices: a consumer of another shape (a reshape of
    // it) gets its own indices from their common flat position. Index chains simplify
    // over `d`'s ranges ((192 i0 + i1) mod 192 = i1).
    const Expr own = c.shape == d.shape
                         ? c.body
                         : SubstituteVars(c.body, Unflatten(FlatOffset(IndexVars(d.shape.size()), d.shape), c.shape));
    return SimplifyIndices(own, d.shape);
  }
};

}  // namespace

std::unordered_map<int, MainLoopEpilogue> PlanMainLoopEpilogues(
    const KernelPlan& plan, const std::function<bool(const TensorDef&)>& heavy) {
  std::unordered_map<int, MainLoopEpilogue> out;
  const TensorProgram& p = plan.program;
  const PlanOrder order(plan);
  for (int k : plan.kernels) {
    const TensorDef& d = p.defs[static_cast<size_t>(k)];
    if (plan.output_slot[static_cast<size_t>(k)] >= 0 || !heavy(d)) continue;
    auto it = order.readers.find(k);
    if (it == order.readers.end() || it->second.size() != 1) continue;
    const TensorDef& c = p.defs[static_cast<size_t>(it->second[0])];
    if (c.dtype != core::DType::kFloat32) continue;
    if (auto body = order.EpilogueBody(p, d, c, /*masked_reads=*/false)) out[k] = {c.id, *body};
  }
  return out;
}

std::string FusedIntoNote(const std::unordered_map<int, MainLoopEpilogue>& epilogues, int kernel) {
  for (const auto& [heavy, e] : epilogues) {
    if (e.epilogue == kernel) return " (fused into t" + std::to_string(heavy) + "'s main loop)";
  }
  return "";
}

std::unordered_map<int, ReductionEpilogue> PlanReductionEpilogues(
    const KernelPlan& plan, const std::function<bool(const TensorDef&)>& eligible,
    const std::function<bool(const TensorDef&)>& eligible_consumer) {
  std::unordered_map<int, ReductionEpilogue> out;
  const TensorProgram& p = plan.program;
  const PlanOrder order(plan);
  for (int k : plan.kernels) {
    const TensorDef& d = p.defs[static_cast<size_t>(k)];
    if (d.kind != DefKind::kReduce || !d.symbolic_shape.empty() || !eligible(d)) continue;
    auto it = order.readers.find(k);
    if (it == order.readers.end()) continue;
    ReductionEpilogue e;
    e.store_reduction = plan.output_slot[static_cast<size_t>(k)] >= 0;
    for (int r : it->second) {
      const TensorDef& c = p.defs[static_cast<size_t>(r)];
      std::optional<Expr> body = eligible_consumer(c) ? order.EpilogueBody(p, d, c, /*masked_reads=*/true) : std::nullopt;
      if (!body) {
        e.store_reduction = true;  // a reader of its buffer runs after it
        continue;
      }
      e.consumers.push_back(r);
      e.bodies.push_back(*body);
    }
    if (!e.consumers.empty()) out[k] = std::move(e);
  }
  return out;
}

}  // namespace kernelevolve::operators::ir
