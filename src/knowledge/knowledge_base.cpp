#include "knowledge/knowledge_base.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "knowledge/front_matter.h"
#include "knowledge/knowledge_paths.h"
#include "store/sqlite_statement.h"

namespace kernelevolve::knowledge {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InvalidInputError(fmt::format("kb add {}: cannot read the file", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// (source, destination relative to the user folder) for every file `path` adds.
std::vector<std::pair<fs::path, fs::path>> FilesToAdd(const fs::path& path) {
  std::error_code ec;
  std::vector<std::pair<fs::path, fs::path>> files;
  if (fs::is_directory(path, ec)) {
    const fs::path base = fs::weakly_canonical(path, ec);
    for (fs::recursive_directory_iterator it(base, ec), end; it != end; it.increment(ec)) {
      if (ec) break;
      const fs::path rel = it->path().lexically_relative(base);
      if (rel.string().find("/.") != std::string::npos || rel.string().rfind('.', 0) == 0) continue;
      if (it->is_regular_file(ec) && it->path().extension() == ".md") {
        files.emplace_back(it->path(), base.filename() / rel);
      }
    }
    if (files.empty()) {
      throw core::InvalidInputError(fmt::format(
          "kb add {}: the folder holds no .md files (only markdown documents are indexed)",
          path.string()));
    }
    return files;
  }
  if (!fs::is_regular_file(path, ec)) {
    throw core::InvalidInputError(fmt::format("kb add {}: no such file or folder", path.string()));
  }
  if (path.extension() != ".md") {
    throw core::InvalidInputError(fmt::format(
        "kb add {}: not a markdown file (rename it to .md; only markdown documents are indexed)",
        path.string()));
  }
  files.emplace_back(path, path.filename());
  return files;
}

}  // namespace

KnowledgeBase::KnowledgeBase(DbHandle db, fs::path path, std::vector<CorpusRoot> roots)
    : db_(std::move(db)), path_(std::move(path)), roots_(std::move(roots)) {}

KnowledgeBase KnowledgeBase::Open(const fs::path& path, const std::vector<fs::path>& corpus_dirs) {
  std::vector<CorpusRoot> roots;
  for (const auto& dir : corpus_dirs) {
    std::string label = dir.filename().string();
    if (label.empty()) label = dir.parent_path().filename().string();
    roots.push_back(CorpusRoot{dir, label});
  }
  roots.push_back(CorpusRoot{UserCorpusDir(path), "user"});
  KnowledgeBase kb(OpenKnowledgeDatabase(path), path, std::move(roots));
  kb.Reindex();
  return kb;
}

fs::path KnowledgeBase::UserDir() const { return UserCorpusDir(path_); }

ReindexStats KnowledgeBase::Reindex() {
  last_reindex_ = ReindexCorpus(db_.get(), path_, roots_);
  return last_reindex_;
}

std::vector<Passage> KnowledgeBase::Retrieve(const RetrievalQuery& query) const {
  return RetrievePassages(db_.get(), path_, query);
}

AddResult KnowledgeBase::Add(const fs::path& path) {
  const auto files = FilesToAdd(path);
  for (const auto& [source, rel] : files) ParseDocument(ReadFile(source), source);
  AddResult result;
  for (const auto& [source, rel] : files) {
    const fs::path dest = UserDir() / rel;
    std::error_code ec;
    if (fs::equivalent(source, dest, ec)) {
      result.copied.push_back(dest);
      continue;
    }
    fs::create_directories(dest.parent_path(), ec);
    fs::copy_file(source, dest, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      throw core::IoError(fmt::format("kb add: cannot copy '{}' to '{}': {}", source.string(),
                                      dest.string(), ec.message()));
    }
    result.copied.push_back(dest);
  }
  result.reindex = Reindex();
  return result;
}

int64_t KnowledgeBase::RecordExperience(const Experience& experience) {
  return InsertExperience(db_.get(), path_, experience);
}

std::vector<Experience> KnowledgeBase::Experiences(const ExperienceFilter& filter,
                                                   std::vector<std::string>* unreadable) const {
  return QueryExperiences(db_.get(), path_, filter, unreadable);
}

std::vector<DocumentInfo> KnowledgeBase::Documents() const {
  store::Statement q(db_.get(),
                     "SELECT d.rel_path AS rel_path, d.corpus AS corpus, d.title AS title, "
                     "(SELECT COUNT(*) FROM passages p WHERE p.document_id = d.id) AS passages "
                     "FROM documents d ORDER BY d.corpus, d.rel_path",
                     path_);
  std::vector<DocumentInfo> out;
  while (q.Step()) {
    out.push_back(DocumentInfo{q.Text("rel_path"), q.Text("corpus"), q.Text("title"),
                               static_cast<int>(q.Int("passages"))});
  }
  return out;
}

}  // namespace kernelevolve::knowledge
