// What `kernelevolve optimize` and `kernelevolve eval` share before the first candidate
// is evaluated: checking the flags, the run directory, the problem loaded through the
// worker, the measurement options and the eager baseline timer. Factored out of
// cli/optimize_command.cpp (issue 20) so that `eval` judges a kernel exactly as the
// search judges its candidates.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/optimize_command.h"
#include "core/problem.h"
#include "exec/local_evaluator.h"
#include "platforms/cpu/cpu_platform.h"
#include "platforms/platform.h"
#include "platforms/triton/triton_platform.h"
#include "problem/worker_client.h"
#include "problem/worker_pool.h"
#include "report/run_summary.h"
#include "store/run_lock.h"

namespace kernelevolve::cli {

/// Seconds since the Unix epoch, now.
double UnixNow();

/// KE_FIXTURES read as the problem worker reads it (worker/kernelevolve_worker/
/// device_fixtures.py, requested_mode: trimmed, lower-cased): "files" (unset, empty or
/// "files"), "device", or "" for any other value (which the problem worker refuses).
std::string FixturesModeFromEnv();

/// --fixtures (o.fixtures), else KE_FIXTURES: sets KE_FIXTURES in this process when the
/// flag is given (the Python workers it starts read the variable; device_fixtures.py)
/// and stores the mode in o.fixtures ("files" or "device"). Throws InvalidInputError for
/// an unknown KE_FIXTURES value and for device fixtures on --target cpu.
void ResolveFixturesMode(OptimizeOptions& o);

/// Checks every flag of `o` before any work and fills in the automatic values: threads
/// (0: all CPUs), out_dir (runs/<problem>-<UTC time>), cache_dir (created), profile_top
/// and profile_during. Refuses an --out that already holds a run (unless o.resume) and
/// clears one that holds only a failed problem load. Throws InvalidInputError naming
/// the flag or file. Returns the lock on out_dir (issue 22), to hold for the whole run:
/// store::RunDirectoryBusyError (exit 2, naming the holder) when another process has it.
[[nodiscard]] store::RunDirectoryLock ValidateRunOptions(OptimizeOptions& o);

/// Creates OUT and OUT/logs; an unusable --out is the user's input error
/// (InvalidInputError naming --out).
void CreateRunDirectory(const std::filesystem::path& out_dir);

/// The summary fields known before the problem loads: problem name and path, target,
/// this machine (core::ProbeLocalMachine) with o.threads threads.
report::RunSummary BaseSummary(const OptimizeOptions& o);

/// --set NAME=VALUE texts as a map. Throws InvalidInputError on a malformed text or a
/// name given twice.
std::map<std::string, std::string> ParseOverrides(const std::vector<std::string>& sets);

/// The worker options of a run: log in OUT/logs/worker.log, o.threads, o.omp_wait_policy.
problem::WorkerOptions MakeWorkerOptions(const OptimizeOptions& o);

/// Loads the problem through `worker` (reference, o.seeds input sets, fixtures in
/// OUT/fixtures, eager baseline on o.threads threads for --target cpu; GPU targets time
/// eager on the device later), printing one line first unless o.quiet. When the problem
/// file is at fault (ProblemError, or the worker lost while running the reference) it
/// writes OUT/result.json (status "error") and OUT/logs/problem_error.log, prints one
/// line on stderr and returns nullopt: the caller exits with 2. Fills summary.problem,
/// eager_baseline and torch_version, and `load_parts` (when set) with the worker's load
/// steps.
std::optional<core::Problem> LoadRunProblem(problem::WorkerClient& worker, const OptimizeOptions& o,
                                            const std::map<std::string, std::string>& overrides,
                                            report::RunSummary& summary, core::PhaseTimes* load_parts = nullptr);

/// How candidates are run: threads, OMP wait policy, minimum and maximum timed time,
/// cache flushing, wall-clock and address-space limits (--candidate-memory-mb, else
/// derived from the problem's tensor sizes: at least 4 GiB).
platforms::RunOptions MakeRunOptions(const OptimizeOptions& o, const core::Problem& problem);

/// Times eager PyTorch once through the worker (the CPU targets' paired baseline), for
/// the same minimum and maximum time as a candidate measurement.
exec::BaselineTimer MakeBaselineTimer(problem::WorkerClient& worker, const OptimizeOptions& o);

/// A run whose problem has loaded: where candidates run, the worker that times eager
/// PyTorch, and the summary so far (machine with its peaks, problem, eager baseline).
struct PreparedRun {
  report::RunSummary summary;
  std::map<std::string, std::string> overrides;               // --set, parsed
  problem::PooledWorker worker;  // issue 22: from WorkerPool::Shared(), given back when the run ends
  std::unique_ptr<platforms::triton::TritonPlatform> gpu;     // GPU targets
  std::unique_ptr<platforms::cpu::CpuPlatform> cpu;           // --target cpu
  core::Problem problem;
  platforms::triton::GpuBaselines gpu_baselines;              // GPU targets
  platforms::Platform& Platform() {
    return gpu ? static_cast<platforms::Platform&>(*gpu) : static_cast<platforms::Platform&>(*cpu);
  }
};

/// What `optimize` and `eval` do after checking the flags (ValidateRunOptions): creates
/// OUT, starts the GPU runner on GPU targets (before the problem, so that no GPU fails
/// fast), loads the problem (LoadRunProblem), creates the platform, and attaches the
/// machine's measured peaks (CPU, cached per machine) or the GPU's baselines. nullopt
/// when the problem file is at fault (result.json and the log say why; exit 2).
/// Throws InvalidInputError for bad flags or files.
std::optional<PreparedRun> PrepareRun(const OptimizeOptions& o);

/// Held while this process times on its own CPU for a run (loading a problem: reference
/// runs and eager timing; the final confirmation), so that runs of one process that
/// overlap (bench --problems-at-once with --queue) never time at the same time.
std::mutex& OrchestratorTimingMutex();

/// The file extension of a kernel for `target`: ".cpp" (cpu), ".py" (triton), ".cu"
/// (cuda), as the platforms build them.
std::string KernelSourceExtension(const std::string& target);

}  // namespace kernelevolve::cli
