#include "platforms/triton/gpu_profiler.h"

#include <fmt/format.h>

#include "core/error.h"
#include "problem/worker_client.h"

namespace kernelevolve::platforms::triton {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kRunnerSlackSeconds = 30;  // runner start, fixture prepare, JSON

std::string OneLine(const std::string& text, size_t limit = 200) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > limit ? line.substr(0, limit - 3) + "..." : line;
}

}  // namespace

BaselineProfile BaselineProfileFromJson(const json& doc) {
  BaselineProfile p;
  try {
    p.activity = doc.value("activity", "");
    p.calls = doc.value("calls", 0);
    p.total_us = doc.value("total_us", 0.0);
    p.note = doc.value("note", "");
    for (const auto& k : doc.value("kernels", json::array())) {
      p.kernels.push_back({k.at("name").get<std::string>(), k.value("calls", 0.0),
                           k.value("total_us", 0.0), k.value("share", 0.0)});
    }
  } catch (const json::exception& e) {
    throw core::InvalidInputError(std::string("gpu_profile_baseline: malformed answer: ") +
                                  e.what());
  }
  return p;
}

json BaselineProfileToJson(const BaselineProfile& p) {
  json kernels = json::array();
  for (const auto& k : p.kernels) {
    kernels.push_back(
        {{"name", k.name}, {"calls", k.calls}, {"total_us", k.total_us}, {"share", k.share}});
  }
  return {{"activity", p.activity},
          {"calls", p.calls},
          {"total_us", p.total_us},
          {"kernels", kernels},
          {"note", p.note}};
}

std::vector<std::string> BaselineProfileLines(const BaselineProfile& p, size_t lines) {
  if (p.kernels.empty()) return {p.note.empty() ? "no kernels recorded" : p.note};
  std::vector<std::string> out;
  for (size_t i = 0; i < p.kernels.size() && i < lines; ++i) {
    const BaselineKernel& k = p.kernels[i];
    std::string name = k.name.size() > 90 ? k.name.substr(0, 87) + "..." : k.name;
    out.push_back(
        fmt::format("{:>4.0f}% {:>9.1f} us  {:g} x {}", 100 * k.share, k.total_us, k.calls, name));
  }
  return out;
}

BaselineProfile ProfileEagerBaseline(TritonPlatform& gpu, const core::Problem& problem, int calls,
                                     int top, double timeout_seconds) {
  try {
    return BaselineProfileFromJson(gpu.CallForProblem(
        problem, "gpu_profile_baseline", {{"calls", calls}, {"top", top}}, timeout_seconds));
  } catch (const problem::WorkerError& e) {
    BaselineProfile p;
    p.note = "torch.profiler breakdown failed: " + OneLine(e.what());
    return p;
  } catch (const problem::WorkerLostError& e) {
    BaselineProfile p;
    p.note = "torch.profiler breakdown failed: the GPU runner was lost: " + OneLine(e.what());
    return p;
  } catch (const core::InvalidInputError& e) {
    BaselineProfile p;
    p.note = OneLine(e.what());
    return p;
  }
}

core::KernelProfile ProfileCandidate(TritonPlatform& gpu, const core::Problem& problem,
                                     const fs::path& artifact, double timeout_seconds) {
  core::KernelProfile profile;
  if (!gpu.Device().cuda) {
    profile.status = "skipped";
    profile.note = "no CUDA device (TRITON_INTERPRET=1): no ncu profile";
    return profile;
  }
  const json params = {
      {"manifest_path", fs::absolute(problem.fixtures_dir / "manifest.json").string()},
      {"candidate_path", fs::absolute(artifact).string()},
      {"timeout_seconds", timeout_seconds}};
  try {
    return core::KernelProfileFromJson(
        gpu.CallForProblem(problem, "gpu_ncu", params, timeout_seconds + kRunnerSlackSeconds));
  } catch (const problem::WorkerError& e) {
    profile.status = "failed";
    profile.note = "ncu: the GPU runner failed: " + OneLine(e.what());
  } catch (const problem::WorkerLostError& e) {
    profile.status = "timeout";
    profile.note = "ncu: the GPU runner was lost (replaced): " + OneLine(e.what());
  } catch (const core::InvalidInputError& e) {
    profile.status = "failed";
    profile.note = "ncu: " + OneLine(e.what());
  }
  return profile;
}

}  // namespace kernelevolve::platforms::triton
