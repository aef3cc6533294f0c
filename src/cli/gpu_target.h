// --target triton in `kernelevolve optimize` (issue 6): the GPU runner platform, its
// baselines (eager PyTorch and torch.compile on the GPU) and result.json's "gpu".
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/optimize_command.h"
#include "core/problem.h"
#include "exec/evaluator.h"
#include "exec/local_evaluator.h"
#include "platforms/triton/triton_platform.h"
#include "report/run_summary.h"

namespace kernelevolve::cli {

/// Targets `optimize` accepts: "cpu", "triton" and "cuda". Throws InvalidInputError
/// naming --target otherwise.
void ValidateTarget(const std::string& target);

/// What MakeGpuPlatform needs: `target` ("triton" or "cuda"; anything else gives null),
/// the cache folder (sources under <cache_dir>/triton or <cache_dir>/cuda), the GPU
/// runner's log file, nvcc for cuda ("": $CUDACXX, else nvcc on PATH), the seconds
/// the runner may take to prepare a problem (load fixtures, compile the torch.compile
/// baseline), and whether to print the device line.
struct GpuPlatformOptions {
  std::string target;
  std::filesystem::path cache_dir;
  std::filesystem::path runner_log;
  std::string nvcc;
  double prepare_timeout_seconds = 300;
  bool quiet = false;
};

/// As below, from GpuPlatformOptions (`kernelevolve worker --target triton|cuda`).
std::unique_ptr<platforms::triton::TritonPlatform> MakeGpuPlatform(const GpuPlatformOptions& options);

/// For --target triton or cuda: starts the GPU runner (log:
/// <out>/logs/gpu_runner.log; sources: <cache>/triton, or <cache>/cuda with the .so
/// objects nvcc builds: a platforms::cuda::CudaPlatform) before the problem is
/// loaded, so a machine without a GPU fails at once (InvalidInputError, exit 2)
/// unless TRITON_INTERPRET=1 (--target triton only: --target cuda under
/// TRITON_INTERPRET=1 is refused before any runner starts, InvalidInputError naming
/// platforms::cuda::kNeedsGpuNote); --target cuda also fails at once without nvcc. Null
/// for any other target.
std::unique_ptr<platforms::triton::TritonPlatform> MakeGpuPlatform(const OptimizeOptions& options);

/// The dtype whose matmul peak bounds `problem`: its first output's dtype when float16
/// or bfloat16, else "tf32": the fastest a float32 kernel can multiply is on TF32 tensor
/// cores (the "tf32" and "tf32x3" input precisions of the Triton main loops), so the
/// IEEE float32 peak would put such kernels above 100% (a TF32 convolution read "424% FMA
/// peak" on an H100). GpuPeakGflops falls back to "float32" where "tf32" is unmeasured.
std::string PeakDtype(const core::Problem& problem);

/// The GPU compute peak for the roofline of `problem`, 1e9 FLOP/s: torch.mm
/// throughput of PeakDtype(problem) (TritonPlatform::MatmulPeakTflops, cached per
/// device); 0 in interpreter mode or when the runner could not measure it (a note is
/// printed unless `quiet`).
double GpuPeakGflops(platforms::triton::TritonPlatform& gpu, const core::Problem& problem, bool quiet);

/// After the problem is loaded: times eager PyTorch and torch.compile on the GPU
/// and makes the GPU eager figure the run's baseline (problem.eager_baseline,
/// summary.eager_baseline), measures (or reads the cached) device copy bandwidth
/// and matmul peak (GpuPeakGflops) into summary.machine for roofline fractions, and names the device in
/// summary.machine.compiler. Returns the baselines.
platforms::triton::GpuBaselines PrepareGpuRun(platforms::triton::TritonPlatform& gpu, core::Problem& problem,
                                              report::RunSummary& summary,
                                              const platforms::RunOptions& run_options, bool quiet);

/// Why the interleaved confirmation is skipped on `gpu` (null: the CPU target): under
/// TRITON_INTERPRET=1 both sides run on the CPU and their timings say nothing about GPU
/// speed. Empty when it runs.
std::string ConfirmationSkipReason(const platforms::triton::TritonPlatform* gpu);

/// The paired eager baseline of the last timed candidate (timed inside the runner,
/// interleaved with it), as a BaselineTimer for the evaluator and confirmation.
exec::BaselineTimer GpuPairedEagerTimer(platforms::triton::TritonPlatform& gpu);

/// result.json's "gpu" object: {"target" ("triton" | "cuda"), "device", "capability", "triton_version",
/// "copy_bandwidth_gbps", "matmul_peak_tflops" ({dtype: 1e12 FLOP/s}), "peak_gflops"
/// (the compute peak the roofline used), "eager_us", "torch_compile_us" (stats objects, GPU, at
/// load), "paired_eager_us", "paired_torch_compile_us" (with the last timed
/// candidate), "best_speedup_vs_torch_compile" (paired, medians; 0 when unknown),
/// "notes", "timing_note" (set under TRITON_INTERPRET=1), "runner_starts"}; for
/// cuda also "nvcc" (release line) and "nvcc_flags".
nlohmann::json GpuResultJson(platforms::triton::TritonPlatform& gpu,
                             const platforms::triton::GpuBaselines& at_load, const report::RunSummary& summary);

}  // namespace kernelevolve::cli
