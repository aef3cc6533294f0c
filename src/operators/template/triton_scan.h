// Template "triton_scan": cumsum / cumprod along any dim in Triton (tl.cumsum /
// tl.cumprod, reverse scans through their `reverse` flag), with the elementwise
// prologue and epilogue of the CPU scan graph (scan_graph.h: masked, exclusive and
// reverse scans), for --target triton.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/problem.h"
#include "operators/template/kernel_template.h"
#include "operators/template/scan_graph.h"

namespace kernelevolve::operators::templates {

/// The prologue / epilogue of a scan spelled in Triton: `lines` compute `result`
/// from the leaf variables (x0, x1, ... for the inputs; "s" for the scan value).
struct TritonScanBody {
  std::vector<std::string> prologue;
  std::string prologue_result;
  std::vector<std::string> epilogue;
  std::string epilogue_result;
};

/// Knobs of "triton_scan". Rows (inner == 1): block {256, ..., 4096} elements per
/// step along the row (up to the padded row length). Columns (inner > 1): block_i
/// {16, 32, 64, 128} columns per program and block_n {8, 16, 32, 64} steps per
/// block. Both: num_warps {1, 2, 4, 8}, num_stages {1, 2, 3} (tl.range pipelining of
/// the block loop), accumulator {"float32", "float64"} (the running prefix and the in-block
/// scan; float64 is the safe value, as PyTorch's CPU cumsum accumulates in double).
KnobSpace TritonScanKnobSpace(const ScanSpec& spec);

class TritonScanTemplate : public KernelTemplate {
 public:
  TritonScanTemplate(ScanSpec spec, TritonScanBody body);
  std::string Name() const override { return "triton_scan"; }
  const KnobSpace& Space() const override { return space_; }
  /// float32 with 1024-element blocks (rows) or 64x16 tiles (columns) first, its
  /// float64 twin, then wider blocks.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  /// A Python module: the @triton.jit kernel and kernelevolve_entry(inputs, outputs).
  /// One program per row (or per column block) walks the scanned dim in blocks,
  /// carrying the running prefix from block to block.
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  ScanSpec spec_;
  TritonScanBody body_;
  KnobSpace space_;
};

/// The Triton spelling of a scan's prologue and epilogue (graph walk as
/// BuildSubgraphExpr, ops by TritonElementwiseExpr), or the reason it has none.
std::optional<TritonScanBody> BuildTritonScanBody(const core::OpGraph& graph, const ScanSpec& spec,
                                                  std::string& unsupported);

/// triton_scan for a graph with a cumulative call; nullopt when it has none; a
/// TemplateMatch carrying the reason when MatchScan or the Triton spelling refuses it.
std::optional<TemplateMatch> MatchTritonScan(const core::Problem& problem);

}  // namespace kernelevolve::operators::templates
