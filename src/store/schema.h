// Schema of the metadata store and its migrations, versioned by PRAGMA user_version.
// Tables (all times in seconds since the Unix epoch, all latencies in microseconds):
//   runs        one search: problem, target, flags, machine, start/finish, outcome
//   nodes       one candidate of a run: lineage (parent_id NULL for drafts), operator,
//               template, knobs, rationale, full source and its content hash
//   evaluations one row per node: status, correctness, fitness, speedup with its 95%
//               interval, drop-in latency and kernel-only timing statistics as real
//               columns (queryable medians), per-output checks as JSON, build/run time
//   pending     (v2) candidates chosen but not evaluated yet: parent, operator, source
//   node_stats  (v2) selection-policy statistics per node: MCTS visits and value sum,
//               evolutionary island, exhausted flag
//   search_state (v2) one JSON document per run: the search loop's and the policy's
//               state at the last checkpoint (docs/search.md)
//   llm_calls   (v3) every LLM call: provider, model, prompt and response text, tokens,
//               cost, latency, outcome, and the node its candidate became (docs/llm.md)
//   rooflines   (v4) per node: bytes and FLOPs per call, achieved GB/s and GFLOP/s,
//               bound (memory | compute | unknown) and roofline fraction (eval/roofline.h)
//   profiles    (v5) per profiled node: tool, status and the profile as JSON
//               (core/kernel_profile.h: Nsight Compute metrics per kernel and in total)
#pragma once

#include <sqlite3.h>

#include <filesystem>

namespace kernelevolve::store {

/// The schema version this build writes and understands (PRAGMA user_version).
/// Version 1: runs, nodes, evaluations. Version 2: pending, node_stats, search_state.
/// Version 3: llm_calls. Version 4: rooflines. Version 5: profiles. Version 6:
/// node_workers (issue 22: the queue worker that measured a node).
inline constexpr int kSchemaVersion = 6;

/// Reads PRAGMA user_version of the open database `db` (file `path`, for messages).
/// Throws core::IoError when the file is not a database.
int ReadSchemaVersion(sqlite3* db, const std::filesystem::path& path);

/// Brings the database to kSchemaVersion: applies each missing migration step in its
/// own BEGIN IMMEDIATE transaction, setting user_version in the same transaction, so
/// concurrent openers of a fresh file cannot both create the tables. A database newer
/// than this build (user_version > kSchemaVersion) is refused with core::IoError, as is
/// any SQLite failure (message names `path` and sqlite3_errmsg).
void MigrateSchema(sqlite3* db, const std::filesystem::path& path);

}  // namespace kernelevolve::store
