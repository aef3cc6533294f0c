#include "operators/ir/main_loop_epilogue.h"

#include <algorithm>
#include <vector>

#include "operators/ir/contraction.h"
#include "operators/ir/index_simplify.h"
#include "operators/ir/loop_ir.h"

namespace kernelevolve::operators::ir {

std::unordered_map<int, MainLoopEpilogue> PlanMainLoopEpilogues(
    const KernelPlan& plan, const std::function<bool(const TensorDef&)>& heavy) {
  std::unordered_map<int, MainLoopEpilogue> out;
  const TensorProgram& p = plan.program;
  std::unordered_map<int, size_t> position;
  for (size_t k = 0; k < plan.kernels.size(); ++k) position[plan.kernels[k]] = k;
  std::unordered_map<int, std::vector<int>> readers;  // def -> kernels loading it
  for (int k : plan.kernels) {
    std::vector<int> loaded;
    VisitPostOrder(p.defs[static_cast<size_t>(k)].body, [&](const ExprNode& n) {
      if (n.kind == ExprKind::kLoad) loaded.push_back(n.tensor);
    });
    std::sort(loaded.begin(), loaded.end());
    loaded.erase(std::unique(loaded.begin(), loaded.end()), loaded.end());
    for (int t : loaded) readers[t].push_back(k);
  }
  for (int k : plan.kernels) {
    const TensorDef& d = p.defs[static_cast<size_t>(k)];
    if (plan.output_slot[static_cast<size_t>(k)] >= 0 || !heavy(d)) continue;
    const auto& r = readers[k];
    if (r.size() != 1) continue;
    const TensorDef& c = p.defs[static_cast<size_t>(r[0])];
    if (c.kind != DefKind::kCompute || c.dtype != core::DType::kFloat32 ||
        Numel(c.shape) != Numel(d.shape))
      continue;
    bool ok = true;
    VisitPostOrder(c.body, [&](const ExprNode& n) {
      if (n.kind != ExprKind::kLoad) return;
      if (n.tensor == k) {
        ok = ok && ReadsOwnElement(n, d.shape, c.shape);
      } else if (p.defs[static_cast<size_t>(n.tensor)].kind != DefKind::kInput) {
        auto it = position.find(n.tensor);
        ok = ok && it != position.end() && it->second < position[k];
      }
    });
    if (!ok) continue;
    // The epilogue runs over the product's indices: a consumer of another shape (a
    // reshape of it) gets its own indices from their common flat position. Index chains
    // simplify over the product's ranges ((192 i0 + i1) mod 192 = i1).
    const Expr own =
        c.shape == d.shape
            ? c.body
            : SubstituteVars(c.body,
                             Unflatten(FlatOffset(IndexVars(d.shape.size()), d.shape), c.shape));
    out[k] = {c.id, SimplifyIndices(own, d.shape)};
  }
  return out;
}

std::string FusedIntoNote(const std::unordered_map<int, MainLoopEpilogue>& epilogues, int kernel) {
  for (const auto& [heavy, e] : epilogues) {
    if (e.epilogue == kernel) return " (fused into t" + std::to_string(heavy) + "'s main loop)";
  }
  return "";
}

}  // namespace kernelevolve::operators::ir
