// The knowledge database file: connection settings and schema (documents, sections,
// passages, the FTS5 index over passages, experiences).
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <memory>

namespace kernelevolve::knowledge {

/// Schema version stored in PRAGMA user_version.
inline constexpr int kKnowledgeSchemaVersion = 2;

/// How long a connection waits for another process's write lock before failing.
inline constexpr int kKnowledgeBusyTimeoutMs = 15000;

/// Closes a connection (sqlite3_close_v2) when its DbHandle goes away.
struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
/// An owned SQLite connection.
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;

/// Opens or creates the knowledge database at `path` (creating its parent folders),
/// sets busy_timeout, WAL journal mode and synchronous=NORMAL, and creates or checks
/// the schema inside BEGIN IMMEDIATE, so several processes may open a new file at
/// once. Throws IoError naming the file when it cannot be opened, is not an SQLite
/// database, lacks FTS5, or has a schema newer than this build.
DbHandle OpenKnowledgeDatabase(const std::filesystem::path& path);

}  // namespace kernelevolve::knowledge
