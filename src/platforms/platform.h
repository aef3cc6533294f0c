// A hardware interpreter: builds candidates and runs them against the fixtures.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/candidate.h"
#include "core/evaluation.h"
#include "core/machine.h"
#include "core/problem.h"
#include "core/status.h"

namespace kernelevolve::platforms {

/// Result of compiling one candidate. A failed build is a value, not an exception.
struct BuildResult {
  core::Status status = core::Status::kCompileError;  // kOk or kCompileError
  std::string message;               // first error line, or "ok"
  std::string log;                   // compiler output (truncated to 16 KiB)
  std::filesystem::path artifact;    // the shared object, when ok
  std::string source_hash;           // ContentHash(source + flags + compiler version)
  double seconds = 0;                // wall time of the compile (0 on a cache hit)
  bool cache_hit = false;
};

/// How hard to measure one candidate.
struct RunOptions {
  double warmup_seconds = 0.05;      // minimum warm-up time before timing
  double min_time_seconds = 0.25;    // keep repeating until this much timed time...
  int min_repetitions = 10;          // ...and at least this many calls
  int max_repetitions = 2000;
  /// Adaptive stopping (issue 4): past the minimums, timing goes on until the 95%
  /// interval of the median is within 2% of it, or this much wall time was spent
  /// timing (TimingStats::converged says which).
  double max_time_seconds = 2.0;
  /// Flush the caches (write 2x the last-level cache) before every timed call, untimed,
  /// on the candidate's side and eager PyTorch's alike. Off by default on the CPU: every
  /// sample becomes a cold-cache call and each costs a few ms more (docs/measuring.md).
  bool flush_cache = false;
  double timeout_seconds = 30;       // wall clock for the whole child process
  int64_t memory_limit_bytes = 4LL << 30;  // RLIMIT_AS of the child
  int threads = 1;                   // OMP_NUM_THREADS for the candidate
  /// OMP_WAIT_POLICY for the candidate: "" leaves OpenMP's default (threads spin
  /// between parallel regions, as in an ordinary PyTorch process); "passive" makes
  /// idle threads sleep, which keeps timings sane on an oversubscribed machine.
  std::string omp_wait_policy;
  bool measure = true;               // false: correctness only
  /// CPU: also time the kernel with preallocated outputs (RunResult::kernel_only).
  /// exec::ConfirmSpeedup turns it off: its rounds compare drop-in latency alone.
  bool time_kernel_only = true;
};

/// Result of checking and timing one built candidate.
struct RunResult {
  core::Status status = core::Status::kWorkerLost;
  std::string message;
  std::string log_excerpt;           // child's stderr tail
  bool correct = false;
  std::vector<core::OutputCheck> checks;
  core::TimingStats latency;         // drop-in (outputs allocated per call)
  core::TimingStats kernel_only;     // outputs preallocated
  double seconds = 0;                // wall time of the child
  /// Degraded-machine probe (issue 4; platforms/cpu/degraded_probe.h): wall time of a
  /// fixed FMA workload right before and right after the timing, microseconds; 0 when
  /// not timed. `degraded` with its reason when the two differ by more than 1.3x or both
  /// are 1.3x slower than the fastest probe this platform has seen.
  double probe_before_us = 0;
  double probe_after_us = 0;
  double probe_reference_us = 0;     // fastest probe seen by the platform so far
  bool degraded = false;
  std::string degraded_reason;
};

class Platform {
 public:
  virtual ~Platform() = default;
  /// "cpu", "cuda", "triton".
  virtual std::string Name() const = 0;
  /// Compiles (or fetches from the content-hash cache) one candidate.
  virtual BuildResult Build(const core::Candidate& candidate) = 0;
  /// Runs a built candidate in a sandboxed child on every fixture of `problem`,
  /// checks outputs, and times it when correct and options.measure is set.
  virtual RunResult Run(const BuildResult& build, const core::Problem& problem,
                        const RunOptions& options) = 0;
  /// Machine facts for result records (compiler filled in).
  virtual core::MachineContext Machine() const = 0;
  /// Runs `measurement` (an eager PyTorch timing, done outside this platform) bracketed
  /// by the platform's degraded-machine probe on `threads` threads, and returns why the
  /// machine counts as degraded during it (RunResult::degraded's rules and reference),
  /// or nullopt. Platforms without a probe just run it and return nullopt.
  virtual std::optional<std::string> DegradedDuring(const std::function<void()>& measurement, int threads) {
    (void)threads;
    measurement();
    return std::nullopt;
  }
};

}  // namespace kernelevolve::platforms
