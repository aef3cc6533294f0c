// Profiling steps of `kernelevolve optimize` on GPU targets (issue 6; docs/gpu.md
// "Profiling"): the eager baseline's torch.profiler breakdown once per problem, and
// Nsight Compute on the best candidates after the search, stored per node, written to
// result.json and printed. A missing or failing profiler is one line; the run goes on.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.h"
#include "platforms/triton/triton_platform.h"
#include "store/store.h"

namespace kernelevolve::cli {

/// --profile-top as given (-1: the default) -> candidates to profile: 1 on GPU targets,
/// 0 on CPU. Throws InvalidInputError for values below -1 or above 3.
int ProfileTopFor(int profile_top, bool gpu_target);

/// The eager breakdown (platforms/triton/gpu_profiler.h) as result.json's
/// gpu.baseline_profile; unless `quiet`, its top 3 lines on stderr.
nlohmann::json ProfileBaselineStep(platforms::triton::TritonPlatform& gpu,
                                   const core::Problem& problem, bool quiet);

/// Profiles the `top_n` best correct nodes of `run_id` (Store::TopK) with ncu, each
/// bounded by `timeout_seconds`, saves each profile in the store (even a failed one,
/// with its note), and returns result.json's "profiles": [{"node_id", "rank",
/// "profile" (core::KernelProfileToJson), "diagnosis": {"bottleneck", "text"}
/// (DiagnoseWithProfile)}]. Unless `quiet`, one line per node on stderr (the metrics, or
/// the note). Stops early after a profile whose status says ncu cannot work here
/// (unavailable, not_permitted, skipped).
nlohmann::json ProfileTopCandidates(platforms::triton::TritonPlatform& gpu,
                                    const core::Problem& problem, store::Store& store,
                                    int64_t run_id, int top_n, double timeout_seconds, bool quiet);

/// The console lines for result.json's "profiles" and gpu.baseline_profile (either may
/// be null): "eager baseline (torch.profiler, cuda): ..." then the top 3 kernels, and
/// "ncu, node 12: ..." with its diagnosis.
std::vector<std::string> ProfileSummaryLines(const nlohmann::json& baseline_profile,
                                             const nlohmann::json& profiles);

}  // namespace kernelevolve::cli
