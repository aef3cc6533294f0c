// The C++ side of the Python GPU runner (worker/kernelevolve_worker/gpu_runner.py):
// one long-lived runner process per GPU, replaced after a crash, a timeout or a
// sticky CUDA error, and prepared again for the problem it served.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/phase_times.h"
#include "core/timing.h"
#include "problem/worker_client.h"
#include "problem/worker_pool.h"

namespace kernelevolve::platforms::triton {

/// What the runner reports about its device (gpu_hello).
struct GpuDeviceInfo {
  bool cuda = false;             // torch.cuda.is_available() in the runner
  bool interpret = false;        // TRITON_INTERPRET=1: CPU tensors, timings meaningless
  std::string device_name;       // "NVIDIA H200", or "cpu (TRITON_INTERPRET=1)"
  std::string capability;        // "9.0"
  int sm_count = 0;
  int64_t l2_bytes = 0;          // torch.cuda.get_device_properties().L2_cache_size
  int64_t memory_bytes = 0;
  /// Shared memory a block may opt into and per SM, bytes (torch's device properties
  /// shared_memory_per_block_optin / shared_memory_per_multiprocessor; 0 when unknown).
  int64_t shared_memory_per_block_optin = 0;
  int64_t shared_memory_per_sm = 0;
  std::string torch_version;
  std::string triton_version;
  /// True when candidates can run: a GPU, or the interpreter.
  bool Usable() const { return cuda || interpret; }
};

/// Parses a gpu_hello result. Throws InvalidInputError on a malformed document.
GpuDeviceInfo DeviceInfoFromJson(const nlohmann::json& doc);

/// Eager PyTorch and torch.compile (default mode) timed on the GPU; unmeasured
/// (n == 0) when that baseline is missing, `notes` saying why.
struct GpuBaselines {
  core::TimingStats eager;
  core::TimingStats compile;
  std::vector<std::string> notes;
  /// Wall seconds of the runner's gpu_prepare steps ("gpu_prepare.fixtures",
  /// "gpu_prepare.baselines"); empty when the answer had none.
  core::PhaseTimes prepare_phases;
};

/// The last clause of GpuRunnerClient's no-GPU error: the TRITON_INTERPRET=1 way out,
/// which only --target triton has (CudaPlatform drops it: nvcc-built kernels need a GPU).
inline constexpr const char* kInterpretHint =
    ", or set TRITON_INTERPRET=1 to check Triton candidates on the CPU (slow; timings meaningless)";

/// Owns the runner process. Not thread-safe (the platform serializes calls).
class GpuRunnerClient {
 public:
  /// Starts the runner and asks gpu_hello. Throws InvalidInputError when no GPU is
  /// visible and TRITON_INTERPRET is not 1 (the message says how to fix it), or
  /// when triton cannot be imported; IoError when the interpreter is missing.
  explicit GpuRunnerClient(problem::WorkerOptions options, double start_timeout_seconds = 120);

  const GpuDeviceInfo& Device() const { return device_; }

  /// Prepares the runner for the fixtures at `manifest_path` (fixtures moved to the
  /// device, eager model and its torch.compile version built) unless it already is.
  /// `timeout_seconds` bounds this call (torch.compile can take a minute).
  /// Throws WorkerError / WorkerLostError from the runner.
  void Prepare(const std::filesystem::path& manifest_path, bool compile_baseline, double timeout_seconds);

  /// One call on the prepared runner; on WorkerLostError the process is already
  /// gone and the next call starts (and prepares) a fresh one.
  nlohmann::json Call(const std::string& method, const nlohmann::json& params, double timeout_seconds);
  /// One call that needs the device but no problem (gpu_bandwidth, gpu_matmul_peak):
  /// starts the runner if needed, never prepares it. Errors as Call's.
  nlohmann::json CallUnprepared(const std::string& method, const nlohmann::json& params,
                                double timeout_seconds);

  /// Replaces the runner process (after a sticky CUDA error); the next call
  /// prepares the new one again.
  void Restart();
  /// Number of runner processes started so far (1 after construction).
  int Starts() const { return starts_; }
  /// The prepare result notes (why a baseline is missing).
  const std::vector<std::string>& PrepareNotes() const { return prepare_notes_; }
  /// The last gpu_prepare's "phase_seconds" ({"fixtures", "baselines", "eager_error"}:
  /// wall seconds).
  const nlohmann::json& PreparePhaseSeconds() const { return prepare_phase_seconds_; }

 private:
  void EnsureStarted();
  void EnsurePrepared();

  problem::WorkerOptions options_;
  double start_timeout_seconds_;
  // Issue 22: from WorkerPool::Shared(); a healthy runner serves the next problem of
  // this process, one restarted after a crash or a sticky CUDA error is dead and dropped.
  problem::PooledWorker client_;
  GpuDeviceInfo device_;
  std::filesystem::path manifest_path_;
  bool compile_baseline_ = true;
  double prepare_timeout_seconds_ = 600;
  bool prepared_ = false;
  int starts_ = 0;
  std::vector<std::string> prepare_notes_;
  nlohmann::json prepare_phase_seconds_;
};

}  // namespace kernelevolve::platforms::triton
