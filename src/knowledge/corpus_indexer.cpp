#include "knowledge/corpus_indexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/candidate.h"
#include "core/error.h"
#include "knowledge/front_matter.h"
#include "knowledge/markdown_sections.h"
#include "store/sqlite_statement.h"

namespace kernelevolve::knowledge {
namespace {

namespace fs = std::filesystem;
using store::Statement;

struct FileEntry {
  fs::path path;  // absolute, normalized
  const CorpusRoot* root = nullptr;
  std::string rel_path;  // '/'-separated, inside the root
  int64_t mtime_ns = 0;
  int64_t size = 0;
};

struct IndexedDoc {
  int64_t id = 0;
  std::string content_hash;
  int64_t mtime_ns = 0;
  int64_t size = 0;
};

bool Hidden(const fs::path& rel) {
  for (const auto& part : rel) {
    const std::string s = part.string();
    if (!s.empty() && s[0] == '.') return true;
  }
  return false;
}

std::vector<FileEntry> ScanRoots(const std::vector<CorpusRoot>& roots) {
  std::vector<FileEntry> files;
  for (const CorpusRoot& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root.dir, ec)) continue;
    const fs::path base = fs::weakly_canonical(root.dir, ec);
    for (fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec), end;
         it != end; it.increment(ec)) {
      if (ec) break;
      const fs::path rel = it->path().lexically_relative(base);
      if (!it->is_regular_file(ec) || it->path().extension() != ".md" || Hidden(rel)) continue;
      if (rel == "index.md") continue;
      FileEntry f;
      f.path = it->path();
      f.root = &root;
      f.rel_path = rel.generic_string();
      f.size = static_cast<int64_t>(it->file_size(ec));
      f.mtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       it->last_write_time(ec).time_since_epoch())
                       .count();
      files.push_back(std::move(f));
    }
  }
  std::sort(files.begin(), files.end(),
            [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
  files.erase(std::unique(files.begin(), files.end(),
                          [](const FileEntry& a, const FileEntry& b) { return a.path == b.path; }),
              files.end());
  return files;
}

std::map<std::string, IndexedDoc> LoadIndexed(sqlite3* db, const fs::path& db_path) {
  std::map<std::string, IndexedDoc> out;
  Statement q(db, "SELECT id, source_path, content_hash, mtime_ns, size_bytes FROM documents",
              db_path);
  while (q.Step()) {
    out[q.Text("source_path")] =
        IndexedDoc{q.Int("id"), q.Text("content_hash"), q.Int("mtime_ns"), q.Int("size_bytes")};
  }
  return out;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::IoError(fmt::format("cannot read knowledge document '{}'", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void DeleteDocument(sqlite3* db, const fs::path& db_path, int64_t id) {
  const char* sqls[] = {
      "DELETE FROM passages_fts WHERE rowid IN (SELECT id FROM passages WHERE document_id = :id)",
      "DELETE FROM passages WHERE document_id = :id",
      "DELETE FROM sections WHERE document_id = :id",
      "DELETE FROM documents WHERE id = :id",
  };
  for (const char* sql : sqls) Statement(db, sql, db_path).Bind(":id", id).Run();
}

double NowUnix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Inserts the document, its sections and passages (and their FTS rows); returns the
/// number of passages.
int InsertDocument(sqlite3* db, const fs::path& db_path, const FileEntry& f,
                   const ParsedDocument& doc, const std::string& hash) {
  const DocumentMeta& m = doc.meta;
  Statement ins(db,
                "INSERT INTO documents (source_path, corpus_root, corpus, rel_path, title, "
                "platforms, phases, bottlenecks, tags, content_hash, mtime_ns, size_bytes, "
                "indexed_unix_s) VALUES (:source_path, :corpus_root, :corpus, :rel_path, :title, "
                ":platforms, :phases, :bottlenecks, :tags, :hash, :mtime_ns, :size, :now)",
                db_path);
  ins.Bind(":source_path", f.path.string())
      .Bind(":corpus_root", f.root->dir.string())
      .Bind(":corpus", f.root->label)
      .Bind(":rel_path", f.rel_path)
      .Bind(":title", m.title)
      .Bind(":platforms", nlohmann::json(m.platforms).dump())
      .Bind(":phases", nlohmann::json(m.phases).dump())
      .Bind(":bottlenecks", nlohmann::json(m.bottlenecks).dump())
      .Bind(":tags", nlohmann::json(m.tags).dump())
      .Bind(":hash", hash)
      .Bind(":mtime_ns", f.mtime_ns)
      .Bind(":size", f.size)
      .Bind(":now", NowUnix())
      .Run();
  const int64_t doc_id = sqlite3_last_insert_rowid(db);
  std::string tags;
  for (const auto& t : m.tags) tags += (tags.empty() ? "" : " ") + t;
  int passages = 0;
  int section_ordinal = 0;
  for (const Section& section : SplitSections(doc.body, m.title)) {
    Statement(db,
              "INSERT INTO sections (document_id, ordinal, heading, level) VALUES (:doc, :ord, "
              ":heading, :level)",
              db_path)
        .Bind(":doc", doc_id).Bind(":ord", section_ordinal++)
        .Bind(":heading", section.heading).Bind(":level", section.level)
        .Run();
    const int64_t section_id = sqlite3_last_insert_rowid(db);
    int ordinal = 0;
    for (const std::string& text : SplitPassages(section.text, kMaxPassageChars)) {
      Statement(db,
                "INSERT INTO passages (section_id, document_id, ordinal, text, tokens) VALUES "
                "(:section, :doc, :ord, :text, :tokens)",
                db_path)
          .Bind(":section", section_id).Bind(":doc", doc_id).Bind(":ord", ordinal++)
          .Bind(":text", text).Bind(":tokens", ApproxTokens(text))
          .Run();
      const int64_t passage_id = sqlite3_last_insert_rowid(db);
      Statement(db,
                "INSERT INTO passages_fts (rowid, body, heading, title, tags) VALUES (:id, "
                ":body, :heading, :title, :tags)",
                db_path)
          .Bind(":id", passage_id).Bind(":body", text).Bind(":heading", section.heading)
          .Bind(":title", m.title).Bind(":tags", tags)
          .Run();
      ++passages;
    }
  }
  return passages;
}

bool SameStat(const IndexedDoc& d, const FileEntry& f) {
  return d.mtime_ns == f.mtime_ns && d.size == f.size;
}

/// Applies the changes under the write lock.
void ApplyChanges(sqlite3* db, const fs::path& db_path, const std::vector<FileEntry>& files,
                  ReindexStats& stats) {
  store::Transaction tx(db, db_path);
  std::map<std::string, IndexedDoc> indexed = LoadIndexed(db, db_path);
  for (const FileEntry& f : files) {
    auto it = indexed.find(f.path.string());
    const bool known = it != indexed.end();
    if (known && SameStat(it->second, f)) {
      ++stats.unchanged;
    } else {
      std::string text;
      try {
        text = ReadText(f.path);
      } catch (const core::IoError& e) {
        stats.warnings.push_back(e.what());
        if (known) DeleteDocument(db, db_path, it->second.id);
        if (known) indexed.erase(it);
        continue;
      }
      const std::string hash = core::ContentHash(text);
      if (known && it->second.content_hash == hash) {
        Statement(db, "UPDATE documents SET mtime_ns = :m, size_bytes = :s WHERE id = :id", db_path)
            .Bind(":m", f.mtime_ns).Bind(":s", f.size).Bind(":id", it->second.id)
            .Run();
        ++stats.unchanged;
        ++stats.touched;
      } else {
        if (known) DeleteDocument(db, db_path, it->second.id);
        try {
          ParsedDocument doc = ParseDocument(text, f.path);
          stats.passages += InsertDocument(db, db_path, f, doc, hash);
          ++stats.indexed;
        } catch (const core::InvalidInputError& e) {
          stats.warnings.push_back(fmt::format("skipped: {}", e.what()));
        }
      }
    }
    if (known) indexed.erase(f.path.string());
  }
  for (const auto& [path, doc] : indexed) {
    DeleteDocument(db, db_path, doc.id);
    ++stats.removed;
  }
  tx.Commit();
}

}  // namespace

ReindexStats ReindexCorpus(sqlite3* db, const fs::path& db_path, const std::vector<CorpusRoot>& roots) {
  const std::vector<FileEntry> files = ScanRoots(roots);
  ReindexStats stats;
  stats.scanned = static_cast<int>(files.size());
  // Fast path without a write lock: nothing changed on disk.
  std::map<std::string, IndexedDoc> indexed = LoadIndexed(db, db_path);
  bool dirty = indexed.size() != files.size();
  for (const FileEntry& f : files) {
    auto it = indexed.find(f.path.string());
    if (it == indexed.end() || !SameStat(it->second, f)) dirty = true;
    if (dirty) break;
  }
  if (!dirty) {
    stats.unchanged = stats.scanned;
    return stats;
  }
  ApplyChanges(db, db_path, files, stats);
  return stats;
}

}  // namespace kernelevolve::knowledge
