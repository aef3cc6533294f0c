#include "report/write_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "report/bench_report_html.h"
#include "report/report_data.h"
#include "report/run_report_html.h"
#include "report/run_summary.h"

namespace kernelevolve::report {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPageName = "report.html";

fs::path PagePath(const fs::path& dir, const fs::path& out) {
  if (out.empty()) return dir / kPageName;
  std::error_code ignored;
  if (fs::is_directory(out, ignored)) return out / kPageName;
  const fs::path parent = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (!fs::is_directory(parent, ignored)) {
    throw core::InvalidInputError(fmt::format("--out {}: folder '{}' does not exist", out.string(), parent.string()));
  }
  return out;
}

}  // namespace

WrittenReport WriteReport(const fs::path& dir, const fs::path& out) {
  std::error_code ignored;
  if (!fs::is_directory(dir, ignored)) {
    throw core::InvalidInputError(fmt::format("{}: not a folder; give a run directory (optimize --out) or a bench "
                                              "directory (bench --out)", dir.string()));
  }
  WrittenReport written;
  written.path = PagePath(dir, out);
  if (fs::is_regular_file(dir / "bench.json", ignored)) {
    written.kind = ReportKind::kBench;
    BenchReportData data = LoadBenchReport(dir);
    for (auto& problem : data.problems) {
      if (!fs::is_regular_file(problem.run_dir / "kernelevolve.db", ignored)) {
        problem.report_error = "its run directory holds no kernelevolve.db";
        continue;
      }
      try {
        const fs::path page = problem.run_dir / kPageName;
        WriteTextAtomic(page, RunReportHtml(LoadRunReport(problem.run_dir)));
        problem.report_path = page;
        written.problem_reports.push_back(page);
      } catch (const core::Error& e) {  // NotAStoreError is an IoError, a core::Error
        problem.report_error = e.what();
        written.warnings.push_back(fmt::format("{}: no report: {}", problem.run_dir.string(), e.what()));
      }
    }
    written.problems = static_cast<int>(data.problems.size());
    WriteTextAtomic(written.path, BenchReportHtml(data, written.path.parent_path().empty() ? fs::path(".")
                                                                                         : written.path.parent_path()));
    return written;
  }
  if (fs::exists(dir / "kernelevolve.db", ignored)) {
    const RunReportData data = LoadRunReport(dir);
    written.nodes = static_cast<int>(data.nodes.size());
    WriteTextAtomic(written.path, RunReportHtml(data));
    return written;
  }
  if (fs::is_regular_file(dir / "result.json", ignored)) {
    // A run that ended before it stored anything (its problem did not load).
    std::string reason = "?";
    try {
      const nlohmann::json result = ReadJsonFile(dir / "result.json");
      reason = result.value("stop_reason", std::string("?"));
      if (result.contains("error") && result["error"].is_object()) {
        reason += ": " + result["error"].value("message", std::string());
      }
    } catch (const std::exception&) {  // unreadable: the reason stays "?"
    }
    throw core::InvalidInputError(fmt::format(
        "{}: the run stored no candidates, so there is nothing to report (result.json: {})", dir.string(), reason));
  }
  throw core::InvalidInputError(fmt::format("{}: neither a run directory (no kernelevolve.db) nor a bench directory "
                                            "(no bench.json)", dir.string()));
}

}  // namespace kernelevolve::report
