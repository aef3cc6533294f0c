#include "knowledge/knowledge_db.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "core/error.h"
#include "store/sqlite_statement.h"

namespace kernelevolve::knowledge {
namespace {

// Passages are indexed by FTS5 with the porter stemmer over unicode61 tokens, so
// "compile", "compiler" and "compiling" match each other. The FTS rowid is the
// passage id. Facet lists (platforms, ...) are JSON arrays of strings.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS documents (
  id             INTEGER PRIMARY KEY,
  source_path    TEXT NOT NULL UNIQUE,
  corpus_root    TEXT NOT NULL,
  corpus         TEXT NOT NULL,
  rel_path       TEXT NOT NULL,
  title          TEXT NOT NULL,
  platforms      TEXT NOT NULL,
  phases         TEXT NOT NULL,
  bottlenecks    TEXT NOT NULL,
  tags           TEXT NOT NULL,
  content_hash   TEXT NOT NULL,
  mtime_ns       INTEGER NOT NULL,
  size_bytes     INTEGER NOT NULL,
  indexed_unix_s REAL
);
CREATE TABLE IF NOT EXISTS sections (
  id          INTEGER PRIMARY KEY,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal     INTEGER NOT NULL,
  heading     TEXT NOT NULL,
  level       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sections_document ON sections(document_id);
CREATE TABLE IF NOT EXISTS passages (
  id          INTEGER PRIMARY KEY,
  section_id  INTEGER NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal     INTEGER NOT NULL,
  text        TEXT NOT NULL,
  tokens      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_document ON passages(document_id);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
  body, heading, title, tags, tokenize = 'porter unicode61'
);
CREATE TABLE IF NOT EXISTS experiences (
  id                  INTEGER PRIMARY KEY,
  created_unix_s      REAL,
  problem             TEXT NOT NULL,
  problem_path        TEXT NOT NULL,
  platform            TEXT NOT NULL,
  machine             TEXT NOT NULL,
  operator_family     TEXT NOT NULL,
  op_signature        TEXT NOT NULL,
  shape_class         TEXT NOT NULL,
  shapes_json         TEXT NOT NULL,
  operator_name       TEXT NOT NULL,
  template_name       TEXT NOT NULL,
  knobs_json          TEXT NOT NULL,
  improvements_json   TEXT NOT NULL,
  rationale           TEXT NOT NULL,
  fitness             REAL,
  speedup             REAL,
  speedup_confirmed   INTEGER NOT NULL,
  latency_us          REAL,
  eager_us            REAL,
  evaluations         INTEGER NOT NULL,
  evaluations_to_best INTEGER NOT NULL,
  source              TEXT NOT NULL,
  source_hash         TEXT NOT NULL,
  run_dir             TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS experiences_match ON experiences(op_signature, platform);
CREATE INDEX IF NOT EXISTS experiences_problem ON experiences(problem);
)sql";

/// journal_mode=WAL needs a lock a concurrent opener may hold for a moment; retry
/// through the busy timeout instead of failing the first time.
void EnableWal(sqlite3* db, const std::filesystem::path& path) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kKnowledgeBusyTimeoutMs);
  while (true) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, &error);
    sqlite3_free(error);
    if (rc == SQLITE_OK) return;
    if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline) {
      store::ThrowSqliteError(
          db, "cannot switch to WAL (is it a knowledge database? choose another --kb path)", path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int UserVersion(sqlite3* db, const std::filesystem::path& path) {
  store::Statement query(db, "PRAGMA user_version", path);
  return query.Step() ? static_cast<int>(query.Int("user_version")) : 0;
}

}  // namespace

// Version 2 (issue 16): experiences carry the instruction set their kernel was
// compiled for, so a kernel found on an AVX-512 machine is only a seed on an AVX2 one.
constexpr const char* kSchemaV2 = "ALTER TABLE experiences ADD COLUMN isa TEXT NOT NULL DEFAULT ''";

DbHandle OpenKnowledgeDatabase(const std::filesystem::path& path) {
  std::error_code ec;
  if (!path.parent_path().empty()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) {
    throw core::IoError(fmt::format("knowledge base '{}': cannot create folder '{}': {}",
                                    path.string(), path.parent_path().string(), ec.message()));
  }
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  DbHandle db(raw);
  if (rc != SQLITE_OK) store::ThrowSqliteError(db.get(), "cannot open knowledge base", path);
  sqlite3_busy_timeout(db.get(), kKnowledgeBusyTimeoutMs);
  EnableWal(db.get(), path);
  store::ExecSql(db.get(), "PRAGMA synchronous = NORMAL", path);
  if (UserVersion(db.get(), path) == kKnowledgeSchemaVersion) return db;
  store::Transaction tx(db.get(), path);
  const int version = UserVersion(db.get(), path);
  if (version > kKnowledgeSchemaVersion) {
    throw core::IoError(fmt::format(
        "knowledge base '{}' has schema version {}, newer than this build ({}); use a newer "
        "kernelevolve or another --kb path",
        path.string(), version, kKnowledgeSchemaVersion));
  }
  if (version < kKnowledgeSchemaVersion) {
    if (version < 1) store::ExecSql(db.get(), kSchemaV1, path);
    if (version < 2) store::ExecSql(db.get(), kSchemaV2, path);
    store::ExecSql(db.get(),
                   fmt::format("PRAGMA user_version = {}", kKnowledgeSchemaVersion).c_str(), path);
  }
  tx.Commit();
  return db;
}

}  // namespace kernelevolve::knowledge
