#include "knowledge/knowledge_paths.h"

#include <cstdlib>
#include <sstream>
#include <string>

namespace kernelevolve::knowledge {

namespace fs = std::filesystem;

fs::path DefaultKnowledgeDbPath(const fs::path& cache_dir) {
  if (const char* env = std::getenv("KERNELEVOLVE_KB"); env != nullptr && *env != '\0') return env;
  return cache_dir / "knowledge.db";
}

std::vector<fs::path> DefaultCorpusDirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("KERNELEVOLVE_CORPUS"); env != nullptr && *env != '\0') {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':')) {
      if (!item.empty()) dirs.emplace_back(item);
    }
    return dirs;
  }
  std::error_code ec;
  std::vector<fs::path> candidates;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "kernelevolve" / "knowledge");
#ifdef KE_SOURCE_DIR
  candidates.push_back(fs::path(KE_SOURCE_DIR) / "knowledge");
#endif
  for (const auto& c : candidates) {
    if (fs::is_directory(c, ec)) {
      dirs.push_back(fs::weakly_canonical(c, ec));
      break;
    }
  }
  return dirs;
}

fs::path UserCorpusDir(const fs::path& db_path) { return db_path.parent_path() / "knowledge-user"; }

}  // namespace kernelevolve::knowledge
