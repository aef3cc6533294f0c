// Loads a KernelBench-format problem file through the worker into a core::Problem.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/phase_times.h"
#include "core/problem.h"
#include "problem/worker_client.h"

namespace kernelevolve::problem {

/// How the eager baseline is timed by the worker (same rules as the candidate runs).
struct BaselineTiming {
  double warmup_seconds = 0.1;
  double min_time_seconds = 0.5;
  int min_repetitions = 20;
  int max_repetitions = 5000;
  double max_time_seconds = 2.0;  // adaptive stopping cap (baseline.py, issue 4)
  bool flush_cache = false;       // write 2x the last-level cache before every timed call
};

struct LoadOptions {
  std::filesystem::path problem_path;
  std::map<std::string, std::string> overrides;  // --set NAME=VALUE
  std::vector<int> seeds = {0, 1, 2};
  std::filesystem::path fixtures_dir;            // created by the worker
  int threads = 1;
  int64_t memory_budget_bytes = 0;               // 0: half of the available memory
  BaselineTiming baseline;
  /// false: no eager timing on the CPU (GPU targets time eager on the device, so the
  /// problem's eager_baseline stays unmeasured, n == 0).
  bool time_eager = true;
  /// When set, receives the wall seconds of the worker's load steps ("load.import",
  /// "load.references", "load.fixture_writes", "load.edge_sets", "load.capture",
  /// "load.eager_timing"; issue 22), as its answer's "phase_seconds" gives them.
  core::PhaseTimes* phases = nullptr;
  double timeout_seconds = 600;                  // whole load, reference runs included
};

/// Thrown when the user's problem file is at fault (syntax error, missing functions,
/// reference raises, inputs too large). what() is one line naming the file and the
/// cause; traceback() holds the Python traceback for the log.
class ProblemError : public core::InvalidInputError {
 public:
  ProblemError(const std::string& message, std::string traceback)
      : core::InvalidInputError(message), traceback_(std::move(traceback)) {}
  const std::string& traceback() const { return traceback_; }

 private:
  std::string traceback_;
};

/// Parses "NAME=VALUE"; throws InvalidInputError naming the flag when malformed.
std::pair<std::string, std::string> ParseOverride(const std::string& text);

/// Loads the problem: the worker imports it, applies overrides, checks memory, draws
/// inputs for each seed, runs the reference, writes fixtures (manifest.json and
/// seed_<k>.safetensors in options.fixtures_dir) and, unless options.time_eager is
/// false, times eager PyTorch with options.threads threads. Throws ProblemError (the file's fault), InvalidInputError
/// (missing file), WorkerLostError / WorkerError (the worker's fault).
core::Problem LoadProblem(WorkerClient& worker, const LoadOptions& options);

/// Bytes of memory currently available (MemAvailable in /proc/meminfo), 0 if unknown.
int64_t AvailableMemoryBytes();

}  // namespace kernelevolve::problem
