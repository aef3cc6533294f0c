#include "store/store.h"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "store/node_rows.h"
#include "store/schema.h"
#include "store/sqlite_statement.h"

namespace kernelevolve::store {
namespace {

/// busy_timeout for every connection: how long a writer waits for another's lock.
constexpr int kBusyTimeoutMs = 5000;

double NowUnixSeconds() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(since_epoch).count();
}

constexpr const char* kSelectRunSql =
    "SELECT id, problem, problem_path, target, config_json, machine_json, started_unix_s, "
    "finished_unix_s, status, stop_reason FROM runs";

RunRecord ReadRun(const Statement& row, const std::filesystem::path& path) {
  RunRecord run;
  run.id = row.Int("id");
  run.problem = row.Text("problem");
  run.problem_path = row.Text("problem_path");
  run.target = row.Text("target");
  run.config = ParseJson(row.Text("config_json"), "config_json", path);
  run.machine = ParseJson(row.Text("machine_json"), "machine_json", path);
  run.started_unix_s = row.Real("started_unix_s");
  run.finished_unix_s = row.Real("finished_unix_s");
  run.status = row.Text("status");
  run.stop_reason = row.Text("stop_reason");
  return run;
}

/// First statement that reads the file: the point where a non-database file is noticed.
void ConfigureConnection(sqlite3* db, const std::filesystem::path& path) {
  if (sqlite3_busy_timeout(db, kBusyTimeoutMs) != SQLITE_OK) {
    ThrowSqliteError(db, "cannot set busy_timeout", path);
  }
  ExecSql(db, "PRAGMA foreign_keys = ON", path);
  Statement journal(db, "PRAGMA journal_mode = WAL", path);
  journal.Step();
  // WAL with synchronous=NORMAL: a committed transaction survives the process being
  // killed (kill -9) and the file is never corrupted; only a power cut or kernel crash
  // may lose the last commits. FULL fsyncs every commit (~5 ms on this VM), which would
  // dominate the search's per-node overhead (docs/search.md, bench/search_overhead).
  ExecSql(db, "PRAGMA synchronous = NORMAL", path);
}

}  // namespace

Store Store::Open(const std::filesystem::path& path) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close_v2)> db(raw, &sqlite3_close_v2);
  if (rc != SQLITE_OK) {
    std::error_code ignored;
    const auto parent =
        path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    const bool has_dir = std::filesystem::is_directory(parent, ignored);
    ThrowSqliteError(db.get(),
                     has_dir ? std::string("cannot open")
                             : fmt::format("cannot open (directory '{}' does not exist; create "
                                           "it or choose another path)",
                                           parent.string()),
                     path);
  }
  try {
    ConfigureConnection(db.get(), path);
  } catch (const core::IoError& error) {
    const std::string message =
        fmt::format("{} (is '{}' a kernelevolve store? choose a new path or an existing store)",
                    error.what(), path.string());
    const int code = sqlite3_errcode(db.get());
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) throw NotAStoreError(message);
    throw core::IoError(message);
  }
  MigrateSchema(db.get(), path);
  return Store(db.release(), path);
}

Store Store::OpenExisting(const std::filesystem::path& path) {
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) {
    throw NotAStoreError(fmt::format("{}: no such store file", path.string()));
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close_v2)> db(raw, &sqlite3_close_v2);
  if (rc != SQLITE_OK) ThrowSqliteError(db.get(), "cannot open", path);
  const std::string not_a_store = fmt::format("{}: not a kernelevolve store (no kernelevolve tables)", path.string());
  int version = 0;
  try {
    version = ReadSchemaVersion(db.get(), path);  // the first read: a non-database fails here
  } catch (const core::IoError&) {
    throw NotAStoreError(fmt::format("{}: not a kernelevolve store (not an SQLite database)", path.string()));
  }
  if (version <= 0) throw NotAStoreError(not_a_store);
  db.reset();
  return Open(path);
}

Store::Store(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}

