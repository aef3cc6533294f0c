// Template "softmax_lastdim": softmax / log_softmax over the last dim of a float32
// tensor, one row (rows = product of the leading dims) at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::templates {

/// What the graph asks for.
struct SoftmaxSpec {
  bool log = false;            // log_softmax
  std::string target;          // "aten._softmax.default", ...
  std::string input_node;      // the graph input it reads
  std::vector<int64_t> shape;  // input (= output) shape
  int64_t rows = 1;            // product of the leading dims
  int64_t cols = 1;            // last dim (1 for a 0-d tensor)
};

/// Result of MatchSoftmax: a spec, or why the graph is not a lone last-dim softmax.
struct SoftmaxMatch {
  std::optional<SoftmaxSpec> spec;
  /// e.g. "unsupported_op: aten._softmax.default (dim=0 is not the last dim)".
  std::string unsupported;
};

/// True for aten._softmax.default, aten._log_softmax.default, aten.softmax.int and
/// aten.log_softmax.int.
bool IsSoftmaxTarget(const std::string& target);

/// Accepts a graph whose only call is a softmax target over the last dim (dim ==
/// -1 or rank-1) of a float32 graph input, with float32 output (half_to_float
/// false, dtype null) and one graph output.
SoftmaxMatch MatchSoftmax(const core::OpGraph& graph);

/// Generates row-wise softmax kernels over the knobs of SoftmaxKnobSpace().
class SoftmaxTemplate : public KernelTemplate {
 public:
  SoftmaxTemplate(SoftmaxSpec spec, bool multithread);

  std::string Name() const override { return "softmax_lastdim"; }
  const KnobSpace& Space() const override { return space_; }
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  std::string RowFunction(const std::string& variant, const std::string& exp_fn) const;
  std::string EntryFunction(bool threaded, int64_t rows_per_chunk) const;

  SoftmaxSpec spec_;
  KnobSpace space_;
};

}  // namespace kernelevolve::operators::templates
