// `kernelevolve resume RUN_DIR`: continues an interrupted run with the flags it was
// started with (docs/search.md, "Resume").
#pragma once

#include <filesystem>
#include <ostream>

namespace CLI {
class App;
}

namespace kernelevolve::cli {

struct ResumeOptions {
  std::filesystem::path run_dir;  // the --out directory of the interrupted run
  bool quiet = false;             // no progress line
  /// Where optimize's console summary goes (nullptr: stdout); `bench --resume` points it
  /// at the problem's summary.txt.
  std::ostream* summary_out = nullptr;
};

/// Adds the `resume` subcommand to `app`, filling `options`.
void AddResumeCommand(CLI::App& app, ResumeOptions& options);

/// Opens RUN_DIR/kernelevolve.db, takes its last run, and when it is still marked
/// running (killed or crashed) runs `optimize` again on it with its stored flags: the
/// worker and fixtures are re-created, evaluated nodes are kept, pending candidates are
/// evaluated first, and the budget counts every node of the run. A run that finished is
/// left alone (message, exit 0). Returns optimize's exit code; throws InvalidInputError
/// when RUN_DIR holds no run or a run that cannot be resumed.
int RunResume(const ResumeOptions& options);

}  // namespace kernelevolve::cli
