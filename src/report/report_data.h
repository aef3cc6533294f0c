// What the HTML report shows, read from a run directory (`optimize --out`: the
// kernelevolve.db store and result.json) or a bench directory (`bench --out`: bench.json
// and one run directory per problem). Reading only: nothing here writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/node.h"
#include "store/store.h"

namespace kernelevolve::report {

/// One run as the report shows it.
struct RunReportData {
  std::filesystem::path run_dir;
  store::RunRecord run;      // the store's last run (a run directory holds one)
  int runs_in_store = 0;     // how many runs the store holds
  std::vector<search::Node> nodes;  // every node of the run, in id (evaluation) order
  /// Children of each node id; key -1 holds the drafts (children of the root).
  std::map<int64_t, std::vector<int64_t>> children;
  /// result.json (docs/result_json.md), or null when the run has none (still running,
  /// killed before the end).
  nlohmann::json result;
  /// The best correct node: result.json's best.node_id, else the fittest correct node;
  /// -1 when no node is correct.
  int64_t best_node_id = -1;

  /// The node with this id, or nullptr.
  const search::Node* Find(int64_t node_id) const;
};

/// The file parsed as JSON; null when it does not exist. Throws InvalidInputError naming
/// it when it cannot be parsed.
nlohmann::json ReadJsonFile(const std::filesystem::path& path);

/// Reads RUN_DIR/kernelevolve.db through store::Store::OpenExisting and RUN_DIR/result.json.
/// Throws core::InvalidInputError (one line naming the path) when the store has no run
/// or result.json is not JSON, store::NotAStoreError when the db is not a kernelevolve
/// store.
RunReportData LoadRunReport(const std::filesystem::path& run_dir);

/// One problem of a bench, from bench.json's problems[] (docs/bench.md).
struct BenchProblemData {
  nlohmann::json entry;                // the problems[] object as written
  std::filesystem::path run_dir;       // resolved: the bench folder's <problem>/ when it exists
  std::filesystem::path report_path;   // its report.html once written; empty when none
  std::string report_error;            // why its report could not be written ("" if it was)
};

struct BenchReportData {
  std::filesystem::path bench_dir;
  nlohmann::json bench;  // bench.json
  std::vector<BenchProblemData> problems;
};

/// Reads BENCH_DIR/bench.json and resolves each problem's run directory: the entry's
/// run_dir when it exists as given, else BENCH_DIR/<problem> (a bench folder that was
/// moved). Throws core::InvalidInputError naming the file when it is not a bench.json.
BenchReportData LoadBenchReport(const std::filesystem::path& bench_dir);

}  // namespace kernelevolve::report
