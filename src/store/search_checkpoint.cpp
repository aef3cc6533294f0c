// Store methods of schema v2: pending candidates, node statistics and the search state
// (store.h: SearchCheckpoint), written in the transaction of the node they go with.
#include <fmt/format.h>

#include <chrono>

#include "core/error.h"
#include "store/node_rows.h"
#include "store/sqlite_statement.h"
#include "store/store.h"

namespace kernelevolve::store {
namespace {

double NowUnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr const char* kInsertPendingSql =
    "INSERT INTO pending (run_id, parent_id, operator, template, knobs_json, rationale, "
    "source_hash, source, created_unix_s) VALUES (:run_id, :parent_id, :operator, :template, "
    ":knobs_json, :rationale, :source_hash, :source, :created_unix_s)";

void InsertPending(sqlite3* db, const std::filesystem::path& path, int64_t run_id,
                   search::PendingCandidate& pending) {
  if (pending.source_hash.empty()) pending.source_hash = core::ContentHash(pending.candidate.source);
  if (pending.created_unix_s == 0) pending.created_unix_s = NowUnixSeconds();
  Statement insert(db, kInsertPendingSql, path);
  insert.Bind(":run_id", run_id)
      .Bind(":operator", pending.candidate.operator_name)
      .Bind(":template", pending.candidate.template_name)
      .Bind(":knobs_json", DumpJson(pending.candidate.knobs))
      .Bind(":rationale", pending.candidate.rationale)
      .Bind(":source_hash", pending.source_hash)
      .Bind(":source", pending.candidate.source)
      .Bind(":created_unix_s", pending.created_unix_s);
  if (pending.parent_id < 0) {
    insert.BindNull(":parent_id");
  } else {
    insert.Bind(":parent_id", pending.parent_id);
  }
  insert.Run();
  pending.id = sqlite3_last_insert_rowid(db);
}

void DeletePending(sqlite3* db, const std::filesystem::path& path, int64_t run_id, int64_t id) {
  Statement remove(db, "DELETE FROM pending WHERE id = :id AND run_id = :run_id", path);
  remove.Bind(":id", id).Bind(":run_id", run_id);
  remove.Run();
  if (sqlite3_changes(db) == 0) {
    throw core::InternalError(fmt::format(
        "SQLite store '{}': run {} has no pending candidate {}", path.string(), run_id, id));
  }
}

void WriteStats(sqlite3* db, const std::filesystem::path& path, int64_t node_id,
                const search::NodeStats& stats) {
  Statement upsert(db,
                   "INSERT OR REPLACE INTO node_stats (node_id, visits, value_sum, island, "
                   "exhausted) VALUES (:node_id, :visits, :value_sum, :island, :exhausted)",
                   path);
  upsert.Bind(":node_id", node_id)
      .Bind(":visits", stats.visits)
      .Bind(":value_sum", stats.value_sum)
      .Bind(":island", stats.island)
      .Bind(":exhausted", stats.exhausted);
  upsert.Run();
}

/// Writes everything in `checkpoint`, inside the caller's transaction.
void WriteCheckpoint(sqlite3* db, const std::filesystem::path& path, int64_t run_id,
                     SearchCheckpoint& checkpoint) {
  for (auto& pending : checkpoint.new_pending) InsertPending(db, path, run_id, pending);
  if (checkpoint.evaluated_pending_id >= 0) {
    DeletePending(db, path, run_id, checkpoint.evaluated_pending_id);
  }
  for (int64_t id : checkpoint.dropped_pending) DeletePending(db, path, run_id, id);
  for (const auto& [node_id, stats] : checkpoint.stats) WriteStats(db, path, node_id, stats);
  if (!checkpoint.state.is_null()) {
    Statement state(db,
                    "INSERT OR REPLACE INTO search_state (run_id, state_json, updated_unix_s) "
                    "VALUES (:run_id, :state_json, :updated_unix_s)",
                    path);
    state.Bind(":run_id", run_id)
        .Bind(":state_json", DumpJson(checkpoint.state))
        .Bind(":updated_unix_s", NowUnixSeconds());
    state.Run();
  }
}

}  // namespace

void Store::CommitNode(int64_t run_id, search::Node& node, SearchCheckpoint& checkpoint,
                       const std::function<void(const search::Node&)>& on_inserted) {
  if (node.id >= 0) {
    throw core::InternalError(
        fmt::format("SQLite store '{}': node {} is already committed; commit a node once",
                    path_.string(), node.id));
  }
  if (node.created_unix_s == 0) node.created_unix_s = NowUnixSeconds();
  if (node.source_hash.empty()) node.source_hash = core::ContentHash(node.candidate.source);
  try {
    Transaction transaction(db_, path_);
    node.id = InsertNodeRows(db_, path_, run_id, node, node.created_unix_s, node.source_hash);
    if (on_inserted) on_inserted(node);
    WriteCheckpoint(db_, path_, run_id, checkpoint);
    transaction.Commit();
  } catch (const core::IoError& error) {
    node.id = -1;
    throw core::IoError(fmt::format("{} (committing a node of run {} with parent {}; rolled back)",
                                    error.what(), run_id, node.parent_id));
  } catch (...) {
    node.id = -1;
    throw;
  }
}

void Store::SaveCheckpoint(int64_t run_id, SearchCheckpoint& checkpoint) {
  try {
    Transaction transaction(db_, path_);
    WriteCheckpoint(db_, path_, run_id, checkpoint);
    transaction.Commit();
  } catch (const core::IoError& error) {
    for (auto& pending : checkpoint.new_pending) pending.id = -1;
    throw core::IoError(
        fmt::format("{} (saving a search checkpoint of run {}; rolled back)", error.what(), run_id));
  }
}

std::vector<search::PendingCandidate> Store::LoadPending(int64_t run_id) const {
  Statement query(db_,
                  "SELECT id, parent_id, operator, template, knobs_json, rationale, source_hash, "
                  "source, created_unix_s FROM pending WHERE run_id = :run_id ORDER BY id",
                  path_);
  query.Bind(":run_id", run_id);
  std::vector<search::PendingCandidate> out;
  while (query.Step()) {
    search::PendingCandidate p;
    p.id = query.Int("id");
    p.parent_id = query.IsNull("parent_id") ? -1 : query.Int("parent_id");
    p.candidate.operator_name = query.Text("operator");
    p.candidate.template_name = query.Text("template");
    p.candidate.knobs = ParseJson(query.Text("knobs_json"), "pending.knobs_json", path_);
    p.candidate.rationale = query.Text("rationale");
    p.candidate.source = query.Text("source");
    p.source_hash = query.Text("source_hash");
    p.created_unix_s = query.Real("created_unix_s");
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::pair<int64_t, search::NodeStats>> Store::LoadNodeStats(int64_t run_id) const {
  Statement query(db_,
                  "SELECT s.node_id AS node_id, s.visits AS visits, s.value_sum AS value_sum, "
                  "s.island AS island, s.exhausted AS exhausted FROM node_stats AS s JOIN nodes "
                  "AS n ON n.id = s.node_id WHERE n.run_id = :run_id ORDER BY s.node_id",
                  path_);
  query.Bind(":run_id", run_id);
  std::vector<std::pair<int64_t, search::NodeStats>> out;
  while (query.Step()) {
    search::NodeStats stats;
    stats.visits = query.Int("visits");
    stats.value_sum = query.IsNull("value_sum") ? 0.0 : query.Real("value_sum");
    stats.island = static_cast<int>(query.Int("island"));
    stats.exhausted = query.Int("exhausted") != 0;
    out.emplace_back(query.Int("node_id"), stats);
  }
  return out;
}

std::optional<nlohmann::json> Store::LoadSearchState(int64_t run_id) const {
  Statement query(db_, "SELECT state_json FROM search_state WHERE run_id = :run_id", path_);
  query.Bind(":run_id", run_id);
  if (!query.Step()) return std::nullopt;
  return ParseJson(query.Text("state_json"), "search_state.state_json", path_);
}

}  // namespace kernelevolve::store
