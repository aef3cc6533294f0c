// `kernelevolve bench SUITE_DIR`: the optimize search on every problem file of a folder,
// one after another, with KernelBench-style totals (docs/bench.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/llm_flags.h"

namespace CLI {
class App;
}

namespace kernelevolve::cli {

/// Every flag of `bench`; with --llm (LlmFlags, issue 21) the language model writes every
/// problem's candidates, --max-cost capping each problem's run.
struct BenchOptions : LlmFlags {
  std::filesystem::path suite_dir;
  std::string target = "cpu";
  int budget = 20;                    // evaluations per problem
  double time_limit_seconds = 600;    // search wall time per problem
  std::vector<std::string> sets;      // --set NAME=VALUE, applied to every problem
  int threads = 0;                    // 0: all CPUs
  int seeds = 3;
  int drafts = 0;
  int jobs = 1;
  int problems_at_once = 0;           // --problems-at-once: 0 = automatic (the queue's live workers, else 1)
  std::string queue;  // --queue redis://HOST:PORT[/DB] (issue 22)
  uint64_t seed = 0;
  std::string policy = "greedy";
  double min_time_seconds = 0.2;
  int confirm_rounds = 8;             // interleaved rounds for each problem's best kernel (A/A: 1/2^8)
  double candidate_timeout_seconds = 60;
  double load_timeout_seconds = 300;
  std::string omp_wait_policy;
  std::string fixtures;               // --fixtures: "", files or device (OptimizeOptions::fixtures)
  std::filesystem::path out_dir;      // default runs/bench-<UTC time>
  bool resume = false;                // --resume: continue the bench in out_dir (same suite and flags)
  std::filesystem::path cache_dir;    // build cache; default ~/.cache/kernelevolve
  std::filesystem::path kb_path;      // empty: no knowledge base (each problem starts cold)
  bool no_kb = false;                 // --no-kb: the default already; accepted as optimize has it
  bool remeasure_machine = false;
  bool quiet = false;                 // no per-problem progress lines
  std::filesystem::path sizes_file;   // --sizes: per-problem constants (cli/bench_sizes.h); empty: none
  int profile_top = 0;                // --profile-top: ncu on each problem's N best (GPU targets; default none)
  double profile_timeout_seconds = 240;
  int profile_during = 0;             // --profile-during: ncu on N nodes being expanded, per problem (default none)
};

/// Adds the `bench` subcommand to `app`, filling `options`.
void AddBenchCommand(CLI::App& app, BenchOptions& options);

/// The problem files of a suite: every regular `*.py` file directly in `dir` whose name
/// does not start with '_' (no __init__.py), sorted by name. Throws InvalidInputError
/// when `dir` is not a directory or holds none.
std::vector<std::filesystem::path> SuiteProblems(const std::filesystem::path& dir);

/// Runs `kernelevolve optimize` on every problem of the suite in OUT/<problem>/ (its
/// console summary in OUT/<problem>/summary.txt), --problems-at-once of them at a time
/// (only with --queue: several at once on this CPU would disturb each other's timings;
/// the loads and confirmations that time on this machine still take turns), in one
/// process whose Python workers serve problem after problem, never stopping at a problem that fails
/// to load, is unsupported or makes kernelevolve fail (recorded as such), with one line
/// per problem on stderr (with --llm: that problem's LLM cost and the suite's so far). After each problem OUT/bench.json and OUT/bench.txt are
/// rewritten, so Ctrl-C (which stops the problem in flight as optimize does) leaves
/// every finished problem recorded; with --resume the same command continues the bench
/// in OUT (same suite, measurement flags, machine kind and problem files, else
/// InvalidInputError naming each difference): finished entries are kept, an interrupted
/// problem resumes its own run, one that ended "error" runs again. Prints the table on
/// stdout. Returns 0 when the suite ran (whatever each problem's outcome), 2 on bad
/// input, 128 + signal when interrupted.
int RunBench(const BenchOptions& options);

}  // namespace kernelevolve::cli