Store::Store(Store&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Store& Store::operator=(Store&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Store::~Store() { sqlite3_close_v2(db_); }

int64_t Store::CreateRun(const RunRecord& run) {
  Statement insert(db_,
                   "INSERT INTO runs (problem, problem_path, target, config_json, machine_json, "
                   "started_unix_s, finished_unix_s, status, stop_reason) VALUES (:problem, "
                   ":problem_path, :target, :config_json, :machine_json, :started_unix_s, "
                   ":finished_unix_s, :status, :stop_reason)",
                   path_);
  insert.Bind(":problem", run.problem)
      .Bind(":problem_path", run.problem_path)
      .Bind(":target", run.target)
      .Bind(":config_json", DumpJson(run.config))
      .Bind(":machine_json", DumpJson(run.machine))
      .Bind(":started_unix_s", run.started_unix_s == 0 ? NowUnixSeconds() : run.started_unix_s)
      .Bind(":finished_unix_s", run.finished_unix_s)
      .Bind(":status", run.status)
      .Bind(":stop_reason", run.stop_reason);
  insert.Run();
  return sqlite3_last_insert_rowid(db_);
}

void Store::FinishRun(int64_t run_id, const std::string& status, const std::string& stop_reason) {
  Statement update(db_,
                   "UPDATE runs SET status = :status, stop_reason = :stop_reason, "
                   "finished_unix_s = :finished_unix_s WHERE id = :id",
                   path_);
  update.Bind(":status", status)
      .Bind(":stop_reason", stop_reason)
      .Bind(":finished_unix_s", NowUnixSeconds())
      .Bind(":id", run_id);
  update.Run();
  if (sqlite3_changes(db_) == 0) {
    throw core::InternalError(
        fmt::format("SQLite store '{}': FinishRun: no run has id {}", path_.string(), run_id));
  }
}

std::optional<RunRecord> Store::GetRun(int64_t run_id) const {
  Statement query(db_, fmt::format("{} WHERE id = :id", kSelectRunSql), path_);
  query.Bind(":id", run_id);
  if (!query.Step()) return std::nullopt;
  return ReadRun(query, path_);
}

std::vector<RunRecord> Store::ListRuns() const {
  Statement query(db_, fmt::format("{} ORDER BY id", kSelectRunSql), path_);
  std::vector<RunRecord> runs;
  while (query.Step()) runs.push_back(ReadRun(query, path_));
  return runs;
}

void Store::CommitNode(int64_t run_id, search::Node& node) {
  if (node.id >= 0) {
    throw core::InternalError(
        fmt::format("SQLite store '{}': node {} is already committed; commit a node once",
                    path_.string(), node.id));
  }
  const double created = node.created_unix_s == 0 ? NowUnixSeconds() : node.created_unix_s;
  const std::string source_hash =
      node.source_hash.empty() ? core::ContentHash(node.candidate.source) : node.source_hash;

  try {
    Transaction transaction(db_, path_);
    const int64_t node_id = InsertNodeRows(db_, path_, run_id, node, created, source_hash);
    transaction.Commit();
    node.id = node_id;
  } catch (const core::IoError& error) {
    throw core::IoError(fmt::format("{} (committing a node of run {} with parent {}; rolled back)",
                                    error.what(), run_id, node.parent_id));
  }
  node.created_unix_s = created;
  node.source_hash = source_hash;
}

void Store::UpdateScores(const std::vector<search::Node>& nodes) {
  try {
    Transaction transaction(db_, path_);
    for (const search::Node& node : nodes) {
      if (node.id < 0) {
        throw core::InternalError(fmt::format("SQLite store '{}': cannot rescore a node that was never committed",
                                              path_.string()));
      }
      const core::Evaluation& e = node.evaluation;
      Statement update(db_,
                       "UPDATE evaluations SET fitness = :fitness, speedup = :speedup, "
                       "speedup_ci_low = :ci_low, speedup_ci_high = :ci_high WHERE node_id = :node_id",
                       path_);
      update.Bind(":fitness", e.fitness)
          .Bind(":speedup", e.speedup_vs_eager.value)
          .Bind(":ci_low", e.speedup_vs_eager.ci_low)
          .Bind(":ci_high", e.speedup_vs_eager.ci_high)
          .Bind(":node_id", node.id);
      update.Run();
    }
    transaction.Commit();
  } catch (const core::IoError& error) {
    throw core::IoError(fmt::format("{} (rescoring {} nodes; rolled back)", error.what(), nodes.size()));
  }
}

std::vector<search::Node> Store::LoadNodes(int64_t run_id) const {
  Statement query(db_, SelectNodesSql("WHERE n.run_id = :run_id ORDER BY n.id"), path_);
  query.Bind(":run_id", run_id);
  return ReadNodes(query, path_);
}

std::optional<search::Node> Store::GetNode(int64_t node_id) const {
  Statement query(db_, SelectNodesSql("WHERE n.id = :node_id"), path_);
  query.Bind(":node_id", node_id);
  if (!query.Step()) return std::nullopt;
  return ReadNode(query, path_);
}

std::vector<search::Node> Store::Lineage(int64_t node_id) const {
  // Walk parent links upward; `level` 0 is the node itself, so DESC puts the draft first.
  const std::string sql =
      "WITH RECURSIVE chain(node_id, level) AS ("
      " SELECT id, 0 FROM nodes WHERE id = :node_id"
      " UNION ALL"
      " SELECT p.parent_id, chain.level + 1 FROM nodes AS p JOIN chain ON p.id = chain.node_id"
      " WHERE p.parent_id IS NOT NULL) " +
      SelectNodesSql("JOIN chain ON chain.node_id = n.id ORDER BY chain.level DESC");
  Statement query(db_, sql, path_);
  query.Bind(":node_id", node_id);
  return ReadNodes(query, path_);
}

std::vector<search::Node> Store::TopK(int64_t run_id, int k) const {
  if (k <= 0) return {};
  Statement query(db_,
                  SelectNodesSql("WHERE n.run_id = :run_id AND e.correct = 1 "
                                 "ORDER BY e.fitness DESC, n.id ASC LIMIT :k"),
                  path_);
  query.Bind(":run_id", run_id).Bind(":k", k);
  return ReadNodes(query, path_);
}

bool Store::HasSourceHash(int64_t run_id, const std::string& source_hash) const {
  Statement query(db_,
                  "SELECT EXISTS (SELECT 1 FROM nodes WHERE run_id = :run_id AND "
                  "source_hash = :source_hash) AS found",
                  path_);
  query.Bind(":run_id", run_id).Bind(":source_hash", source_hash);
  return query.Step() && query.Int("found") != 0;
}

}  // namespace kernelevolve::store
