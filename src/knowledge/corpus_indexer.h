// Keeping the passage index in step with the markdown corpus folders: only files whose
// size, mtime or content changed are re-read and re-indexed; deleted files are dropped.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

namespace kernelevolve::knowledge {

/// One corpus folder and the label its documents carry ("knowledge", "user").
struct CorpusRoot {
  std::filesystem::path dir;
  std::string label;
};

/// What one Reindex pass did.
struct ReindexStats {
  int scanned = 0;    // markdown files found in the corpus folders
  int indexed = 0;    // new or changed content: (re)split and (re)indexed
  int unchanged = 0;  // same size and mtime, or same content hash after a touch
  int touched = 0;    // mtime or size changed but the content hash did not (subset of unchanged)
  int removed = 0;    // indexed documents whose file is gone (or left the corpus folders)
  int passages = 0;   // passages written for the indexed documents
  std::vector<std::string> warnings;  // files skipped, with the reason
};

/// The largest passage, in characters (about 225 tokens at chars/4).
inline constexpr size_t kMaxPassageChars = 900;

/// Scans `roots` for *.md files (recursively; hidden entries and each root's own
/// index.md are skipped) and brings the database `db` in step: the index mirrors exactly
/// these folders. Reads nothing but file metadata when nothing changed. Otherwise
/// takes the write lock (BEGIN IMMEDIATE), re-checks under it (a concurrent process may
/// have done the work), and re-indexes the changed files in one transaction. A file
/// whose front matter is invalid is skipped with a warning (and its old version
/// dropped). Missing roots are ignored. Throws IoError on database failures.
ReindexStats ReindexCorpus(sqlite3* db, const std::filesystem::path& db_path,
                           const std::vector<CorpusRoot>& roots);

}  // namespace kernelevolve::knowledge
