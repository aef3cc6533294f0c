// Profiling steps of `kernelevolve optimize` on GPU targets (issue 6; docs/gpu.md
// "Profiling"): the eager baseline's torch.profiler breakdown once per problem, and
// Nsight Compute on the nodes being expanded during the search (--profile-during: the
// profile steers the next proposal) and on the best candidates after it (--profile-top),
// stored per node, written to result.json and printed. A missing or failing profiler
// is one line; the run goes on.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kernel_profile.h"
#include "core/problem.h"
#include "platforms/triton/triton_platform.h"
#include "search/node.h"
#include "store/store.h"

namespace kernelevolve::cli {

/// --profile-top as given (-1: the default) -> candidates to profile: 1 on GPU targets,
/// 0 on CPU. Throws InvalidInputError for values below -1 or above 3, and for N > 0 on a
/// CPU target ("needs a GPU target", as ProfileDuringFor).
int ProfileTopFor(int profile_top, bool gpu_target);

/// --profile-during as given (-1: the default) -> profiles during the search: 1 on GPU
/// targets, 0 on CPU. Throws InvalidInputError for values outside -1..8 (ncu costs
/// ~20-60 s per call on an H200), and for N > 0 on a CPU target ("needs a GPU target").
int ProfileDuringFor(int profile_during, bool gpu_target);

/// Nsight Compute on one node's kernel: rebuilds the candidate (gpu.Build, served from
/// the build cache) and runs triton::ProfileCandidate bounded by `timeout_seconds`. A
/// failed rebuild gives status "failed" with the build message as note; never throws
/// for candidate failures.
core::KernelProfile ProfileNode(platforms::triton::TritonPlatform& gpu, const core::Problem& problem,
                                const search::Node& node, double timeout_seconds);

/// search::SearchOptions::profiler for optimize (--profile-during): ProfileNode, with,
/// unless `quiet`, "profiling node N with ncu before expanding it (at most T s)..." and
/// then the ProfileLine on stderr; `before_print` (may be empty) runs first, e.g. to
/// close the console's progress line. `gpu` and `problem` must outlive the profiler.
std::function<core::KernelProfile(const search::Node&)> SearchProfiler(
    platforms::triton::TritonPlatform& gpu, const core::Problem& problem, double timeout_seconds,
    bool quiet, std::function<void()> before_print = {});

/// The eager breakdown (platforms/triton/gpu_profiler.h) as result.json's
/// gpu.baseline_profile; unless `quiet`, its top 3 lines on stderr.
nlohmann::json ProfileBaselineStep(platforms::triton::TritonPlatform& gpu,
                                   const core::Problem& problem, bool quiet);

/// Profiles the `top_n` best correct nodes of `run_id` (Store::TopK) with ncu
/// (ProfileNode), each bounded by `timeout_seconds`, and saves each profile in the store
/// (even a failed one, with its note); a node that already has a profile in the store
/// (taken during the search) keeps it unless its status is "failed". Returns
/// result.json's "profiles": [{"node_id", "rank" (1: best by fitness), "during_search"
/// (the profile was taken during the search), "profile" (core::KernelProfileToJson),
/// "diagnosis": {"bottleneck", "text"} (DiagnoseWithProfile)}]: the top nodes first,
/// then every other node of `searched` (the run's nodes) profiled during the search.
/// Unless `quiet`, one line per new profile on stderr (the metrics, or the note). No new
/// profile is taken once a profile (of `searched` or of this step) says ncu cannot work
/// here (search::ProfilerUnusable).
nlohmann::json ProfileTopCandidates(platforms::triton::TritonPlatform& gpu,
                                    const core::Problem& problem, store::Store& store,
                                    int64_t run_id, int top_n, double timeout_seconds, bool quiet,
                                    const std::vector<search::Node>& searched = {});

/// The console lines for result.json's "profiles" and gpu.baseline_profile (either may
/// be null): "eager baseline (torch.profiler, cuda): ..." then the top 3 kernels, and
/// "node 12 (#1, during the search): ncu: ..." with its diagnosis.
std::vector<std::string> ProfileSummaryLines(const nlohmann::json& baseline_profile,
                                             const nlohmann::json& profiles);

}  // namespace kernelevolve::cli
