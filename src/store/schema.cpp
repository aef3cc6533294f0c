#include "store/schema.h"

#include <fmt/format.h>

#include <array>

#include "core/error.h"
#include "store/sqlite_statement.h"

namespace kernelevolve::store {
namespace {

// Migration N takes user_version N to N+1. A released step is never edited: schema
// changes are new steps appended here (ALTER TABLE / new tables), with kSchemaVersion
// raised to match.
//
// REAL columns are nullable on purpose: SQLite stores a bound NaN as NULL, and the store
// reads NULL back as NaN, so a NaN measurement round-trips instead of failing NOT NULL.
constexpr const char* kMigrationToV1 = R"sql(
CREATE TABLE runs (
  id              INTEGER PRIMARY KEY,
  problem         TEXT NOT NULL,
  problem_path    TEXT NOT NULL,
  target          TEXT NOT NULL,
  config_json     TEXT NOT NULL DEFAULT '{}',
  machine_json    TEXT NOT NULL DEFAULT '{}',
  started_unix_s  REAL,
  finished_unix_s REAL,
  status          TEXT NOT NULL DEFAULT 'running',
  stop_reason     TEXT NOT NULL DEFAULT ''
);

CREATE TABLE nodes (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  parent_id      INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
  depth          INTEGER NOT NULL,
  operator       TEXT NOT NULL,
  template       TEXT NOT NULL,
  knobs_json     TEXT NOT NULL DEFAULT '{}',
  rationale      TEXT NOT NULL,
  source_hash    TEXT NOT NULL,
  source         TEXT NOT NULL,
  created_unix_s REAL
);
CREATE INDEX nodes_run_source_hash ON nodes(run_id, source_hash);
CREATE INDEX nodes_parent ON nodes(parent_id);

CREATE TABLE evaluations (
  node_id                INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  status                 TEXT NOT NULL,
  message                TEXT NOT NULL,
  log_excerpt            TEXT NOT NULL,
  correct                INTEGER NOT NULL CHECK (correct IN (0, 1)),
  fitness                REAL,
  speedup                REAL,
  speedup_ci_low         REAL,
  speedup_ci_high        REAL,
  latency_n              INTEGER NOT NULL,
  latency_median_us      REAL,
  latency_mean_us        REAL,
  latency_stdev_us       REAL,
  latency_min_us         REAL,
  latency_max_us         REAL,
  latency_p10_us         REAL,
  latency_p90_us         REAL,
  latency_ci_low_us      REAL,
  latency_ci_high_us     REAL,
  kernel_only_n          INTEGER NOT NULL,
  kernel_only_median_us  REAL,
  kernel_only_mean_us    REAL,
  kernel_only_stdev_us   REAL,
  kernel_only_min_us     REAL,
  kernel_only_max_us     REAL,
  kernel_only_p10_us     REAL,
  kernel_only_p90_us     REAL,
  kernel_only_ci_low_us  REAL,
  kernel_only_ci_high_us REAL,
  checks_json            TEXT NOT NULL DEFAULT '[]',
  build_seconds          REAL,
  run_seconds            REAL,
  build_cache_hit        INTEGER NOT NULL CHECK (build_cache_hit IN (0, 1))
);
)sql";

// Version 2 (issue 3, crash-safe resume): candidates chosen but not evaluated yet, the
// selection policies' per-node statistics, and the search loop's and policy's state.
// Each row is written in the same transaction as the node or pending candidate it goes
// with, so after a crash the three tables and `nodes` agree.
constexpr const char* kMigrationToV2 = R"sql(
CREATE TABLE pending (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  parent_id      INTEGER REFERENCES nodes(id) ON DELETE CASCADE,
  operator       TEXT NOT NULL,
  template       TEXT NOT NULL,
  knobs_json     TEXT NOT NULL DEFAULT '{}',
  rationale      TEXT NOT NULL,
  source_hash    TEXT NOT NULL,
  source         TEXT NOT NULL,
  created_unix_s REAL
);
CREATE INDEX pending_run ON pending(run_id, id);

CREATE TABLE node_stats (
  node_id   INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  visits    INTEGER NOT NULL DEFAULT 0,
  value_sum REAL,
  island    INTEGER NOT NULL DEFAULT -1,
  exhausted INTEGER NOT NULL DEFAULT 0 CHECK (exhausted IN (0, 1))
);

CREATE TABLE search_state (
  run_id         INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  state_json     TEXT NOT NULL DEFAULT '{}',
  updated_unix_s REAL
);
)sql";

