#include "cli/report_command.h"

#include <fmt/format.h>

#include <iostream>

#include <CLI/CLI.hpp>

#include "report/write_report.h"

namespace kernelevolve::cli {

void AddReportCommand(CLI::App& app, ReportOptions& o) {
  auto* cmd = app.add_subcommand("report", "write a self-contained HTML report of a run or a bench folder");
  cmd->add_option("dir", o.dir, "run directory (optimize --out) or bench directory (bench --out)")->required();
  cmd->add_option("--out", o.out, "where to write the page (default DIR/report.html; a folder gets report.html inside)");
}

int RunReport(const ReportOptions& o) {
  const report::WrittenReport written = report::WriteReport(o.dir, o.out);
  for (const auto& warning : written.warnings) std::cerr << "warning: " << warning << "\n";
  if (written.kind == report::ReportKind::kBench) {
    std::cout << fmt::format("written: {} ({} problems; {} problem reports beside their runs)\n", written.path.string(),
                             written.problems, written.problem_reports.size());
  } else {
    std::cout << fmt::format("written: {} ({} nodes)\n", written.path.string(), written.nodes);
  }
  return 0;
}

}  // namespace kernelevolve::cli
