#include "cli/paths.h"

#include <cstdlib>
#include <ctime>

#include <unistd.h>

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::cli {

std::filesystem::path ExecutableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::filesystem::current_path();
  return exe.parent_path();
}

std::filesystem::path HarnessPath() {
  auto path = ExecutableDir() / "kernelevolve-cpu-harness";
  if (!std::filesystem::exists(path)) {
    throw core::IoError(fmt::format("{} not found; rebuild with scripts/setup.sh", path.string()));
  }
  return path;
}

std::filesystem::path DefaultCacheDir() {
  if (const char* env = std::getenv("KERNELEVOLVE_CACHE_DIR"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "kernelevolve";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "kernelevolve";
  }
  return std::filesystem::temp_directory_path() / "kernelevolve-cache";
}

void EnsureCacheDir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw core::InvalidInputError(fmt::format(
        "--cache-dir {}: cannot create the build cache: {}; give a writable folder", dir.string(),
        ec ? ec.message() : "not a directory"));
  }
  // create_directories succeeds on an existing read-only folder: probe for writing.
  if (::access(dir.c_str(), W_OK) != 0) {
    throw core::InvalidInputError(fmt::format(
        "--cache-dir {}: the build cache is not writable; give a writable folder", dir.string()));
  }
}

std::string UtcStamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &tm);
  return buf;
}

}  // namespace kernelevolve::cli
