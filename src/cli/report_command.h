// `kernelevolve report RUN_DIR|BENCH_DIR [--out FILE]`: writes the self-contained HTML
// report of a run or a bench (docs/report.md).
#pragma once

#include <filesystem>

namespace CLI {
class App;
}

namespace kernelevolve::cli {

struct ReportOptions {
  std::filesystem::path dir;  // a run directory (optimize --out) or a bench directory (bench --out)
  std::filesystem::path out;  // the page; empty: DIR/report.html
};

/// Adds the `report` subcommand to `app`, filling `options`.
void AddReportCommand(CLI::App& app, ReportOptions& options);

/// Writes the report (report/write_report.h) and prints where. Returns 0; bad input
/// (not a run or bench folder, a db that is not a kernelevolve store) is thrown as
/// InvalidInputError / NotAStoreError, which main reports with exit 2.
int RunReport(const ReportOptions& options);

}  // namespace kernelevolve::cli
