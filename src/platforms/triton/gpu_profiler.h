// Profiling on the GPU targets (issue 6), through the GPU runner: the torch.profiler
// breakdown of the eager baseline, and Nsight Compute (ncu) on one call of a candidate
// (worker/kernelevolve_worker/gpu_profile.py, ncu_profile.py). Failures are notes: a
// run never stops because a profiler is missing, not permitted, slow or broken.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kernel_profile.h"
#include "core/problem.h"
#include "platforms/triton/triton_platform.h"

namespace kernelevolve::platforms::triton {

/// One row of the eager breakdown: a CUDA kernel (or, without CUDA, an operator).
struct BaselineKernel {
  std::string name;
  double calls = 0;     // launches per eager call
  double total_us = 0;  // its own device time per eager call, microseconds
  double share = 0;     // of the breakdown's total, 0..1
};

/// torch.profiler over a few eager calls (gpu_profile.baseline_breakdown).
struct BaselineProfile {
  std::string activity;                 // "cuda" | "cpu" | "" (not profiled)
  int calls = 0;                        // profiled eager calls
  double total_us = 0;                  // every ranked event, per eager call
  std::vector<BaselineKernel> kernels;  // largest first
  std::string note;                     // why it is missing ("" when profiled)
};

/// Reads a gpu_profile_baseline answer. Throws InvalidInputError when malformed.
BaselineProfile BaselineProfileFromJson(const nlohmann::json& doc);
/// {"activity", "calls", "total_us", "kernels": [{"name", "calls", "total_us", "share"}], "note"}.
nlohmann::json BaselineProfileToJson(const BaselineProfile& profile);
/// Up to `lines` lines "  73%  41.2 us  1 x void at::native::..." (names cut to 90
/// characters), or one line with the note.
std::vector<std::string> BaselineProfileLines(const BaselineProfile& profile, size_t lines = 3);

/// Profiles the eager baseline of `problem` on the runner (`calls` eager calls, the
/// `top` largest kernels). Never throws for the profiler's or the runner's failure:
/// the note says what went wrong.
BaselineProfile ProfileEagerBaseline(TritonPlatform& gpu, const core::Problem& problem,
                                     int calls = 5, int top = 5, double timeout_seconds = 300);

/// Runs ncu on one call of the candidate built at `artifact` (its .py module or .so),
/// on seed 0 of `problem`'s fixtures; `timeout_seconds` bounds ncu (the runner call
/// gets 30 s more). Without a CUDA device (TRITON_INTERPRET=1) status "skipped".
/// Never throws for ncu's or the runner's failure: status and note say what happened.
core::KernelProfile ProfileCandidate(TritonPlatform& gpu, const core::Problem& problem,
                                     const std::filesystem::path& artifact,
                                     double timeout_seconds = 240);

}  // namespace kernelevolve::platforms::triton
