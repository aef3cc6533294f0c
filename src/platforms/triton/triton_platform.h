// The Triton hardware interpreter: candidates are Python modules with @triton.jit
// kernels and a launcher; a long-lived GPU runner process checks and times them.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "platforms/platform.h"
#include "platforms/triton/gpu_runner_client.h"

namespace kernelevolve::platforms::triton {

/// Builds a candidate by writing its source to `<cache_dir>/<hash>.py` (Triton
/// compiles at the first launch, so compile errors surface as kCompileError from
/// Run), and runs it in the GPU runner (docs/gpu.md): every seed checked with
/// outputs pre-filled with NaN and checked after a current-stream snapshot and a
/// device-wide synchronize (side-stream work is rejected), inputs checked for
/// mutation, then timed with CUDA events, L2 flushed before every call, interleaved
/// with eager PyTorch and torch.compile. A crash, a timeout or a sticky CUDA error
/// replaces the runner; the candidate gets that status.
class TritonPlatform : public Platform {
 public:
  /// `cache_dir`: where sources are written (created). `runner_options`: the Python
  /// runner process (interpreter, package dir, log). `prepare_timeout_seconds`
  /// bounds loading fixtures and compiling the torch.compile baseline.
  /// Throws InvalidInputError when no GPU is visible and TRITON_INTERPRET != 1.
  TritonPlatform(std::filesystem::path cache_dir, problem::WorkerOptions runner_options,
                 double prepare_timeout_seconds = 600);

  std::string Name() const override { return "triton"; }
  BuildResult Build(const core::Candidate& candidate) override;
  /// Status mapping: runner verdict ("ok", "incorrect", "compile_error",
  /// "runtime_error", "out_of_memory", "rejected_by_check"); runner did not answer
  /// within options.timeout_seconds -> kTimeout; runner died -> kCrash; the runner
  /// is replaced in both cases and after a sticky CUDA error. latency: drop-in
  /// (outputs allocated per call); kernel_only: preallocated outputs.
  RunResult Run(const BuildResult& build, const core::Problem& problem, const RunOptions& options) override;
  core::MachineContext Machine() const override;

  /// Times eager PyTorch and torch.compile on the device (gpu_time_baselines).
  GpuBaselines TimeBaselines(const core::Problem& problem, const RunOptions& options);
  /// The eager and torch.compile figures timed interleaved with the last correct
  /// candidate (unmeasured before the first).
  GpuBaselines LastPairedBaselines() const;
  /// Device-to-device copy bandwidth in 1e9 bytes/s (read + write), measured once
  /// per device and cached in `<cache_dir>/gpu_peaks.json` keyed by device name;
  /// 0 in interpreter mode.
  double CopyBandwidthGbps();
  /// torch.mm throughput in 1e12 FLOP/s by dtype name ("float16", "bfloat16",
  /// "float32", "tf32"): 8192^3, median of 10 CUDA-event timings (gpu_peaks.py),
  /// measured once per device and cached in `<cache_dir>/gpu_peaks.json` beside the
  /// copy bandwidth; empty in interpreter mode. Throws WorkerError when the runner
  /// fails to measure.
  std::map<std::string, double> MatmulPeakTflops();
  const GpuDeviceInfo& Device() const { return runner_.Device(); }
  /// How many runner processes were started (1 + replacements).
  int RunnerStarts() const { return runner_.Starts(); }
  /// One runner call for `problem` (the runner prepared for it first), serialized with
  /// Run: the profiling methods gpu_profile_baseline and gpu_ncu (triton/gpu_profiler.h).
  /// A runner lost during the call is replaced and the WorkerLostError rethrown;
  /// WorkerError as the runner raised it.
  nlohmann::json CallForProblem(const core::Problem& problem, const std::string& method,
                                const nlohmann::json& params, double timeout_seconds);

 private:
  void PrepareFor(const core::Problem& problem);
  nlohmann::json TimingParams(const RunOptions& options) const;

  std::filesystem::path cache_dir_;
  double prepare_timeout_seconds_;
  mutable std::mutex mutex_;
  GpuRunnerClient runner_;
  GpuBaselines last_paired_;
  std::map<std::string, double> matmul_peaks_;  // MatmulPeakTflops, once read or measured
};

/// Maps a gpu_run answer to a RunResult (samples -> eval::Summarize). Exposed for
/// tests. Throws InvalidInputError on a malformed answer.
RunResult RunResultFromRunner(const nlohmann::json& answer);

/// The Status for a runner that was lost during a candidate: kTimeout when the
/// message says it did not answer in time, else kCrash.
core::Status LostRunnerStatus(const std::string& message);

}  // namespace kernelevolve::platforms::triton
