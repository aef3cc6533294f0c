#include "knowledge/experience_table.h"

#include <fmt/format.h>

#include "core/error.h"
#include "store/sqlite_statement.h"

namespace kernelevolve::knowledge {
namespace {

using store::Statement;

nlohmann::json ParseColumn(const std::string& text, const char* column, int64_t id,
                           const std::filesystem::path& path) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    throw core::IoError(fmt::format("knowledge base '{}': experience {}: experiences.{} is not valid JSON",
                                    path.string(), id, column));
  }
  return doc;
}

/// The current row of `q` (SELECT * FROM experiences). IoError when a JSON column does
/// not parse or shapes_json is not a list of shapes.
Experience ReadExperience(Statement& q, const std::filesystem::path& db_path) {
  Experience x;
  x.id = q.Int("id");
  x.created_unix_s = q.Real("created_unix_s");
  x.problem = q.Text("problem");
  x.problem_path = q.Text("problem_path");
  x.platform = q.Text("platform");
  x.machine = q.Text("machine");
  x.isa = q.Text("isa");
  x.operator_family = q.Text("operator_family");
  x.op_signature = q.Text("op_signature");
  x.shape_class = q.Text("shape_class");
  const nlohmann::json shapes = ParseColumn(q.Text("shapes_json"), "shapes_json", x.id, db_path);
  try {
    x.shapes = shapes.get<std::vector<std::vector<int64_t>>>();
  } catch (const nlohmann::json::exception&) {
    throw core::IoError(fmt::format("knowledge base '{}': experience {}: experiences.shapes_json is not a list "
                                    "of shapes",
                                    db_path.string(), x.id));
  }
  x.operator_name = q.Text("operator_name");
  x.template_name = q.Text("template_name");
  x.knobs = ParseColumn(q.Text("knobs_json"), "knobs_json", x.id, db_path);
  x.improvements = ParseColumn(q.Text("improvements_json"), "improvements_json", x.id, db_path);
  x.rationale = q.Text("rationale");
  x.fitness = q.Real("fitness");
  x.speedup = q.Real("speedup");
  x.speedup_confirmed = q.Int("speedup_confirmed") != 0;
  x.latency_us = q.Real("latency_us");
  x.eager_us = q.Real("eager_us");
  x.evaluations = static_cast<int>(q.Int("evaluations"));
  x.evaluations_to_best = static_cast<int>(q.Int("evaluations_to_best"));
  x.source = q.Text("source");
  x.source_hash = q.Text("source_hash");
  x.run_dir = q.Text("run_dir");
  return x;
}

}  // namespace

int64_t InsertExperience(sqlite3* db, const std::filesystem::path& db_path, const Experience& x) {
  store::Transaction tx(db, db_path);
  Statement ins(db,
                "INSERT INTO experiences (created_unix_s, problem, problem_path, platform, machine, isa, "
                "operator_family, op_signature, shape_class, shapes_json, operator_name, "
                "template_name, knobs_json, improvements_json, rationale, fitness, speedup, "
                "speedup_confirmed, latency_us, eager_us, evaluations, evaluations_to_best, source, "
                "source_hash, run_dir) VALUES (:created, :problem, :problem_path, :platform, "
                ":machine, :isa, :family, :signature, :shape_class, :shapes, :operator_name, :template, "
                ":knobs, :improvements, :rationale, :fitness, :speedup, :confirmed, :latency, "
                ":eager, :evaluations, :to_best, :source, :source_hash, :run_dir)",
                db_path);
  ins.Bind(":created", x.created_unix_s)
      .Bind(":problem", x.problem)
      .Bind(":problem_path", x.problem_path)
      .Bind(":platform", x.platform)
      .Bind(":machine", x.machine)
      .Bind(":isa", x.isa)
      .Bind(":family", x.operator_family)
      .Bind(":signature", x.op_signature)
      .Bind(":shape_class", x.shape_class)
      .Bind(":shapes", nlohmann::json(x.shapes).dump())
      .Bind(":operator_name", x.operator_name)
      .Bind(":template", x.template_name)
      .Bind(":knobs", x.knobs.dump())
      .Bind(":improvements", x.improvements.dump())
      .Bind(":rationale", x.rationale)
      .Bind(":fitness", x.fitness)
      .Bind(":speedup", x.speedup)
      .Bind(":confirmed", x.speedup_confirmed)
      .Bind(":latency", x.latency_us)
      .Bind(":eager", x.eager_us)
      .Bind(":evaluations", x.evaluations)
      .Bind(":to_best", x.evaluations_to_best)
      .Bind(":source", x.source)
      .Bind(":source_hash", x.source_hash)
      .Bind(":run_dir", x.run_dir)
      .Run();
  const int64_t id = sqlite3_last_insert_rowid(db);
  tx.Commit();
  return id;
}

std::vector<Experience> QueryExperiences(sqlite3* db, const std::filesystem::path& db_path,
                                         const ExperienceFilter& filter, std::vector<std::string>* unreadable) {
  Statement q(db,
              "SELECT * FROM experiences WHERE (:platform = '' OR platform = :platform) AND "
              "(:problem = '' OR problem = :problem) AND (:signature = '' OR op_signature = "
              ":signature) ORDER BY id DESC LIMIT :limit",
              db_path);
  q.Bind(":platform", filter.platform)
      .Bind(":problem", filter.problem)
      .Bind(":signature", filter.op_signature)
      .Bind(":limit", filter.limit);
  std::vector<Experience> out;
  while (q.Step()) {
    try {
      out.push_back(ReadExperience(q, db_path));
    } catch (const core::IoError& e) {
      if (unreadable == nullptr) throw;
      unreadable->push_back(e.what());
    }
  }
  return out;
}

}  // namespace kernelevolve::knowledge
