#include "platforms/native_build.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <set>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "core/candidate.h"
#include "core/error.h"
#include "eval/result_json.h"
#include "eval/sandbox.h"

namespace kernelevolve::platforms {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kCompileMemoryBytes = 8LL << 30;  // cc1plus / cicc at -O3 stay well below
constexpr size_t kMaxLogBytes = 16 * 1024;          // platform.h: log truncated to 16 KiB

/// `temp_dir` is the driver's TMPDIR, where it writes its intermediate files (cc*.s).
std::map<std::string, std::string> CompilerEnv(const std::string& compiler_path,
                                               const std::vector<std::string>& extra_path,
                                               const std::string& temp_dir = "/tmp") {
  std::string path = fs::path(compiler_path).parent_path().string();
  for (const auto& dir : extra_path) path += ":" + dir;
  // The driver finds as/ld on PATH; LC_ALL=C keeps diagnostics ASCII (no curly quotes).
  return {{"PATH", path + ":/usr/local/bin:/usr/bin:/bin"}, {"LC_ALL", "C"}, {"TMPDIR", temp_dir},
          {"HOME", "/tmp"}};
}

eval::SandboxLimits CompilerLimits(double timeout_seconds) {
  eval::SandboxLimits limits;
  limits.wall_timeout_seconds = timeout_seconds;
  limits.memory_bytes = kCompileMemoryBytes;
  limits.cpu_seconds = static_cast<int64_t>(2 * timeout_seconds);
  limits.file_size_bytes = 1LL << 30;
  limits.isolate_network = true;
  return limits;
}

/// `source_name` is the cache's file name of the source (its content hash): an error line
/// that starts with it names the line as "line L:C" instead, since the user knows the
/// kernel by its own file name, not by the hash.
std::string FailureMessage(const eval::SandboxResult& result, const std::string& log, double timeout_seconds,
                           const std::string& source_name) {
  if (result.timed_out) return fmt::format("compilation timed out after {:.0f} s", timeout_seconds);
  std::string error = FirstErrorLine(log);
  if (error.rfind(source_name + ":", 0) == 0) error = "line " + error.substr(source_name.size() + 1);
  if (!error.empty()) return error;
  if (result.signal != 0) return "compiler killed by signal " + std::to_string(result.signal);
  return "compiler exited with code " + std::to_string(result.exit_code) + " and no error line";
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

}  // namespace

void WriteFileAtomically(const fs::path& path, const std::string& content) {
  static std::atomic<int> counter{0};
  fs::path temp = path;
  temp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(temp, std::ios::binary);
    out << content;
    if (!out.flush()) throw core::IoError("cannot write " + temp.string());
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw core::IoError("cannot rename " + temp.string() + " to " + path.string() + ": " + ec.message());
  }
}

std::string QueryCompilerVersion(const std::string& compiler_path, const std::string& flag_hint) {
  auto result = eval::RunSandboxed({compiler_path, "--version"}, CompilerEnv(compiler_path, {}), "/",
                                   CompilerLimits(30));
  // g++ puts its version on the first line; nvcc on the last two ("Cuda compilation
  // tools, release 13.0, V13.0.88" then "Build cuda_13.0...").
  std::istringstream in(result.stdout_text);
  std::string line, first, release;
  while (std::getline(in, line)) {
    if (first.empty()) first = line;
    if (line.rfind("Cuda compilation tools", 0) == 0) release = line;
  }
  if (result.exit_code != 0 || first.empty()) {
    throw core::InvalidInputError(fmt::format(
        "compiler '{}' does not answer --version (exit {}): {}; pass a working compiler with {}", compiler_path,
        result.exit_code, result.stderr_text.substr(0, result.stderr_text.find('\n')), flag_hint));
  }
  return release.empty() ? first : release;
}

std::string QueryNativeTarget(const std::string& compiler_path) {
  auto result = eval::RunSandboxed({compiler_path, "-march=native", "-Q", "--help=target"},
                                   CompilerEnv(compiler_path, {}), "/", CompilerLimits(30));
  if (result.exit_code != 0) return "";
  // "  -mavx2  [enabled]" and "  -march=  znver3": the options in force, not the
  // listing of valid values that follows them.
  std::istringstream in(result.stdout_text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.find("Known valid arguments") != std::string::npos) break;
    const bool enabled = line.find("[enabled]") != std::string::npos;
    const bool arch = line.find("-march=") != std::string::npos || line.find("-mtune=") != std::string::npos;
    if (!enabled && !arch) continue;
    const auto begin = line.find_first_not_of(" \t");
    if (begin == std::string::npos) continue;
    std::string option = line.substr(begin);
    // Collapse the column padding: "-march=   znver3" -> "-march= znver3".
    std::string compact;
    for (char c : option) {
      if ((c == ' ' || c == '\t') && !compact.empty() && compact.back() == ' ') continue;
      compact += (c == '\t') ? ' ' : c;
    }
    out += compact + "\n";
  }
  return out;
}

