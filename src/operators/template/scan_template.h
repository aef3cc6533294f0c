// Template "scan": cumsum / cumprod along any dim of a float32 tensor, with a fused
// elementwise prologue and epilogue (masked, exclusive and reverse scans).
#pragma once

#include <optional>

#include "core/problem.h"
#include "operators/template/kernel_template.h"
#include "operators/template/scan_graph.h"

namespace kernelevolve::operators::templates {

/// Knobs of the "scan" template:
///   accumulator {"float64", "float32"}: the accumulator type (PyTorch's CPU cumsum/cumprod
///     accumulate float32 in double, at::acc_type; float is faster but drifts on
///     long rows);
///   math {"libm", "vectorized"} (only when `has_math`: the prologue/epilogue
///     call transcendental functions): <cmath> or the math prelude;
///   threads {"1", "all"} ("all" only when `multithread`);
///   with `rows` (scanned dim last, inner == 1): algorithm {"sequential", "simd",
///     "blocked"} and block {1024, 8192, 65536} elements (only with "blocked");
///   else: loop_order {"column", "row"} and block_i {64, 512, 4096} columns (only with "row").
/// Safe values (moves after a failure): float64, libm, 1 thread, sequential / column.
KnobSpace ScanKnobSpace(bool multithread, bool rows, bool has_math);

/// Generates scan kernels over ScanKnobSpace(). The generated entry reads outer, n
/// and inner from the output's shape (rank and scanned dim fixed), so one source
/// serves any shape of the same rank; row-scan settings return 3 when inner != 1.
class ScanTemplate : public KernelTemplate {
 public:
  ScanTemplate(ScanSpec spec, bool multithread);

  std::string Name() const override { return "scan"; }
  const KnobSpace& Space() const override { return space_; }
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

  const ScanSpec& Spec() const { return spec_; }

 private:
  std::string ElementFunctions(bool prelude) const;
  std::string EntryFunction(const std::string& dispatch) const;
  std::string Description(const nlohmann::json& knobs) const;

  ScanSpec spec_;
  KnobSpace space_;
};

/// The scan template for `problem`, or nullopt when its graph has no cumulative
/// call (cumsum, cumprod, cummax, cummin, logcumsumexp). A graph with one that
/// MatchScan rejects gives a TemplateMatch carrying the reason. `threads` as in
/// MatchTemplate.
std::optional<TemplateMatch> MatchScanTemplate(const core::Problem& problem, int threads);

}  // namespace kernelevolve::operators::templates
