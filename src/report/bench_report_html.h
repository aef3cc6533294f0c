// The HTML report of a bench (`kernelevolve bench --out`): the suite's totals, its
// machine and flags, and one table row per problem with a link to that problem's report.
#pragma once

#include <filesystem>
#include <string>

#include "report/report_data.h"

namespace kernelevolve::report {

/// The whole page. #bench-totals holds the totals; table#problems-table one
/// tr.problem-row per problem of bench.json (outcome, speedup with its interval as a
/// forest plot around 1.0, roofline, evaluations, time, stop reason or message, and a
/// link to the problem's report.html, relative to `page_dir` (the folder the page is
/// written to), when that report was written).
std::string BenchReportHtml(const BenchReportData& data, const std::filesystem::path& page_dir);

}  // namespace kernelevolve::report
