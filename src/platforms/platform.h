// A hardware interpreter: builds candidates and runs them against the fixtures.
#pragma once

#include <filesystem>
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
  double timeout_seconds = 30;       // wall clock for the whole child process
  int64_t memory_limit_bytes = 4LL << 30;  // RLIMIT_AS of the child
  int threads = 1;                   // OMP_NUM_THREADS for the candidate
  /// OMP_WAIT_POLICY for the candidate: "" leaves OpenMP's default (threads spin
  /// between parallel regions, as in an ordinary PyTorch process); "passive" makes
  /// idle threads sleep, which keeps timings sane on an oversubscribed machine.
  std::string omp_wait_policy;
  bool measure = true;               // false: correctness only
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
};

}  // namespace kernelevolve::platforms
