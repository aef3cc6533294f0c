#include "store/node_rows.h"

#include <fmt/format.h>

#include <array>

#include "core/error.h"
#include "core/status.h"
#include "eval/result_json.h"

namespace kernelevolve::store {
namespace {

using nlohmann::json;

/// checks_json: a JSON array of eval::OutputCheckToJson objects. Throws IoError when the
/// stored text is not such an array (a corrupted or hand-edited database).
std::vector<core::OutputCheck> ChecksFromJson(const std::string& text, int64_t node_id,
                                              const std::filesystem::path& path) {
  const json checks = ParseJson(text, "checks_json", path);
  std::vector<core::OutputCheck> result;
  try {
    if (!checks.is_array()) throw core::InvalidInputError("expected a JSON array");
    for (const auto& check : checks) result.push_back(eval::OutputCheckFromJson(check));
  } catch (const core::InvalidInputError& error) {
    throw core::IoError(fmt::format("SQLite store '{}': checks_json of node {} is malformed: {}",
                                    path.string(), node_id, error.what()));
  }
  return result;
}

// ---- column lists: each column named once; SQL built from these constants only ----

constexpr std::array<const char*, 10> kNodeColumns = {
    "id",       "run_id",     "parent_id", "depth",       "operator",
    "template", "knobs_json", "rationale", "source_hash", "source"};
constexpr const char* kNodeCreatedColumn = "created_unix_s";

/// TimingStats fields in column order; columns are "<prefix>_<field>".
constexpr std::array<const char*, 10> kTimingFields = {
    "n",      "median_us", "mean_us", "stdev_us",  "min_us",
    "max_us", "p10_us",    "p90_us",  "ci_low_us", "ci_high_us"};

std::vector<std::string> EvaluationColumns() {
  std::vector<std::string> columns = {"node_id",     "status",         "message",
                                      "log_excerpt", "correct",        "fitness",
                                      "speedup",     "speedup_ci_low", "speedup_ci_high"};
  for (const char* prefix : {"latency", "kernel_only"}) {
    for (const char* field : kTimingFields) columns.push_back(fmt::format("{}_{}", prefix, field));
  }
  for (const char* column : {"checks_json", "build_seconds", "run_seconds", "build_cache_hit"}) {
    columns.emplace_back(column);
  }
  return columns;
}

/// Columns of the rooflines table (v4) after node_id, in core::RooflineFigures order;
/// selected as "roofline_<column>".
constexpr std::array<const char*, 7> kRooflineColumns = {
    "bytes_per_call", "flops_per_call", "arithmetic_intensity", "achieved_gbps",
    "achieved_gflops", "bound", "fraction"};

std::string InsertSql(std::string_view table, const std::vector<std::string>& columns) {
  std::string names;
  std::string params;
  for (const auto& column : columns) {
    names += (names.empty() ? "" : ", ") + column;
    params += (params.empty() ? ":" : ", :") + column;
  }
  return fmt::format("INSERT INTO {} ({}) VALUES ({})", table, names, params);
}

// ---- binding and reading rows ----

void BindTiming(Statement& statement, std::string_view prefix, const core::TimingStats& stats) {
  const std::array<double, 9> values = {stats.median_us, stats.mean_us,   stats.stdev_us,
                                        stats.min_us,    stats.max_us,    stats.p10_us,
                                        stats.p90_us,    stats.ci_low_us, stats.ci_high_us};
  statement.Bind(fmt::format(":{}_{}", prefix, kTimingFields[0]), stats.n);
  for (size_t i = 0; i < values.size(); ++i) {
    statement.Bind(fmt::format(":{}_{}", prefix, kTimingFields[i + 1]), values[i]);
  }
}

core::TimingStats ReadTiming(const Statement& row, std::string_view prefix) {
  core::TimingStats stats;
  std::array<double*, 9> fields = {&stats.median_us, &stats.mean_us,   &stats.stdev_us,
                                   &stats.min_us,    &stats.max_us,    &stats.p10_us,
                                   &stats.p90_us,    &stats.ci_low_us, &stats.ci_high_us};
  stats.n = row.Int(fmt::format("{}_{}", prefix, kTimingFields[0]));
  for (size_t i = 0; i < fields.size(); ++i) {
    *fields[i] = row.Real(fmt::format("{}_{}", prefix, kTimingFields[i + 1]));
  }
  return stats;
}

void BindEvaluation(Statement& statement, int64_t node_id, const core::Evaluation& evaluation) {
  json checks = json::array();
  for (const auto& check : evaluation.checks) checks.push_back(eval::OutputCheckToJson(check));
  statement.Bind(":node_id", node_id)
      .Bind(":status", core::StatusName(evaluation.status))
      .Bind(":message", evaluation.message)
      .Bind(":log_excerpt", evaluation.log_excerpt)
      .Bind(":correct", evaluation.correct)
      .Bind(":fitness", evaluation.fitness)
      .Bind(":speedup", evaluation.speedup_vs_eager.value)
      .Bind(":speedup_ci_low", evaluation.speedup_vs_eager.ci_low)
      .Bind(":speedup_ci_high", evaluation.speedup_vs_eager.ci_high)
      .Bind(":checks_json", DumpJson(checks))
      .Bind(":build_seconds", evaluation.build_seconds)
      .Bind(":run_seconds", evaluation.run_seconds)
      .Bind(":build_cache_hit", evaluation.build_cache_hit);
  BindTiming(statement, "latency", evaluation.latency);
  BindTiming(statement, "kernel_only", evaluation.kernel_only);
}

/// Inserts the node's rooflines row when it has figures (bytes_per_call > 0).
void InsertRooflineRow(sqlite3* db, const std::filesystem::path& path, int64_t node_id,
                       const core::RooflineFigures& r) {
  if (!(r.bytes_per_call > 0)) return;
  std::vector<std::string> columns = {"node_id"};
  columns.insert(columns.end(), kRooflineColumns.begin(), kRooflineColumns.end());
  Statement insert(db, InsertSql("rooflines", columns), path);
  insert.Bind(":node_id", node_id)
      .Bind(":bytes_per_call", r.bytes_per_call)
      .Bind(":flops_per_call", r.flops_per_call)
      .Bind(":arithmetic_intensity", r.arithmetic_intensity)
      .Bind(":achieved_gbps", r.achieved_gbps)
      .Bind(":achieved_gflops", r.achieved_gflops)
      .Bind(":bound", r.bound)
      .Bind(":fraction", r.fraction);
  insert.Run();
}

/// The figures of a SelectNodesSql row; defaults (unknown) when the node has none.
core::RooflineFigures ReadRoofline(const Statement& row) {
  core::RooflineFigures r;
  if (row.IsNull("roofline_bound")) return r;
  r.bytes_per_call = row.Real("roofline_bytes_per_call");
  r.flops_per_call = row.Real("roofline_flops_per_call");
  r.arithmetic_intensity = row.Real("roofline_arithmetic_intensity");
  r.achieved_gbps = row.Real("roofline_achieved_gbps");
  r.achieved_gflops = row.Real("roofline_achieved_gflops");
  r.bound = row.Text("roofline_bound");
  r.fraction = row.Real("roofline_fraction");
  return r;
}

core::Evaluation ReadEvaluation(const Statement& row, const std::filesystem::path& path) {
  core::Evaluation evaluation;
  if (row.IsNull("node_id")) return evaluation;  // node without an evaluation row
  const std::string status = row.Text("status");
  try {
    evaluation.status = core::StatusFromName(status);
  } catch (const core::InvalidInputError&) {
    throw core::IoError(fmt::format("SQLite store '{}': node {} has unknown status '{}'",
                                    path.string(), row.Int("id"), status));
  }
  evaluation.message = row.Text("message");
  evaluation.log_excerpt = row.Text("log_excerpt");
  evaluation.correct = row.Int("correct") != 0;
  evaluation.fitness = row.Real("fitness");
  evaluation.speedup_vs_eager = {row.Real("speedup"), row.Real("speedup_ci_low"),
                                 row.Real("speedup_ci_high")};
  evaluation.latency = ReadTiming(row, "latency");
  evaluation.kernel_only = ReadTiming(row, "kernel_only");
  evaluation.checks = ChecksFromJson(row.Text("checks_json"), row.Int("id"), path);
  evaluation.build_seconds = row.Real("build_seconds");
  evaluation.run_seconds = row.Real("run_seconds");
  evaluation.build_cache_hit = row.Int("build_cache_hit") != 0;
  evaluation.roofline = ReadRoofline(row);
  if (!row.IsNull("worker_json")) evaluation.worker = row.Text("worker_json");
  return evaluation;
}

}  // namespace

std::string DumpJson(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json ParseJson(const std::string& text, std::string_view column,
               const std::filesystem::path& path) {
  try {
    return json::parse(text);
  } catch (const json::exception& error) {
    throw core::IoError(fmt::format("SQLite store '{}': column {} holds invalid JSON: {}",
                                    path.string(), column, error.what()));
  }
}

std::string SelectNodesSql(std::string_view tail) {
  std::string select;
  for (const char* column : kNodeColumns) select += fmt::format("n.{0} AS {0}, ", column);
  select += fmt::format("n.{0} AS {0}", kNodeCreatedColumn);
  for (const auto& column : EvaluationColumns()) select += fmt::format(", e.{0} AS {0}", column);
  for (const char* column : kRooflineColumns) select += fmt::format(", r.{0} AS roofline_{0}", column);
  select += ", w.worker_json AS worker_json";  // issue 22: the queue worker, when one measured it
  return fmt::format(
      "SELECT {} FROM nodes AS n LEFT JOIN evaluations AS e ON e.node_id = n.id "
      "LEFT JOIN rooflines AS r ON r.node_id = n.id LEFT JOIN node_workers AS w ON w.node_id = n.id {}",
      select, tail);
}

int64_t InsertNodeRows(sqlite3* db, const std::filesystem::path& path, int64_t run_id,
                       const search::Node& node, double created_unix_s,
                       const std::string& source_hash) {
  std::vector<std::string> node_columns(kNodeColumns.begin() + 1, kNodeColumns.end());
  node_columns.emplace_back(kNodeCreatedColumn);
  Statement insert_node(db, InsertSql("nodes", node_columns), path);
  insert_node.Bind(":run_id", run_id)
      .Bind(":depth", node.depth)
      .Bind(":operator", node.candidate.operator_name)
      .Bind(":template", node.candidate.template_name)
      .Bind(":knobs_json", DumpJson(node.candidate.knobs))
      .Bind(":rationale", node.candidate.rationale)
      .Bind(":source_hash", source_hash)
      .Bind(":source", node.candidate.source)
      .Bind(":created_unix_s", created_unix_s);
  if (node.parent_id < 0) {
    insert_node.BindNull(":parent_id");
  } else {
    insert_node.Bind(":parent_id", node.parent_id);
  }
  insert_node.Run();
  const int64_t node_id = sqlite3_last_insert_rowid(db);

  Statement insert_evaluation(db, InsertSql("evaluations", EvaluationColumns()), path);
  BindEvaluation(insert_evaluation, node_id, node.evaluation);
  insert_evaluation.Run();
  InsertRooflineRow(db, path, node_id, node.evaluation.roofline);
  if (!node.evaluation.worker.empty()) {
    Statement insert_worker(db, InsertSql("node_workers", {"node_id", "worker_json"}), path);
    insert_worker.Bind(":node_id", node_id).Bind(":worker_json", node.evaluation.worker);
    insert_worker.Run();
  }
  return node_id;
}

search::Node ReadNode(const Statement& row, const std::filesystem::path& path) {
  search::Node node;
  node.id = row.Int("id");
  node.parent_id = row.IsNull("parent_id") ? -1 : row.Int("parent_id");
  node.depth = static_cast<int>(row.Int("depth"));
  node.candidate.source = row.Text("source");
  node.candidate.operator_name = row.Text("operator");
  node.candidate.template_name = row.Text("template");
  node.candidate.knobs = ParseJson(row.Text("knobs_json"), "knobs_json", path);
  node.candidate.rationale = row.Text("rationale");
  node.source_hash = row.Text("source_hash");
  node.evaluation = ReadEvaluation(row, path);
  node.created_unix_s = row.Real(kNodeCreatedColumn);
  return node;
}

std::vector<search::Node> ReadNodes(Statement& statement, const std::filesystem::path& path) {
  std::vector<search::Node> nodes;
  while (statement.Step()) nodes.push_back(ReadNode(statement, path));
  return nodes;
}

}  // namespace kernelevolve::store
