#include "cli/resume_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/optimize_command.h"
#include "cli/run_config.h"
#include "core/error.h"
#include "store/run_lock.h"
#include "store/store.h"

namespace kernelevolve::cli {

namespace fs = std::filesystem;

void AddResumeCommand(CLI::App& app, ResumeOptions& o) {
  auto* cmd = app.add_subcommand(
      "resume", "continue an interrupted run (killed, crashed) with the flags it was started with");
  cmd->add_option("run_dir", o.run_dir, "the run directory (optimize's --out)")->required();
  cmd->add_flag("--quiet", o.quiet, "no progress line");
}

int RunResume(const ResumeOptions& options) {
  const fs::path db = options.run_dir / "kernelevolve.db";
  if (!fs::is_regular_file(db)) {
    // Issue 22: a run that is still loading its problem has no store yet but holds the
    // lock; name its holder (RunDirectoryBusyError) rather than "no kernelevolve.db".
    if (fs::is_regular_file(options.run_dir / store::kRunLockFileName)) {
      store::RunDirectoryLock probe = store::RunDirectoryLock::Acquire(options.run_dir, "resume");
    }
    if (fs::is_regular_file(options.run_dir / "bench.json")) {
      throw core::InvalidInputError(fmt::format(
          "{} is a bench directory: `kernelevolve bench PROBLEMS --out {} --resume` continues it "
          "(`resume` takes one optimize run, such as {}/PROBLEM)",
          options.run_dir.string(), options.run_dir.string(), options.run_dir.string()));
    }
    throw core::InvalidInputError(fmt::format(
        "{}: no kernelevolve.db here; give the --out directory of a `kernelevolve optimize` run",
        options.run_dir.string()));
  }
  // Issue 22: the run's store is read below; a live optimize or resume on it refuses us.
  // RunOptimize takes the same lock again (re-entrant within this process).
  store::RunDirectoryLock run_lock = store::RunDirectoryLock::Acquire(options.run_dir, "resume");
  store::RunRecord run;
  {
    auto store = store::Store::Open(db);
    std::vector<store::RunRecord> runs = store.ListRuns();
    if (runs.empty()) {
      throw core::InvalidInputError(fmt::format("{}: the database holds no run", db.string()));
    }
    run = runs.back();
  }
  if (run.status != "running" && run.status != "interrupted") {
    fmt::print(stderr,
               "{}: run {} already finished (status {}, stopped by {}); nothing to resume, see "
               "{}\n",
               options.run_dir.string(), run.id, run.status, run.stop_reason,
               (options.run_dir / "result.json").string());
    return 0;
  }
  if (run.config.is_object() && run.config.value("command", std::string("optimize")) == "eval") {
    throw core::InvalidInputError(fmt::format(
        "{}: run {} is a `kernelevolve eval` of one kernel, not a search; run the eval again",
        options.run_dir.string(), run.id));
  }
  OptimizeOptions o = OptionsFromRun(run);
  if (!fs::is_regular_file(o.problem_path)) {
    throw core::InvalidInputError(fmt::format(
        "{}: the problem file of run {} is gone; restore it to resume", o.problem_path.string(),
        run.id));
  }
  // The fixtures are rebuilt from the file: an edited problem would mix nodes timed on
  // the old shapes with new ones in one tree.
  if (const std::string warning = CheckProblemUnchanged(run, o); !warning.empty()) {
    fmt::print(stderr, "{}\n", warning);
  }
  o.out_dir = options.run_dir;
  o.quiet = options.quiet;
  o.summary_out = options.summary_out;
  o.resume = true;
  o.resume_run_id = run.id;
  if (!o.quiet) {
    fmt::print(stderr, "resuming run {} of {} ({} policy, budget {}) in {}\n", run.id,
               o.problem_path.string(), o.policy, o.budget, options.run_dir.string());
  }
  return RunOptimize(o);
}

}  // namespace kernelevolve::cli
