#include "report/report_data.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace kernelevolve::report {
namespace fs = std::filesystem;

nlohmann::json ReadJsonFile(const fs::path& path) {
  std::error_code ignored;
  if (!fs::is_regular_file(path, ignored)) return nullptr;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw core::InvalidInputError(fmt::format("{}: not valid JSON ({})", path.string(), e.what()));
  }
}

namespace {

int64_t BestNodeId(const RunReportData& data) {
  const auto& best = data.result.is_object() ? data.result.value("best", nlohmann::json()) : nlohmann::json();
  if (best.is_object() && best.contains("node_id") && best["node_id"].is_number_integer()) {
    const int64_t id = best["node_id"].get<int64_t>();
    const search::Node* node = data.Find(id);
    if (node != nullptr && node->evaluation.correct) return id;
  }
  int64_t best_id = -1;
  double best_fitness = 0;
  for (const auto& node : data.nodes) {
    if (node.evaluation.correct && node.evaluation.fitness > best_fitness) {
      best_fitness = node.evaluation.fitness;
      best_id = node.id;
    }
  }
  return best_id;
}

}  // namespace

const search::Node* RunReportData::Find(int64_t node_id) const {
  for (const auto& node : nodes) {
    if (node.id == node_id) return &node;
  }
  return nullptr;
}

RunReportData LoadRunReport(const fs::path& run_dir) {
  RunReportData data;
  data.run_dir = run_dir;
  const store::Store store = store::Store::OpenExisting(run_dir / "kernelevolve.db");
  const std::vector<store::RunRecord> runs = store.ListRuns();
  if (runs.empty()) {
    throw core::InvalidInputError(
        fmt::format("{}: the store holds no run", (run_dir / "kernelevolve.db").string()));
  }
  data.run = runs.back();
  data.runs_in_store = static_cast<int>(runs.size());
  data.nodes = store.LoadNodes(data.run.id);
  for (const auto& node : data.nodes) {
    const bool parent_known = node.parent_id >= 0 && data.Find(node.parent_id) != nullptr;
    data.children[parent_known ? node.parent_id : -1].push_back(node.id);
  }
  data.result = ReadJsonFile(run_dir / "result.json");
  data.best_node_id = BestNodeId(data);
  return data;
}

BenchReportData LoadBenchReport(const fs::path& bench_dir) {
  BenchReportData data;
  data.bench_dir = bench_dir;
  const fs::path file = bench_dir / "bench.json";
  data.bench = ReadJsonFile(file);
  if (!data.bench.is_object() || !data.bench.contains("problems") || !data.bench["problems"].is_array()) {
    throw core::InvalidInputError(fmt::format("{}: not a bench.json (no problems list)", file.string()));
  }
  for (const auto& entry : data.bench["problems"]) {
    if (!entry.is_object()) continue;
    BenchProblemData problem;
    problem.entry = entry;
    const fs::path given = entry.value("run_dir", std::string());
    std::error_code ignored;
    const fs::path moved = bench_dir / entry.value("problem", std::string());
    problem.run_dir = !given.empty() && fs::is_directory(given, ignored) ? given : moved;
    data.problems.push_back(std::move(problem));
  }
  return data;
}

}  // namespace kernelevolve::report
