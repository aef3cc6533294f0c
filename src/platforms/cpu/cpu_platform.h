// The CPU hardware interpreter: g++ builds, kernelevolve-cpu-harness runs.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>

#include "eval/sandbox.h"
#include "platforms/cpu/cpu_builder.h"
#include "platforms/platform.h"

namespace kernelevolve::platforms::cpu {

/// Builds candidates with CpuBuilder and runs each in a sandboxed
/// kernelevolve-cpu-harness child. The child's environment is exactly
///   OMP_NUM_THREADS=<options.threads>, OMP_PROC_BIND=false, PATH=/usr/bin:/bin
/// (OMP_PROC_BIND=false: several evaluations may share the machine, and pinning each
/// one's threads to cores 0..n-1 would stack them on the same cores; the eager
/// baseline runs unpinned too, so the comparison stays fair).
class CpuPlatform : public Platform {
 public:
  /// `cache_dir`: build cache (created). `harness_path`: the kernelevolve-cpu-harness
  /// executable. `compiler`: as for CpuBuilder. Throws InvalidInputError when the
  /// harness is not executable or the compiler is unusable.
  CpuPlatform(std::filesystem::path cache_dir, std::filesystem::path harness_path,
              std::string compiler = "g++");

  std::string Name() const override { return "cpu"; }
  BuildResult Build(const core::Candidate& candidate) override;
  /// Runs the harness on problem.fixtures_dir/manifest.json. Limits: wall clock
  /// options.timeout_seconds, address space options.memory_limit_bytes, CPU time
  /// 2 * threads * timeout + 10 s. Outcome mapping, in order: wall timeout or SIGXCPU
  /// -> kTimeout; exit code 3, or "out of memory"/"bad_alloc" on stderr without a
  /// verdict -> kOutOfMemory; SIGSYS (the seccomp filter killed it) -> kRejectedByCheck;
  /// any other signal -> kCrash ("killed by SIGSEGV"); else the
  /// verdict on the last stdout line; none -> kWorkerLost. log_excerpt: stderr tail,
  /// at most 4 KiB. A build that is not kOk is returned as its status, not run.
  /// Throws IoError only when the child cannot be spawned.
  /// Timed runs carry the harness's degraded-machine probes; the fastest probe seen by
  /// this platform is the reference (probe_reference_us), and `degraded` is set by
  /// DegradedReason (degraded_probe.h). options.flush_cache raises the address-space
  /// limit by the flush buffer (2x the last-level cache).
  RunResult Run(const BuildResult& build, const core::Problem& problem,
                const RunOptions& options) override;
  /// ProbeLocalMachine() with the compiler's version line; threads and torch_version
  /// are left for the caller.
  core::MachineContext Machine() const override;
  /// Brackets `measurement` with RunFmaProbeUs(threads) before and after, folds the
  /// faster probe into the reference every Run uses, and returns DegradedReason's verdict.
  std::optional<std::string> DegradedDuring(const std::function<void()>& measurement, int threads) override;

  const CpuBuilder& Builder() const { return builder_; }

 private:
  CpuBuilder builder_;
  std::filesystem::path harness_path_;
  std::filesystem::path scratch_dir_;
  /// Makes the faster of two probes the reference when it beats it; returns the reference.
  double FoldProbe(double before_us, double after_us);

  std::mutex probe_mutex_;
  double fastest_probe_us_ = 0;  // over every timed run of this platform; 0 = none yet
};

/// Maps a finished harness child to a RunResult (the mapping documented on Run).
/// Exposed for tests.
RunResult InterpretHarnessOutcome(const eval::SandboxResult& outcome, double timeout_seconds);

/// "SIGSEGV" for SIGSEGV, ..., "signal 42" for one without a name.
std::string SignalName(int signal);

}  // namespace kernelevolve::platforms::cpu
