// `kernelevolve optimize PROBLEM`: the whole loop for one problem file.
#pragma once

#include <filesystem>
#include <ostream>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/llm_flags.h"

namespace kernelevolve::cli {

/// Every flag of `optimize`; the LLM operator's come from LlmFlags (cli/llm_flags.h).
struct OptimizeOptions : LlmFlags {
  std::filesystem::path problem_path;
  /// Where the summary table and the closing lines go (not a flag): null is std::cout;
  /// bench gives each problem's OUT/<problem>/summary.txt (several problems run at once).
  std::ostream* summary_out = nullptr;
  std::string target = "cpu";
  std::string nvcc;                   // --nvcc for --target cuda; "": $CUDACXX, else nvcc on PATH
  int budget = 40;                    // evaluations
  double time_limit_seconds = 600;
  std::filesystem::path out_dir;      // default runs/<problem>-<UTC timestamp>
  std::vector<std::string> sets;      // NAME=VALUE overrides
  int threads = 0;                    // 0: all online CPUs
  int seeds = 3;                      // input sets checked per candidate
  int drafts = 0;                     // 0: max(3, budget / 10)
  std::string policy = "greedy";
  int confirm_rounds = 8;             // interleaved rounds for the best kernel (A/A: 1/2^8)
  double min_time_seconds = 0.2;      // timed time per candidate measurement
  double max_time_seconds = 2.0;      // --max-time: cap of adaptive stopping per measurement (issue 4)
  bool cache_flush = false;           // --cache-flush: cold caches before every timed call, both sides
  double candidate_timeout_seconds = 60;
  int64_t candidate_memory_mb = 0;    // 0: derived from the problem size
  std::filesystem::path cache_dir;    // build cache; default ~/.cache/kernelevolve
  bool quiet = false;                 // no progress line
  double load_timeout_seconds = 300;  // importing the problem, running the reference, eager timing
  std::string omp_wait_policy;        // "" (OpenMP default), "passive" or "active", both sides
  /// --fixtures: "" (KE_FIXTURES, else files), "files" or "device" (GPU targets; issue 22).
  /// ValidateRunOptions resolves it to the mode the run uses.
  std::string fixtures;
  std::filesystem::path kb_path;      // knowledge base (issue 8); default <cache_dir>/knowledge.db
  bool no_kb = false;                 // --no-kb: no warm start, nothing recorded
  // Search engine (issue 3; docs/search.md).
  int jobs = 1;                       // candidates in flight
  uint64_t seed = 0;                  // every random choice of the search
  double ucb_c = 1.4142135623730951;  // sqrt(2): exploration weight of ucb1 and mcts
  int islands = 2;                    // evolutionary
  int migration_interval = 5;         // evolutionary: generations between migrations
  int stall = 0;                      // stop after this many evaluations without improvement; 0: off
  double stall_min_improvement_pct = 1.0;  // what counts as an improvement, percent
  double target_speedup = 0;          // stop once reached; 0: off
  std::string context = "both";       // inherit | siblings | both | clean
  int clean_slate_after = 0;          // 0: automatic; < 0: never
  std::string timing_isolation = "exclusive";  // exclusive | runs-only
  bool remeasure_machine = false;     // --remeasure-machine: probe bandwidth/FLOP peaks again (issue 5)
  int profile_top = -1;               // --profile-top: ncu on the N best after the search; -1: 1 on GPU targets, 0 on cpu (issue 6)
  double profile_timeout_seconds = 240;  // --profile-timeout: ncu wall-clock limit per candidate
  int profile_during = -1;            // --profile-during: ncu on nodes being expanded, steering their children;
                                      //   -1: 1 on GPU targets, 0 on cpu (issue 6; cli/gpu_profiling.h)
  // Evaluation queue (issue 22; docs/scale.md). Empty `queue`: evaluate on this machine.
  std::string queue;                  // --queue redis://HOST:PORT[/DB]: candidates go to `kernelevolve worker`s
  double queue_timeout_seconds = 3600;  // --queue-timeout: one job's wait for a result at most
  bool resume = false;                // set by `kernelevolve resume`: continue run resume_run_id
  int64_t resume_run_id = -1;         //   of out_dir/kernelevolve.db instead of creating one
};

/// Runs the search and writes OUT/{result.json, best_kernel.cpp, kernelevolve.db,
/// fixtures/, logs/}. Returns the process exit code: 0 ok, 1 no correct candidate,
/// 2 bad input (message printed), 3 internal or I/O failure.
int RunOptimize(const OptimizeOptions& options);

}  // namespace kernelevolve::cli
