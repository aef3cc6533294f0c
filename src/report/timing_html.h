// The measurement sections of a run's HTML report: the timing interval and roofline
// position of every correct node, and the confirmation rounds of the best.
#pragma once

#include <string>

#include "report/report_data.h"

namespace kernelevolve::report {

/// <h2> and table#correct-nodes: one tr.correct-row per correct node (id order) with its
/// drop-in median and 95% interval (a forest plot against eager's median), kernel-only
/// median, speedup, and roofline bound, fraction (bar: 100% = the roof), GB/s, GFLOP/s.
std::string CorrectNodesSection(const RunReportData& data);

/// <h2> and #confirmation: result.json's best.confirmed (rounds, per-round ratios,
/// median, 95% interval, verdict); "" when result.json has none.
std::string ConfirmationSection(const RunReportData& data);

}  // namespace kernelevolve::report
