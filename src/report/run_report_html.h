// The HTML report of one run: summary (problem, machine, stop reason, best kernel and its
// confirmed interval), best speedup over evaluations, the search tree with a detail panel
// per node, and the timing intervals and roofline position of every correct node.
#pragma once

#include <string>

#include "report/report_data.h"

namespace kernelevolve::report {

/// The whole page (report_page.h's shell). Element ids the tests and readers rely on:
/// #run-summary, #best-speedup-chart, #search-tree (one li.tree-node per node, nested
/// under its parent), #node-details (one section.node-detail per node), #correct-nodes
/// (one tr.correct-row per correct node), #confirmation when result.json has one.
std::string RunReportHtml(const RunReportData& data);

}  // namespace kernelevolve::report
