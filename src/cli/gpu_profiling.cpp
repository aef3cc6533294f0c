#include "cli/gpu_profiling.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "core/error.h"
#include "operators/template/profile_diagnosis.h"
#include "platforms/triton/gpu_profiler.h"
#include "search/search_loop.h"

namespace kernelevolve::cli {
namespace {

using nlohmann::json;
namespace triton = platforms::triton;

/// One entry of result.json's "profiles".
json ProfileEntry(const search::Node& node, int rank, bool during_search,
                  const core::KernelProfile& profile) {
  const operators::Diagnosis d = operators::DiagnoseWithProfile(node.evaluation, profile);
  return {{"node_id", node.id},
          {"rank", rank},
          {"during_search", during_search},
          {"profile", core::KernelProfileToJson(profile)},
          {"diagnosis", {{"bottleneck", operators::BottleneckName(d.bottleneck)}, {"text", d.text}}}};
}

/// Rank by fitness among the correct nodes of `nodes` (1: best; ties: the lower id, as
/// Store::TopK); 0 when `node` is not correct.
int FitnessRank(const std::vector<search::Node>& nodes, const search::Node& node) {
  if (!node.evaluation.correct) return 0;
  int rank = 1;
  for (const search::Node& n : nodes) {
    if (!n.evaluation.correct || n.id == node.id) continue;
    const double a = n.evaluation.fitness, b = node.evaluation.fitness;
    if (a > b || (a == b && n.id < node.id)) ++rank;
  }
  return rank;
}

}  // namespace

namespace {

/// A --profile-* count: `value` in [-1, max] (-1: 1 on GPU targets, 0 on cpu), > 0 only on
/// GPU targets. `range` says what 0..max counts, for the error.
int ProfileCountFor(const char* flag, int value, int max, const char* range, bool gpu_target) {
  if (value < -1 || value > max) {
    throw core::InvalidInputError(fmt::format("{} {}: give {}", flag, value, range));
  }
  if (value > 0 && !gpu_target) {
    throw core::InvalidInputError(fmt::format(
        "{0} {1}: Nsight Compute profiling needs a GPU target (--target triton or cuda); drop "
        "the flag or give {0} 0 on --target cpu",
        flag, value));
  }
  if (value == -1) return gpu_target ? 1 : 0;
  return value;
}

}  // namespace

int ProfileDuringFor(int profile_during, bool gpu_target) {
  return ProfileCountFor("--profile-during", profile_during, 8,
                         "0 (no profiling during the search) to 8 nodes (ncu takes ~20-60 s per "
                         "node)",
                         gpu_target);
}

int ProfileTopFor(int profile_top, bool gpu_target) {
  return ProfileCountFor("--profile-top", profile_top, 3,
                         "0 (no profiling) to 3 best candidates (ncu takes ~20-60 s per "
                         "candidate)",
                         gpu_target);
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

core::KernelProfile ProfileNode(triton::TritonPlatform& gpu, const core::Problem& problem,
                                const search::Node& node, double timeout_seconds) {
  const platforms::BuildResult build = gpu.Build(node.candidate);  // the cached source (or .so)
  if (build.status != core::Status::kOk) {
    core::KernelProfile profile;
    profile.status = "failed";
    profile.note = "ncu: could not rebuild the candidate: " + build.message;
    return profile;
  }
  return triton::ProfileCandidate(gpu, problem, build.artifact, timeout_seconds);
}

std::function<core::KernelProfile(const search::Node&)> SearchProfiler(
    triton::TritonPlatform& gpu, const core::Problem& problem, double timeout_seconds, bool quiet,
    std::function<void()> before_print) {
  return [&gpu, &problem, timeout_seconds, quiet, before_print](const search::Node& node) {
    // Without a CUDA device (TRITON_INTERPRET=1) ncu is not started: no announcement,
    // only the skipped profile's line.
    if (!quiet && before_print) before_print();
    if (!quiet && gpu.Device().cuda) {
      fmt::print(stderr, "profiling node {} with ncu before expanding it (at most {:.0f} s)...\n",
                 node.id, timeout_seconds);
    }
    core::KernelProfile profile = ProfileNode(gpu, problem, node, timeout_seconds);
    if (!quiet) fmt::print(stderr, "node {}: {}\n", node.id, operators::ProfileLine(profile));
    return profile;
  };
}

json ProfileTopCandidates(triton::TritonPlatform& gpu, const core::Problem& problem,
                          store::Store& store, int64_t run_id, int top_n, double timeout_seconds,
                          bool quiet, const std::vector<search::Node>& searched) {
  json profiles = json::array();
  std::set<int64_t> listed;
  // Once ncu said it cannot work here (during the search or now), no new attempt.
  bool unusable = std::any_of(searched.begin(), searched.end(), [](const search::Node& n) {
    return n.profile && search::ProfilerUnusable(*n.profile);
  });
  const std::vector<search::Node> best = store.TopK(run_id, std::max(0, top_n));
  for (size_t rank = 0; rank < best.size(); ++rank) {
    const search::Node& node = best[rank];
    std::optional<core::KernelProfile> profile = store.LoadProfile(node.id);
    const bool during_search = profile && profile->status != "failed";
    if (!during_search) {
      if (unusable) continue;
      if (!quiet && gpu.Device().cuda)
        fmt::print(stderr, "profiling node {} with ncu (at most {:.0f} s)...\n", node.id,
                   timeout_seconds);
      profile = ProfileNode(gpu, problem, node, timeout_seconds);
      store.SaveProfile(node.id, *profile);
      if (!quiet) fmt::print(stderr, "node {}: {}\n", node.id, operators::ProfileLine(*profile));
    }
    profiles.push_back(ProfileEntry(node, static_cast<int>(rank) + 1, during_search, *profile));
    listed.insert(node.id);
    unusable = unusable || search::ProfilerUnusable(*profile);
  }
  for (const search::Node& node : searched) {  // the rest of the in-search profiles
    if (!node.profile || listed.count(node.id)) continue;
    profiles.push_back(ProfileEntry(node, FitnessRank(searched, node), true, *node.profile));
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
      const int rank = entry.value("rank", 0);
      std::string when = rank > 0 ? fmt::format("#{}", rank) : "incorrect";
      if (entry.value("during_search", false)) when += ", during the search";
      lines.push_back(fmt::format("node {} ({}): {}", entry.value("node_id", -1), when,
                                  operators::ProfileLine(p)));
      if (p.Ok()) lines.push_back("  diagnosis: " + entry.at("diagnosis").value("text", ""));
    }
  }
  return lines;
}

}  // namespace kernelevolve::cli
