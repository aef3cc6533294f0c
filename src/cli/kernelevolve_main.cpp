// kernelevolve: search for faster kernels for PyTorch reference problems.
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/compare_command.h"
#include "cli/export_command.h"
#include "cli/config_file.h"
#include "cli/eval_command.h"
#include "cli/kb_command.h"
#include "cli/number_flags.h"
#include "cli/ops_command.h"
#include "cli/optimize_command.h"
#include "cli/report_command.h"
#include "cli/resume_command.h"
#include "cli/search_flags.h"
#include "cli/suggest.h"
#include "cli/worker_command.h"
#include "core/error.h"
#include "problem/worker_client.h"
#include "store/store.h"

namespace {

/// For a message that says the disk is full (the OS's ENOSPC text, from the worker's
/// Python or from C++, or SQLite's SQLITE_FULL text), what to do next; else "".
std::string DiskFullHint(const std::string& what) {
  if (what.find("No space left on device") == std::string::npos &&
      what.find("database or disk is full") == std::string::npos) {
    return "";
  }
  return "the disk is full: free some space (the run's fixtures and the compile cache, "
         "~/.cache/kernelevolve, are the largest files), then `kernelevolve resume RUN_DIR` (or "
         "`kernelevolve bench ... --out DIR --resume`) continues from the last stored candidate\n";
}

using kernelevolve::cli::AddSharedSearchFlags;
using kernelevolve::cli::OptimizeOptions;

void AddOptimize(CLI::App& app, OptimizeOptions& o) {
  auto* cmd = app.add_subcommand("optimize", "search for a faster kernel for one problem file");
  cmd->add_option("problem", o.problem_path, "KernelBench-format problem file (.py)")->required();
  cmd->add_option("--target", o.target, "hardware interpreter: cpu, triton or cuda (NVIDIA GPU; docs/gpu.md)")->default_val("cpu");
  cmd->add_option("--nvcc", o.nvcc, "nvcc for --target cuda (default: $CUDACXX, else nvcc on PATH)");
  cmd->add_option("--budget", o.budget, "candidate evaluations at most")->default_val(40);
  cmd->add_option("--time-limit", o.time_limit_seconds, "search wall time at most, seconds")->default_val(600);
  cmd->add_option("--out", o.out_dir, "run directory (default runs/<problem>-<UTC time>)");
  cmd->add_option("--set", o.sets, "override a module-level constant of the problem, NAME=VALUE (repeatable)");
  AddSharedSearchFlags(*cmd, o);  // --threads ... --profile-timeout, as `bench` has them
  cmd->add_option("--confirm-rounds", o.confirm_rounds, "interleaved eager/candidate rounds for the best kernel (0: skip; >= 8 keeps the A/A false-positive rate under 0.4%)")->default_val(8);
  cmd->add_option("--max-time", o.max_time_seconds,
                  "wall seconds per measurement at most while its 95% interval is wider than 2% of the median")
      ->default_val(2.0)
      ->check(kernelevolve::cli::PositiveSeconds());
  cmd->add_flag("--cache-flush", o.cache_flush,
                "write 2x the last-level cache before every timed call (cold-cache timing; eager and "
                "candidates alike; costs a few ms per call)");
  cmd->add_option("--candidate-memory-mb", o.candidate_memory_mb, "address-space limit per candidate, MiB (0: from problem size)")->default_val(0);
  cmd->add_option("--profile-top", o.profile_top, "GPU targets: Nsight Compute on the N best candidates after the search (0: none; default 1 on GPU targets)")->default_val(-1);
  cmd->add_option("--profile-during", o.profile_during,
                  "GPU targets: Nsight Compute on up to N nodes as the search expands them (the best "
                  "usually), fed to the next proposal; ~20-60 s each, only while no candidate is in "
                  "flight (with --jobs > 1: rarely) (0: none; default 1 on GPU targets, at most 8)")
      ->default_val(-1);
  cmd->add_flag("--quiet", o.quiet, "no progress line");
  cmd->add_option("--load-timeout", o.load_timeout_seconds,
                  "limit for loading the problem (import, reference runs, eager timing), seconds")
      ->default_val(300)
      ->check(kernelevolve::cli::LoadTimeoutSeconds());
  cmd->add_option("--kb", o.kb_path, "knowledge base (default $KERNELEVOLVE_KB or <cache dir>/knowledge.db)");
  cmd->add_flag("--no-kb", o.no_kb, "no warm start from, and no record in, the knowledge base");
  // Search engine (issue 3; docs/search.md).
  cmd->add_option("--jobs", o.jobs, "candidates in flight (builds in parallel, timed runs one at a time)")->default_val(1);
  // Issue 22: the evaluation queue (docs/scale.md).
  cmd->add_option("--queue", o.queue, "evaluate candidates on `kernelevolve worker`s through a Redis stream: redis://HOST:PORT[/DB] (docs/scale.md)");
  cmd->add_option("--queue-timeout", o.queue_timeout_seconds, "with --queue: seconds one job may wait for its result")
      ->default_val(3600)
      ->check(kernelevolve::cli::PositiveSeconds());  // NaN refused here (issue 22: it was stored as null)
  cmd->add_option("--ucb-c", o.ucb_c, "exploration weight of ucb1 and mcts")->default_val(1.4142135623730951);
  cmd->add_option("--islands", o.islands, "islands of the evolutionary policy")->default_val(2);
  cmd->add_option("--migration-interval", o.migration_interval, "evolutionary: generations between migrations of the best")->default_val(5);
  cmd->add_option("--stall", o.stall, "stop after K evaluations without improvement (0: off)")->default_val(0);
  cmd->add_option("--stall-min-improvement", o.stall_min_improvement_pct, "percent gain that counts as an improvement")->default_val(1.0);
  cmd->add_option("--target-speedup", o.target_speedup, "stop once a kernel reaches this speedup (0: off)")->default_val(0);
  cmd->add_option("--context", o.context, "what a new candidate sees: inherit | siblings | both | clean")->default_val("both");
  cmd->add_option("--clean-slate-after", o.clean_slate_after, "fresh draft after N evaluations without improvement (0: auto, -1: never)")->default_val(0);
  cmd->add_option("--timing-isolation", o.timing_isolation, "exclusive (no compile during a timed run) | runs-only")->default_val("exclusive");
  AddLlmFlags(*cmd, o);  // LLM operator (issues 7, 21; docs/llm.md)
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kernelevolve: search for faster kernels for PyTorch operators"};
  app.require_subcommand(1);
  OptimizeOptions optimize;
  AddOptimize(app, optimize);
  kernelevolve::cli::KbOptions kb;  // knowledge base (issue 8)
  kernelevolve::cli::AddKbCommand(app, kb);
  kernelevolve::cli::ResumeOptions resume;  // search engine (issue 3)
  kernelevolve::cli::AddResumeCommand(app, resume);
  kernelevolve::cli::CompareOptions compare;
  kernelevolve::cli::AddCompareCommand(app, compare);
  kernelevolve::cli::BenchOptions bench;  // issue 5: suite benchmark
  kernelevolve::cli::AddBenchCommand(app, bench);
  kernelevolve::cli::ExportOptions export_options;  // issue 20: model_new.py
  kernelevolve::cli::AddExportCommand(app, export_options);
  kernelevolve::cli::OpsOptions ops_options;  // issue 17: the Core ATen lowering table
  kernelevolve::cli::AddOpsCommand(app, ops_options);
  kernelevolve::cli::EvalOptions eval;  // issue 20: judge one kernel file
  kernelevolve::cli::AddEvalCommand(app, eval);
  // Issue 20: --config FILE.toml for the commands that take run flags (cli/config_file.h).
  std::map<std::string, std::filesystem::path> config_files;
  for (const auto& name : kernelevolve::cli::ConfigurableCommands()) {
    kernelevolve::cli::AddConfigOption(*app.get_subcommand(name), config_files[name]);
  }
  kernelevolve::cli::WorkerCommandOptions worker;  // issue 22: evaluation queue worker
  kernelevolve::cli::AddWorkerCommand(app, worker);
  kernelevolve::cli::ReportOptions report;  // issue 20: HTML report
  kernelevolve::cli::AddReportCommand(app, report);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = kernelevolve::cli::UnknownWordsMessage(app, e, {argv + 1, argv + argc});
    if (unknown.empty()) return app.exit(e) == 0 ? 0 : 2;  // --help, or CLI11's own message
    std::cerr << unknown << "Run with --help for more information.\n";
    return 2;
  }
  try {
    for (const auto& [name, file] : config_files) {
      if (app.got_subcommand(name) && !file.empty()) kernelevolve::cli::ApplyConfigFile(*app.get_subcommand(name), file);
    }
    if (app.got_subcommand("optimize")) return kernelevolve::cli::RunOptimize(optimize);
    if (app.got_subcommand("kb")) return kernelevolve::cli::RunKbCommand(*app.get_subcommand("kb"), kb);
    if (app.got_subcommand("resume")) return kernelevolve::cli::RunResume(resume);
    if (app.got_subcommand("compare")) return kernelevolve::cli::RunCompare(compare);
    if (app.got_subcommand("bench")) return kernelevolve::cli::RunBench(bench);
    if (app.got_subcommand("export")) return kernelevolve::cli::RunExport(export_options);
    if (app.got_subcommand("ops")) return kernelevolve::cli::RunOps(ops_options);
    if (app.got_subcommand("eval")) return kernelevolve::cli::RunEval(eval);
    if (app.got_subcommand("report")) return kernelevolve::cli::RunReport(report);
    if (app.got_subcommand("worker")) return kernelevolve::cli::RunWorker(worker);
  } catch (const kernelevolve::core::InvalidInputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const kernelevolve::core::IoError& e) {
    // The environment, not our bug: a full disk, an unwritable folder, a garbage
    // kernelevolve.db (store::NotAStoreError), a database another tool locked.
    std::cerr << "error: " << e.what() << "\n" << DiskFullHint(e.what());
    return 2;
  } catch (const std::exception& e) {
    const std::string hint = DiskFullHint(e.what());  // a full disk seen by the worker
    if (!hint.empty()) {
      std::cerr << "error: " << e.what() << "\n" << hint;
      return 2;
    }
    std::cerr << "kernelevolve: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