// Version 3 (issue 7, LLM operator): every LLM call of a run, the run's cost ledger.
// node_id is filled once the candidate the call produced is evaluated (matched by
// source_hash); a call that produced nothing keeps NULL.
constexpr const char* kMigrationToV3 = R"sql(
CREATE TABLE llm_calls (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node_id         INTEGER REFERENCES nodes(id) ON DELETE SET NULL,
  parent_node_id  INTEGER,
  purpose         TEXT NOT NULL,
  provider        TEXT NOT NULL,
  model           TEXT NOT NULL,
  base_url        TEXT NOT NULL DEFAULT '',
  prompt_version  TEXT NOT NULL,
  prompt_hash     TEXT NOT NULL,
  prompt_text     TEXT NOT NULL,
  response_text   TEXT NOT NULL,
  input_tokens    INTEGER NOT NULL,
  output_tokens   INTEGER NOT NULL,
  cost_usd        REAL NOT NULL,
  latency_seconds REAL,
  attempts        INTEGER NOT NULL,
  http_status     INTEGER NOT NULL,
  outcome         TEXT NOT NULL,
  error           TEXT NOT NULL DEFAULT '',
  source_hash     TEXT NOT NULL DEFAULT '',
  created_unix_s  REAL
);
CREATE INDEX llm_calls_run ON llm_calls(run_id, id);
CREATE INDEX llm_calls_source ON llm_calls(run_id, source_hash);
)sql";

// Version 4 (issue 5, roofline): where each correct, timed candidate sits on the
// roofline (core::RooflineFigures, eval/roofline.h), one row per node that has figures,
// written in the node's transaction. A table of its own, so the step is additive:
// IF NOT EXISTS keeps it idempotent for files whose user_version was lowered by hand.
constexpr const char* kMigrationToV4 = R"sql(
CREATE TABLE IF NOT EXISTS rooflines (
  node_id              INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  bytes_per_call       REAL,
  flops_per_call       REAL,
  arithmetic_intensity REAL,
  achieved_gbps        REAL,
  achieved_gflops      REAL,
  bound                TEXT NOT NULL DEFAULT 'unknown',
  fraction             REAL
);
)sql";

// Version 5 (issue 6, GPU profiling): the hardware-counter profile of a node
// (core::KernelProfile as JSON: Nsight Compute metrics per kernel and for the call),
// written after the search for the best candidates; one row per profiled node.
constexpr const char* kMigrationToV5 = R"sql(
CREATE TABLE IF NOT EXISTS profiles (
  node_id        INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  tool           TEXT NOT NULL,
  status         TEXT NOT NULL,
  profile_json   TEXT NOT NULL DEFAULT '{}',
  created_unix_s REAL
);
)sql";

// Version 6 (issue 22, evaluation queue): which `kernelevolve worker` built, checked and
// timed a node, and on what machine (core::Evaluation::worker: {"worker", "machine"} as
// JSON text); '' for a node evaluated by the searching process itself.
constexpr const char* kMigrationToV6 = R"sql(
CREATE TABLE IF NOT EXISTS node_workers (
  node_id        INTEGER PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  worker_json    TEXT NOT NULL
);
)sql";

constexpr std::array<const char*, kSchemaVersion> kMigrations = {kMigrationToV1, kMigrationToV2, kMigrationToV3,
                                                                 kMigrationToV4, kMigrationToV5, kMigrationToV6};

}  // namespace

int ReadSchemaVersion(sqlite3* db, const std::filesystem::path& path) {
  Statement query(db, "PRAGMA user_version", path);
  return query.Step() ? static_cast<int>(query.Int("user_version")) : 0;
}

void MigrateSchema(sqlite3* db, const std::filesystem::path& path) {
  while (true) {
    Transaction transaction(db, path);
    // Read inside the write transaction: another process may have migrated meanwhile.
    const int version = ReadSchemaVersion(db, path);
    if (version == kSchemaVersion) return;  // nothing to write; the guard rolls back
    if (version > kSchemaVersion || version < 0) {
      throw core::IoError(fmt::format(
          "SQLite store '{}': schema version {} is newer than this kernelevolve understands "
          "({}); use a newer kernelevolve or a different database path",
          path.string(), version, kSchemaVersion));
    }
    ExecSql(db, kMigrations[static_cast<size_t>(version)], path);
    // PRAGMA takes no bound parameters; the value is our own integer, not user input.
    ExecSql(db, fmt::format("PRAGMA user_version = {}", version + 1).c_str(), path);
    transaction.Commit();
  }
}

}  // namespace kernelevolve::store
