// Where kernelevolve finds its own programs and keeps its caches.
#pragma once

#include <filesystem>
#include <string>

namespace kernelevolve::cli {

/// Folder of the running executable (/proc/self/exe).
std::filesystem::path ExecutableDir();
/// The harness program built beside `kernelevolve`; throws IoError when missing.
std::filesystem::path HarnessPath();
/// $KERNELEVOLVE_CACHE_DIR, else $XDG_CACHE_HOME/kernelevolve, else ~/.cache/kernelevolve.
std::filesystem::path DefaultCacheDir();
/// The default DefaultCacheDir picks, as --cache-dir's help says it.
inline constexpr const char* kCacheDirDefaultHelp =
    "default $KERNELEVOLVE_CACHE_DIR, else $XDG_CACHE_HOME/kernelevolve, else ~/.cache/kernelevolve";

/// Creates the build cache folder `dir` (--cache-dir) if missing, before any long work.
/// Throws InvalidInputError naming --cache-dir when it cannot be created or is not a
/// folder (e.g. a path under a regular file or a read-only mount).
void EnsureCacheDir(const std::filesystem::path& dir);

/// Current UTC time as "YYYYmmdd-HHMMSS", for default run directory names.
std::string UtcStamp();

}  // namespace kernelevolve::cli
