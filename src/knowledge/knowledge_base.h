// The persistent knowledge base: a markdown corpus indexed for retrieval, plus the
// experiences distilled from past runs, in one SQLite file shared by every run.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "knowledge/corpus_indexer.h"
#include "knowledge/experience.h"
#include "knowledge/experience_table.h"
#include "knowledge/knowledge_db.h"
#include "knowledge/retrieval.h"

namespace kernelevolve::knowledge {

/// An indexed document, for listings.
struct DocumentInfo {
  std::string document;  // path inside its corpus folder
  std::string corpus;    // the folder's label
  std::string title;
  int passages = 0;
};

/// What `Add` did.
struct AddResult {
  std::vector<std::filesystem::path> copied;  // destinations in the user corpus folder
  ReindexStats reindex;
};

/// One connection to a knowledge database. Move-only; not thread-safe (give each thread
/// or process its own, as with store::Store). Several processes may use one file at
/// once: WAL journal, busy_timeout kKnowledgeBusyTimeoutMs, writes in BEGIN IMMEDIATE
/// transactions. Database failures throw IoError naming the file.
class KnowledgeBase {
 public:
  /// Opens or creates the database at `path` and brings its index in step with
  /// `corpus_dirs` (labelled by their folder names) and the user corpus folder
  /// UserCorpusDir(path) (label "user"): only changed files are re-indexed (see
  /// ReindexCorpus), and documents whose files are gone are dropped. Missing folders
  /// are ignored.
  static KnowledgeBase Open(const std::filesystem::path& path,
                            const std::vector<std::filesystem::path>& corpus_dirs);

  const std::filesystem::path& Path() const { return path_; }
  /// The user corpus folder (UserCorpusDir(Path())).
  std::filesystem::path UserDir() const;
  /// What the indexing pass of Open (or the last Reindex) did.
  const ReindexStats& LastReindex() const { return last_reindex_; }

  /// Re-scans the corpus folders and re-indexes what changed.
  ReindexStats Reindex();
  /// Two-stage retrieval (RetrievePassages). Throws InvalidInputError for bad facets.
  std::vector<Passage> Retrieve(const RetrievalQuery& query) const;
  /// Copies a user document (a .md file) or every .md file of a folder (kept under the
  /// folder's name) into the user corpus folder, replacing same-named files, then
  /// re-indexes. Every file is parsed first: InvalidInputError names the file and the
  /// field when its front matter is invalid, when `path` does not exist, is not
  /// markdown, or is a folder without .md files; nothing is copied then.
  AddResult Add(const std::filesystem::path& path);
  /// Inserts an experience (its id is ignored); returns the new id.
  int64_t RecordExperience(const Experience& experience);
  /// Stored experiences passing `filter`, newest first. Rows whose JSON columns do not
  /// parse are skipped into `unreadable` when given, else IoError (QueryExperiences).
  std::vector<Experience> Experiences(const ExperienceFilter& filter,
                                      std::vector<std::string>* unreadable = nullptr) const;
  /// Every indexed document, by corpus and path.
  std::vector<DocumentInfo> Documents() const;

 private:
  KnowledgeBase(DbHandle db, std::filesystem::path path, std::vector<CorpusRoot> roots);
  DbHandle db_;
  std::filesystem::path path_;
  std::vector<CorpusRoot> roots_;
  ReindexStats last_reindex_;
};

}  // namespace kernelevolve::knowledge