fs::path FindDLPackIncludeDir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("KE_DLPACK_INCLUDE_DIR")) candidates.emplace_back(env);
  candidates.emplace_back("/usr/include");
  candidates.emplace_back("/usr/local/include");
  for (const auto& dir : candidates) {
    if (fs::exists(dir / "dlpack" / "dlpack.h")) return dir;
  }
  throw core::InvalidInputError(
      "dlpack/dlpack.h not found in $KE_DLPACK_INCLUDE_DIR, /usr/include or /usr/local/include; "
      "install libdlpack-dev or set KE_DLPACK_INCLUDE_DIR to the directory holding dlpack/");
}

std::string ResolveProgram(const std::string& program, const std::string& flag_hint) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return program;
    throw core::InvalidInputError("compiler '" + program + "' is not an executable file; pass another with " +
                                  flag_hint);
  }
  const char* path_env = std::getenv("PATH");
  std::stringstream path(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(path, dir, ':')) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  throw core::InvalidInputError("compiler '" + program + "' not found on PATH; install it or pass another with " +
                                flag_hint);
}

std::string FirstErrorLine(const std::string& log) {
  static const std::regex kError(R"(error\s*:)");
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, kError)) continue;
    auto begin = line.find_first_not_of(" \t");
    auto end = line.find_last_not_of(" \t\r");
    return line.substr(begin, end - begin + 1);
  }
  return "";
}

int SweepStaleTemporaries(const fs::path& cache_dir, std::chrono::seconds min_age) {
  static const std::regex kTemporary(R"(.*\.tmp\.([0-9]+)\.[0-9]+.*)");
  const auto now = fs::file_time_type::clock::now();
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::smatch m;
    const std::string name = it->path().filename().string();
    if (!std::regex_match(name, m, kTemporary)) continue;
    const long pid = std::strtol(m[1].str().c_str(), nullptr, 10);
    // kill(pid, 0): 0 when the process exists, EPERM when it exists as another user's.
    if (pid <= 0 || pid == getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;
    std::error_code time_ec, remove_ec;
    const auto modified = fs::last_write_time(it->path(), time_ec);
    if (time_ec || now - modified < min_age) continue;
    if (fs::remove_all(it->path(), remove_ec) > 0 && !remove_ec) ++removed;
  }
  return removed;
}

BuildResult CompileCached(const fs::path& cache_dir, const NativeCompiler& compiler, const std::string& source) {
  {  // once per process and folder: what killed builds left (SweepStaleTemporaries)
    static std::mutex mutex;
    static std::set<fs::path> swept;
    std::lock_guard<std::mutex> lock(mutex);
    if (swept.insert(cache_dir).second) SweepStaleTemporaries(cache_dir);
  }
  BuildResult build;
  std::string key = source + "\n" + Joined(compiler.flags) + "\n" + compiler.version;
  if (!compiler.target.empty()) key += "\n" + compiler.target;
  build.source_hash = core::ContentHash(key);
  const std::string stem = build.source_hash;
  build.artifact = cache_dir / (stem + ".so");
  if (fs::exists(build.artifact)) {
    build.status = core::Status::kOk;
    build.message = "ok";
    build.cache_hit = true;
    return build;
  }
  const std::string source_name = stem + compiler.source_extension;
  WriteFileAtomically(cache_dir / source_name, source);

  static std::atomic<int> counter{0};
  const std::string temp_name =
      stem + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++) + ".so";
  std::vector<std::string> argv = {compiler.compiler_path};
  argv.insert(argv.end(), compiler.flags.begin(), compiler.flags.end());
  argv.insert(argv.end(), {"-o", temp_name, source_name});
  // The compiler sees a read-only file system except its output folder and TMPDIR, a
  // folder of this build's own: a driver killed at the timeout leaves its intermediate
  // files there, and the folder goes with them.
  const fs::path temp_dir = cache_dir / (temp_name + ".d");
  fs::create_directories(temp_dir);
  eval::SandboxLimits limits = CompilerLimits(compiler.timeout_seconds);
  limits.read_only_filesystem = true;
  limits.writable_paths = {cache_dir};
  auto result = eval::RunSandboxed(argv, CompilerEnv(compiler.compiler_path, compiler.extra_path, temp_dir.string()),
                                   cache_dir, limits);
  std::error_code temp_ec;
  fs::remove_all(temp_dir, temp_ec);
  build.seconds = result.wall_seconds;
  const std::string log = result.stdout_text + result.stderr_text;
  build.log = eval::Utf8Head(log, kMaxLogBytes);

  std::error_code ec;
  const bool ok = !result.timed_out && result.signal == 0 && result.exit_code == 0 &&
                  fs::exists(cache_dir / temp_name);
  if (!ok) {
    fs::remove(cache_dir / temp_name, ec);
    build.status = core::Status::kCompileError;
    build.message = FailureMessage(result, log, compiler.timeout_seconds, source_name);
    build.artifact.clear();
    return build;
  }
  fs::rename(cache_dir / temp_name, build.artifact, ec);
  if (ec) {
    fs::remove(cache_dir / temp_name, ec);
    throw core::IoError("cannot move the compiled kernel into " + build.artifact.string() + ": " + ec.message());
  }
  build.status = core::Status::kOk;
  build.message = "ok";
  return build;
}

}  // namespace kernelevolve::platforms
