// `kernelevolve optimize PROBLEM`: the whole loop for one problem file.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kernelevolve::cli {

struct OptimizeOptions {
  std::filesystem::path problem_path;
  std::string target = "cpu";
  int budget = 40;                    // evaluations
  double time_limit_seconds = 600;
  std::filesystem::path out_dir;      // default runs/<problem>-<UTC timestamp>
  std::vector<std::string> sets;      // NAME=VALUE overrides
  int threads = 0;                    // 0: all online CPUs
  int seeds = 3;                      // input sets checked per candidate
  int drafts = 0;                     // 0: max(3, budget / 10)
  std::string policy = "greedy";
  int confirm_rounds = 5;             // interleaved rounds for the best kernel
  double min_time_seconds = 0.2;      // timed time per candidate measurement
  double candidate_timeout_seconds = 60;
  int64_t candidate_memory_mb = 0;    // 0: derived from the problem size
  std::filesystem::path cache_dir;    // build cache; default ~/.cache/kernelevolve
  bool quiet = false;                 // no progress line
  std::filesystem::path kb_path;      // knowledge base (issue 8); default <cache_dir>/knowledge.db
  bool no_kb = false;                 // --no-kb: no warm start, nothing recorded
};

/// Runs the search and writes OUT/{result.json, best_kernel.cpp, kernelevolve.db,
/// fixtures/, logs/}. Returns the process exit code: 0 ok, 1 no correct candidate,
/// 2 bad input (message printed), 3 internal or I/O failure.
int RunOptimize(const OptimizeOptions& options);

}  // namespace kernelevolve::cli
