#include "cli/gpu_profiling.h"

#include <fmt/format.h>

#include "core/error.h"
#include "operators/template/profile_diagnosis.h"
#include "platforms/triton/gpu_profiler.h"

namespace kernelevolve::cli {
namespace {

using nlohmann::json;
namespace triton = platforms::triton;

/// Statuses after which profiling another candidate cannot succeed either.
bool HopelessHere(const core::KernelProfile& p) {
  return p.status == "unavailable" || p.status == "not_permitted" || p.status == "skipped";
}

}  // namespace

int ProfileTopFor(int profile_top, bool gpu_target) {
  if (profile_top < -1 || profile_top > 3) {
    throw core::InvalidInputError(
        fmt::format("--profile-top {}: give 0 (no profiling) to 3 best candidates (ncu takes "
                    "~20-60 s per candidate)",
                    profile_top));
  }
  if (profile_top == -1) return gpu_target ? 1 : 0;
  return profile_top;
}

json ProfileBaselineStep(triton::TritonPlatform& gpu, const core::Problem& problem, bool quiet) {
  const triton::BaselineProfile p = triton::ProfileEagerBaseline(gpu, problem);
  if (!quiet) {
    fmt::print(stderr, "eager baseline (torch.profiler{}):\n",
               p.activity.empty() ? "" : ", " + p.activity);
    for (const auto& line : triton::BaselineProfileLines(p)) fmt::print(stderr, "  {}\n", line);
  }
  return triton::BaselineProfileToJson(p);
}

json ProfileTopCandidates(triton::TritonPlatform& gpu, const core::Problem& problem,
                          store::Store& store, int64_t run_id, int top_n, double timeout_seconds,
                          bool quiet) {
  json profiles = json::array();
  if (top_n <= 0) return profiles;
  const std::vector<search::Node> best = store.TopK(run_id, top_n);
  for (size_t rank = 0; rank < best.size(); ++rank) {
    const search::Node& node = best[rank];
    if (!quiet)
      fmt::print(stderr, "profiling node {} with ncu (at most {:.0f} s)...\n", node.id,
                 timeout_seconds);
    core::KernelProfile profile;
    const platforms::BuildResult build = gpu.Build(node.candidate);  // the cached source (or .so)
    if (build.status != core::Status::kOk) {
      profile.status = "failed";
      profile.note = "ncu: could not rebuild the candidate: " + build.message;
    } else {
      profile = triton::ProfileCandidate(gpu, problem, build.artifact, timeout_seconds);
    }
    store.SaveProfile(node.id, profile);
    const operators::Diagnosis d = operators::DiagnoseWithProfile(node.evaluation, profile);
    profiles.push_back(
        {{"node_id", node.id},
         {"rank", rank + 1},
         {"profile", core::KernelProfileToJson(profile)},
         {"diagnosis",
          {{"bottleneck", operators::BottleneckName(d.bottleneck)}, {"text", d.text}}}});
    if (!quiet) fmt::print(stderr, "node {}: {}\n", node.id, operators::ProfileLine(profile));
    if (HopelessHere(profile)) break;
  }
  return profiles;
}

std::vector<std::string> ProfileSummaryLines(const json& baseline, const json& profiles) {
  std::vector<std::string> lines;
  if (baseline.is_object()) {
    const triton::BaselineProfile p = triton::BaselineProfileFromJson(baseline);
    lines.push_back(fmt::format("eager baseline (torch.profiler{}): top kernels per call",
                                p.activity.empty() ? "" : ", " + p.activity));
    for (const auto& line : triton::BaselineProfileLines(p)) lines.push_back("  " + line);
  }
  if (profiles.is_array()) {
    for (const auto& entry : profiles) {
      const core::KernelProfile p = core::KernelProfileFromJson(entry.at("profile"));
      lines.push_back(fmt::format("node {} (#{}): {}", entry.value("node_id", -1),
                                  entry.value("rank", 0), operators::ProfileLine(p)));
      if (p.Ok()) lines.push_back("  diagnosis: " + entry.at("diagnosis").value("text", ""));
    }
  }
  return lines;
}

}  // namespace kernelevolve::cli
