// Template "triton_pointwise": a captured graph of elementwise ATen ops as one fused
// Triton kernel (one program per BLOCK elements), for --target triton.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "operators/template/kernel_template.h"
#include "operators/template/triton_expr.h"

namespace kernelevolve::operators::templates {

/// The fused graph in Triton spelling: one `name = expr` line per call node.
struct TritonPointwiseBody {
  std::vector<std::string> input_vars;  // kernel arguments x0, x1, ... in ABI order
  std::vector<std::string> lines;       // "t3 = tl.where(x0 < 0.0, 0.0, x0)  # aten.relu..."
  std::string result_var;
  std::vector<int64_t> shape;
};

/// Result of BuildTritonPointwise: a body or why none exists.
struct TritonPointwiseBuild {
  std::optional<TritonPointwiseBody> body;
  std::string unsupported;  // "unsupported_op: aten.NAME (...)" etc. when !body
};

/// Spells the graph in Triton when BuildPointwiseExpr (the C++ template's checks:
/// float32, one output, no broadcasting) accepts it and every op has a Triton rule
/// (the C++ rules minus aten.pow with a general exponent).
TritonPointwiseBuild BuildTritonPointwise(const core::OpGraph& graph);

/// Knobs: block {512, 1024, 2048, 4096} elements per program, num_warps {2, 4, 8}.
KnobSpace TritonPointwiseKnobSpace();

class TritonPointwiseTemplate : public KernelTemplate {
 public:
  explicit TritonPointwiseTemplate(TritonPointwiseBody body);
  std::string Name() const override { return "triton_pointwise"; }
  const KnobSpace& Space() const override { return space_; }
  /// {block 1024, num_warps 4} first, then {2048, 8}, {4096, 8}.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  /// A Python module: the @triton.jit kernel and kernelevolve_entry(inputs, outputs).
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  TritonPointwiseBody body_;
  KnobSpace space_;
};

}  // namespace kernelevolve::operators::templates
