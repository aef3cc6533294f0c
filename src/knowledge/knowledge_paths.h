// Where the knowledge database and the corpus folders are by default.
#pragma once

#include <filesystem>
#include <vector>

namespace kernelevolve::knowledge {

/// The knowledge database: $KERNELEVOLVE_KB when set, else `cache_dir`/knowledge.db
/// (cache_dir is kernelevolve's cache folder, ~/.cache/kernelevolve by default).
std::filesystem::path DefaultKnowledgeDbPath(const std::filesystem::path& cache_dir);

/// The built-in corpus folders: $KERNELEVOLVE_CORPUS (folders separated by ':') when
/// set; else the first that exists of <executable dir>/../share/kernelevolve/knowledge
/// (an installed tree) and <source tree>/knowledge (KE_SOURCE_DIR, a build tree).
/// Empty when none exists.
std::vector<std::filesystem::path> DefaultCorpusDirs();

/// The folder user documents are copied into by `kb add`: "knowledge-user" beside the
/// database file.
std::filesystem::path UserCorpusDir(const std::filesystem::path& db_path);

}  // namespace kernelevolve::knowledge
