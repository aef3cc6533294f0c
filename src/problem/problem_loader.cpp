#include "problem/problem_loader.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "eval/timing_stats.h"

namespace kernelevolve::problem {
namespace {

/// One ABI tensor of `path`; a dtype kernels cannot take (complex64, say) is the
/// problem file's fault: ProblemError naming the file, the tensor and the fix.
core::TensorSpec SpecFromJson(const nlohmann::json& j, const std::filesystem::path& path) {
  core::TensorSpec spec;
  spec.name = j.at("name").get<std::string>();
  std::string role = j.value("role", "input");
  spec.role = role == "parameter" ? core::TensorRole::kParameter
              : role == "output"  ? core::TensorRole::kOutput
                                  : core::TensorRole::kInput;
  spec.shape = j.at("shape").get<std::vector<int64_t>>();
  const std::string dtype = j.at("dtype").get<std::string>();
  try {
    spec.dtype = core::DTypeFromName(dtype);
  } catch (const core::InvalidInputError&) {
    throw ProblemError(
        fmt::format("{}: {} '{}' is {}, which no kernel can take or return (kernels handle "
                    "float32/float64/float16/bfloat16, integer and bool tensors); pass or return "
                    "a real tensor, e.g. torch.view_as_real(x)",
                    path.string(), role, spec.name, dtype),
        "");
  }
  return spec;
}

nlohmann::json BaselineParams(const BaselineTiming& b) {
  return {{"warmup_seconds", b.warmup_seconds},
          {"min_time_seconds", b.min_time_seconds},
          {"min_repetitions", b.min_repetitions},
          {"max_repetitions", b.max_repetitions},
          {"max_time_seconds", b.max_time_seconds},
          {"flush_cache", b.flush_cache}};
}

}  // namespace

std::pair<std::string, std::string> ParseOverride(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw core::InvalidInputError(
        fmt::format("--set '{}': expected NAME=VALUE, for example --set batch_size=16", text));
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

int64_t AvailableMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024;
  }
  return 0;
}

core::Problem LoadProblem(WorkerClient& worker, const LoadOptions& options) {
  const auto& path = options.problem_path;
  if (!std::filesystem::is_regular_file(path)) {
    throw core::InvalidInputError(fmt::format("{}: no such problem file", path.string()));
  }
  int64_t budget = options.memory_budget_bytes;
  if (budget <= 0) budget = AvailableMemoryBytes() / 2;
  nlohmann::json params = {
      {"path", path.string()},  // as the user wrote it: error messages quote it
      {"overrides", options.overrides},
      {"seeds", options.seeds},
      {"fixtures_dir", std::filesystem::absolute(options.fixtures_dir).string()},
      {"threads", options.threads},
      {"memory_budget_bytes", budget},
      {"baseline", BaselineParams(options.baseline)},
      {"time_baseline", options.time_eager},
  };
  nlohmann::json result;
  try {
    result = worker.Call("load_problem", params, options.timeout_seconds);
  } catch (const WorkerError& e) {
    if (e.kind() == "problem_error") throw ProblemError(e.what(), e.traceback());
    throw;
  }
  core::Problem problem;
  problem.name = result.at("name").get<std::string>();
  problem.source_path = path;
  problem.overrides = options.overrides;
  for (const auto& j : result.at("inputs")) problem.inputs.push_back(SpecFromJson(j, path));
  for (const auto& j : result.at("outputs")) problem.outputs.push_back(SpecFromJson(j, path));
  if (result.contains("graph") && !result["graph"].is_null()) {
    // An intermediate no kernel dtype covers (complex64 from torch.fft) leaves the graph
    // empty with the reason: templates refuse with it (exit 1), an LLM may still try.
    std::string bad_dtype = core::FirstUnsupportedDType(result["graph"]);
    if (bad_dtype.empty()) problem.graph = core::OpGraphFromJson(result["graph"]);
    else problem.graph_error = std::move(bad_dtype);
  }
  if (problem.graph_error.empty() && result.contains("graph_error") && result["graph_error"].is_string()) {
    problem.graph_error = result["graph_error"].get<std::string>();
  }
  if (!problem.graph.nodes.empty() && result.contains("shape_graphs") && result["shape_graphs"].is_array()) {
    for (const auto& g : result["shape_graphs"]) {
      if (g.is_null() || !core::FirstUnsupportedDType(g).empty()) {  // one is missing: none is used
        problem.shape_graphs.clear();
        break;
      }
      problem.shape_graphs.push_back(core::OpGraphFromJson(g));
    }
  }
  problem.fixtures_dir = result.at("fixtures_dir").get<std::string>();
  for (const auto& f : result.at("fixture_files")) problem.fixture_files.emplace_back(f.get<std::string>());
  problem.seeds = result.at("seeds").get<std::vector<int>>();
  problem.eager_baseline = eval::Summarize(result.at("baseline_samples_us").get<std::vector<double>>());
  // The worker stops once this holds (baseline.py), so it tells whether it converged.
  problem.eager_baseline.converged = eval::MedianPreciseEnough(problem.eager_baseline);
  problem.threads = result.value("threads", options.threads);
  problem.torch_version = result.value("torch_version", "");
  const nlohmann::json tf32 = result.value("reference_tf32", nlohmann::json::object());
  problem.reference_tf32.matmul = tf32.value("matmul", false);
  problem.reference_tf32.conv = tf32.value("conv", false);
  problem.reference_tf32.rnn = tf32.value("rnn", false);
  problem.eager_error_multiple = result.value("eager_error_multiple", 0.0);
  if (options.phases != nullptr) options.phases->AddParts("load", result.value("phase_seconds", nlohmann::json()));
  return problem;
}

}  // namespace kernelevolve::problem
