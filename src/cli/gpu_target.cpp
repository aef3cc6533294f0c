#include "cli/gpu_target.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "core/error.h"
#include "eval/result_json.h"
#include "platforms/cuda/cuda_platform.h"

namespace kernelevolve::cli {

namespace triton = platforms::triton;

void ValidateTarget(const std::string& target) {
  if (target == "cpu" || target == "triton" || target == "cuda") return;
  throw core::InvalidInputError(fmt::format("--target {}: unknown target (available: cpu, triton, cuda)", target));
}

std::unique_ptr<triton::TritonPlatform> MakeGpuPlatform(const GpuPlatformOptions& o) {
  if (o.target != "triton" && o.target != "cuda") return nullptr;
  problem::WorkerOptions runner;
  runner.log_path = o.runner_log;
  runner.threads = 1;
  std::unique_ptr<triton::TritonPlatform> gpu;
  if (o.target == "cuda") {
    // Issue (walkthrough): the interpreter runs Triton kernels only; every nvcc-built
    // candidate would fail as runtime_error and the run end "no correct candidate".
    const char* interpret = std::getenv("TRITON_INTERPRET");
    if (interpret != nullptr && std::string(interpret) == "1") {
      throw core::InvalidInputError(std::string("--target cuda under TRITON_INTERPRET=1: ") +
                                    platforms::cuda::kNeedsGpuNote +
                                    ", or unset TRITON_INTERPRET on a machine with a GPU");
    }
    gpu = std::make_unique<platforms::cuda::CudaPlatform>(o.cache_dir / "cuda", runner, o.nvcc,
                                                          o.prepare_timeout_seconds);
  } else {
    gpu = std::make_unique<triton::TritonPlatform>(o.cache_dir / "triton", runner, o.prepare_timeout_seconds);
  }
  if (!o.quiet) {
    const auto& d = gpu->Device();
    if (d.cuda) {
      fmt::print(stderr, "GPU runner: {} (sm {}, {} SMs, L2 {} MiB), torch {}, triton {}\n", d.device_name,
                 d.capability, d.sm_count, d.l2_bytes >> 20, d.torch_version, d.triton_version);
    } else {  // no device to describe: the interpreter runs on the CPU
      fmt::print(stderr, "GPU runner: {}, torch {}, triton {}; correctness only\n", report::kInterpretWording,
                 d.torch_version, d.triton_version);
    }
    if (const auto* cuda = dynamic_cast<const platforms::cuda::CudaPlatform*>(gpu.get())) {
      fmt::print(stderr, "CUDA builder: {} ({}), {}\n", cuda->Builder().NvccPath(), cuda->Builder().Version(),
                 cuda->Builder().Flags());
    }
  }
  return gpu;
}

std::unique_ptr<triton::TritonPlatform> MakeGpuPlatform(const OptimizeOptions& o) {
  return MakeGpuPlatform(GpuPlatformOptions{o.target, o.cache_dir, o.out_dir / "logs" / "gpu_runner.log", o.nvcc,
                                            o.load_timeout_seconds, o.quiet});
}

std::string PeakDtype(const core::Problem& problem) {
  const core::DType d = problem.outputs.empty() ? core::DType::kFloat32 : problem.outputs[0].dtype;
  return d == core::DType::kFloat16 || d == core::DType::kBFloat16 ? std::string(core::DTypeName(d)) : "tf32";
}

double GpuPeakGflops(triton::TritonPlatform& gpu, const core::Problem& problem, bool quiet) {
  try {
    const auto peaks = gpu.MatmulPeakTflops();
    auto it = peaks.find(PeakDtype(problem));
    if (it == peaks.end() && PeakDtype(problem) == "tf32") it = peaks.find("float32");
    return it == peaks.end() ? 0 : it->second * 1e3;
  } catch (const problem::WorkerError& e) {  // the roofline falls back to bandwidth only
    if (!quiet) fmt::print(stderr, "note: no GPU matmul peak: {}\n", e.what());
    return 0;
  }
}

triton::GpuBaselines PrepareGpuRun(triton::TritonPlatform& gpu, core::Problem& problem, report::RunSummary& s,
                                   const platforms::RunOptions& run_options, bool quiet) {
  s.gpu_interpret = !gpu.Device().cuda;
  if (!quiet) {
    fmt::print(stderr, "timing eager PyTorch and torch.compile {}...\n",
               s.gpu_interpret ? report::kInterpretWording : "on the GPU");
  }
  triton::GpuBaselines baselines = gpu.TimeBaselines(problem, run_options);
  for (const auto& note : baselines.notes) fmt::print(stderr, "note: {}\n", note);
  if (baselines.eager.Measured()) {
    problem.eager_baseline = baselines.eager;
    s.eager_baseline = baselines.eager;
  }
  s.machine.compiler = gpu.Machine().compiler;
  s.machine.torch_version = gpu.Device().torch_version;
  s.machine.copy_bandwidth_gbps = gpu.CopyBandwidthGbps();
  s.machine.peak_gflops = GpuPeakGflops(gpu, problem, quiet);  // issue 6: torch.mm peak of the problem's dtype
  if (!quiet && s.machine.copy_bandwidth_gbps > 0) {
    fmt::print(stderr, "device copy bandwidth: {:.0f} GB/s, matmul peak ({}) {:.0f} TFLOP/s; eager {:.1f} us, "
               "torch.compile {:.1f} us (medians)\n", s.machine.copy_bandwidth_gbps, PeakDtype(problem),
               s.machine.peak_gflops / 1e3, baselines.eager.median_us, baselines.compile.median_us);
  }
  return baselines;
}

std::string ConfirmationSkipReason(const triton::TritonPlatform* gpu) {
  if (gpu == nullptr || gpu->Device().cuda) return "";
  return "skipped: TRITON_INTERPRET=1 runs kernels on the CPU, so their timings say nothing about GPU speed";
}

exec::BaselineTimer GpuPairedEagerTimer(triton::TritonPlatform& gpu) {
  return [&gpu]() { return gpu.LastPairedBaselines().eager; };
}

nlohmann::json GpuResultJson(triton::TritonPlatform& gpu, const triton::GpuBaselines& at_load,
                             const report::RunSummary& s) {
  const auto& d = gpu.Device();
  const triton::GpuBaselines paired = gpu.LastPairedBaselines();
  const core::TimingStats& compile = paired.compile.Measured() ? paired.compile : at_load.compile;
  double vs_compile = 0;
  if (s.best && compile.Measured() && s.best->evaluation.latency.median_us > 0) {
    vs_compile = compile.median_us / s.best->evaluation.latency.median_us;
  }
  nlohmann::json out = {{"target", gpu.Name()},
                         {"device", d.device_name},
                         {"capability", d.capability},
                         {"triton_version", d.triton_version},
                         {"copy_bandwidth_gbps", s.machine.copy_bandwidth_gbps},
          {"matmul_peak_tflops", gpu.MatmulPeakTflops()},  // issue 6: by dtype, cached
          {"peak_gflops", s.machine.peak_gflops},           // the one the roofline used
                         {"eager_us", eval::TimingStatsToJson(at_load.eager)},
                         {"torch_compile_us", eval::TimingStatsToJson(at_load.compile)},
                         {"paired_eager_us", eval::TimingStatsToJson(paired.eager)},
                         {"paired_torch_compile_us", eval::TimingStatsToJson(paired.compile)},
                         {"best_speedup_vs_torch_compile", vs_compile},
                         {"notes", at_load.notes},
                         {"timing_note", d.cuda ? "" : "TRITON_INTERPRET=1 on the CPU: timings say nothing about GPU speed"},
                         {"runner_starts", gpu.RunnerStarts()}};
  if (const auto* cuda = dynamic_cast<const platforms::cuda::CudaPlatform*>(&gpu)) {
    out["nvcc"] = cuda->Builder().Version();
    out["nvcc_flags"] = cuda->Builder().Flags();
  }
  return out;
}

}  // namespace kernelevolve::cli
