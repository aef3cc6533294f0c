// --target triton in `kernelevolve optimize` (issue 6): the GPU runner platform, its
// baselines (eager PyTorch and torch.compile on the GPU) and result.json's "gpu".
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "cli/optimize_command.h"
#include "core/problem.h"
#include "exec/evaluator.h"
#include "exec/local_evaluator.h"
#include "platforms/triton/triton_platform.h"
#include "report/run_summary.h"

namespace kernelevolve::cli {

/// Targets `optimize` accepts: "cpu" and "triton" ("cuda" is named in the error
/// as not built yet). Throws InvalidInputError naming --target otherwise.
void ValidateTarget(const std::string& target);

/// For --target triton: starts the GPU runner (log: <out>/logs/gpu_runner.log,
/// sources: <cache>/triton) before the problem is loaded, so a machine without a
/// GPU fails at once (InvalidInputError, exit 2) unless TRITON_INTERPRET=1. Null
/// for any other target.
std::unique_ptr<platforms::triton::TritonPlatform> MakeGpuPlatform(const OptimizeOptions& options);

/// After the problem is loaded: times eager PyTorch and torch.compile on the GPU
/// and makes the GPU eager figure the run's baseline (problem.eager_baseline,
/// summary.eager_baseline), measures (or reads the cached) device copy bandwidth
/// into summary.machine for roofline fractions, and names the device in
/// summary.machine.compiler. Returns the baselines.
platforms::triton::GpuBaselines PrepareGpuRun(platforms::triton::TritonPlatform& gpu, core::Problem& problem,
                                              report::RunSummary& summary,
                                              const platforms::RunOptions& run_options, bool quiet);

/// The paired eager baseline of the last timed candidate (timed inside the runner,
/// interleaved with it), as a BaselineTimer for the evaluator and confirmation.
exec::BaselineTimer GpuPairedEagerTimer(platforms::triton::TritonPlatform& gpu);

/// result.json's "gpu" object: {"device", "capability", "triton_version",
/// "copy_bandwidth_gbps", "eager_us", "torch_compile_us" (stats objects, GPU, at
/// load), "paired_eager_us", "paired_torch_compile_us" (with the last timed
/// candidate), "best_speedup_vs_torch_compile" (paired, medians; 0 when unknown),
/// "notes", "timing_note" (set under TRITON_INTERPRET=1), "runner_starts"}.
nlohmann::json GpuResultJson(platforms::triton::TritonPlatform& gpu,
                             const platforms::triton::GpuBaselines& at_load, const report::RunSummary& summary);

}  // namespace kernelevolve::cli
