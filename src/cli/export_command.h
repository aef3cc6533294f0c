// `kernelevolve export RUN_DIR [--out DIR]`: the run's best kernel as a
// KernelBench-format model_new.py (docs/export.md).
#pragma once

#include <filesystem>

namespace CLI {
class App;
}

namespace kernelevolve::cli {

struct ExportOptions {
  std::filesystem::path run_dir;  // the --out directory of an optimize run
  std::filesystem::path out_dir;  // --out; default RUN_DIR/export
};

/// Adds the `export` subcommand to `app`, filling `options`.
void AddExportCommand(CLI::App& app, ExportOptions& options);

/// Writes OUT/model_new.py, OUT/problem.py and OUT/best_kernel.<ext>
/// (report::ExportRun) and prints what it wrote and how to use it. Returns 0; throws
/// InvalidInputError (exit 2, one line) when RUN_DIR is not a run or found no correct kernel.
int RunExport(const ExportOptions& options);

}  // namespace kernelevolve::cli
