// Template "rowwise": graphs with reductions (sum/mean/max/min/prod/argmax, norms,
// var/std, softmax over any dim, layer/group/batch/instance/rms norm, losses,
// cross entropy) plus any elementwise prologue and epilogue, fused into one kernel
// over the [O, R, I] region of the loop IR (operators/ir/region.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "operators/ir/region.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::templates {

/// The rowwise template for a problem, or why its graph does not fit.
struct RowwiseMatch {
  std::optional<ir::Region> region;
  std::string unsupported;  // "unsupported_op: ...", "unsupported_graph: ...", ...
};

/// Lowers `graph` (ir::Lower) and analyses its region (ir::AnalyzeRegion).
RowwiseMatch MatchRowwise(const core::OpGraph& graph);

/// Knobs of "rowwise" for a region: math {"libm", "vectorized"} (std:: math or the
/// prelude); threads {"1", "all"} ("1" only when !multithread); accumulator
/// {"float64", "float32"} of sums/products (only when the graph has one; "float64" is
/// the safe value); with one row (O*I == 1): split_block {4096, 16384, 65536} elements
/// per partial (fixed chunks combined in order: deterministic for any thread count);
/// else block_rows {1, 4, 16} (threads "all" only); with I > 1: loop_order
/// {"r_outer" (vector accumulators over a block of i), "i_outer" (one strided row at
/// a time)} and block_i {16, 32, 64, 256} (r_outer only); row_buffer {"off", "on"} when
/// RowBufferValues(region) is not empty (rows form: values recomputed in several
/// loops over r stored once per row instead).
KnobSpace RowwiseKnobSpace(const ir::Region& region, bool multithread);

class RowwiseTemplate : public SpecTemplate<ir::Region> {
 public:
  RowwiseTemplate(ir::Region region, bool multithread);
  std::string Name() const override { return "rowwise"; }
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;
};

}  // namespace kernelevolve::operators::templates
