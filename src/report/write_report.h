// `kernelevolve report`: which kind of folder was given, and the report.html files
// written for it (a bench writes one per problem too).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kernelevolve::report {

enum class ReportKind { kRun, kBench };

/// What WriteReport wrote.
struct WrittenReport {
  ReportKind kind = ReportKind::kRun;
  std::filesystem::path path;  // the page for the folder given
  int nodes = 0;               // run: nodes in the search tree
  int problems = 0;            // bench: rows of the table
  std::vector<std::filesystem::path> problem_reports;  // bench: each problem's report.html written
  std::vector<std::string> warnings;  // bench: problems whose report could not be written, one line each
};

/// Writes the HTML report of `dir`: a bench directory (it holds bench.json) or a run
/// directory (it holds kernelevolve.db). The page goes to `out` when given (a folder
/// given there gets report.html inside), else to DIR/report.html; a bench also writes
/// RUN_DIR/report.html for every problem whose run directory holds a store (a problem
/// whose store is unreadable gets a warning and no link, the rest go on). Files are
/// written atomically.
/// Throws core::InvalidInputError with one line naming the path when `dir` is not a
/// folder, is neither a run nor a bench, or its bench.json / result.json is not JSON;
/// store::NotAStoreError when a run's kernelevolve.db is not a kernelevolve store;
/// core::IoError when the page cannot be written.
WrittenReport WriteReport(const std::filesystem::path& dir, const std::filesystem::path& out = {});

}  // namespace kernelevolve::report
