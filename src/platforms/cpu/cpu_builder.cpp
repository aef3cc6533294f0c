#include "platforms/cpu/cpu_builder.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "eval/result_json.h"
#include "eval/sandbox.h"
#include "platforms/cpu/symbol_check.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

constexpr double kCompileTimeoutSeconds = 120;
constexpr int64_t kCompileMemoryBytes = 8LL << 30;  // cc1plus at -O3 stays well below
constexpr size_t kMaxLogBytes = 16 * 1024;          // platform.h: log truncated to 16 KiB

std::map<std::string, std::string> CompilerEnv(const std::string& compiler_path) {
  std::string dir = fs::path(compiler_path).parent_path().string();
  // The driver finds as/ld on PATH; LC_ALL=C keeps diagnostics ASCII (no curly quotes).
  return {{"PATH", dir + ":/usr/local/bin:/usr/bin:/bin"}, {"LC_ALL", "C"}, {"TMPDIR", "/tmp"}};
}

eval::SandboxLimits CompilerLimits() {
  eval::SandboxLimits limits;
  limits.wall_timeout_seconds = kCompileTimeoutSeconds;
  limits.memory_bytes = kCompileMemoryBytes;
  limits.cpu_seconds = static_cast<int64_t>(2 * kCompileTimeoutSeconds);
  limits.file_size_bytes = 1LL << 30;
  limits.isolate_network = true;
  return limits;
}

std::string FirstLine(const std::string& text) {
  auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

std::string QueryVersion(const std::string& compiler_path) {
  eval::SandboxLimits limits = CompilerLimits();
  limits.wall_timeout_seconds = 30;
  auto result = eval::RunSandboxed({compiler_path, "--version"}, CompilerEnv(compiler_path), "/", limits);
  std::string line = FirstLine(result.stdout_text);
  if (result.exit_code != 0 || line.empty()) {
    throw core::InvalidInputError("compiler '" + compiler_path + "' does not answer --version (exit " +
                                  std::to_string(result.exit_code) + "): " + FirstLine(result.stderr_text) +
                                  "; pass a working C++ compiler with --compiler");
  }
  return line;
}

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

std::string FailureMessage(const eval::SandboxResult& result, const std::string& log) {
  if (result.timed_out) {
    return "compilation timed out after " + std::to_string(static_cast<int>(kCompileTimeoutSeconds)) + " s";
  }
  std::string error = FirstErrorLine(log);
  if (!error.empty()) return error;
  if (result.signal != 0) return "compiler killed by signal " + std::to_string(result.signal);
  return "compiler exited with code " + std::to_string(result.exit_code) + " and no error line";
}

/// A built object whose undefined symbols leave the allow-list becomes kRejectedByCheck
/// (symbol_check.h); the object stays in the cache, the verdict is recomputed on a hit.
BuildResult RejectForbiddenSymbols(BuildResult build) {
  if (auto reason = CheckSharedObjectSymbols(build.artifact)) {
    build.status = core::Status::kRejectedByCheck;
    build.message = *reason;
  }
  return build;
}

}  // namespace

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

std::string ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return program;
    throw core::InvalidInputError("compiler '" + program + "' is not an executable file");
  }
  const char* path_env = std::getenv("PATH");
  std::stringstream path(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(path, dir, ':')) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  throw core::InvalidInputError("compiler '" + program +
                                "' not found on PATH; install it or pass another with --compiler");
}

std::string FirstErrorLine(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("error:") == std::string::npos) continue;
    auto begin = line.find_first_not_of(" \t");
    auto end = line.find_last_not_of(" \t\r");
    return line.substr(begin, end - begin + 1);
  }
  return "";
}

CpuBuilder::CpuBuilder(fs::path cache_dir, std::string compiler)
    : cache_dir_(std::move(cache_dir)) {
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec) throw core::IoError("cannot create build cache " + cache_dir_.string() + ": " + ec.message());
  cache_dir_ = fs::absolute(cache_dir_);
  compiler_path_ = ResolveProgram(compiler);
  compiler_version_ = QueryVersion(compiler_path_);
  dlpack_include_dir_ = FindDLPackIncludeDir();
}

std::string CpuBuilder::Flags() const {
  return "-std=c++17 -O3 -march=native -fopenmp -fPIC -shared -I" + dlpack_include_dir_.string();
}

BuildResult CpuBuilder::Build(const core::Candidate& candidate) const {
  BuildResult build;
  build.source_hash = core::ContentHash(candidate.source + "\n" + Flags() + "\n" + compiler_version_);
  const std::string stem = build.source_hash;
  build.artifact = cache_dir_ / (stem + ".so");
  if (fs::exists(build.artifact)) {
    build.status = core::Status::kOk;
    build.message = "ok";
    build.cache_hit = true;
    return RejectForbiddenSymbols(std::move(build));
  }
  WriteFileAtomically(cache_dir_ / (stem + ".cpp"), candidate.source);

  static std::atomic<int> counter{0};
  std::string temp_name = stem + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++) + ".so";
  std::vector<std::string> argv = {compiler_path_, "-std=c++17", "-O3", "-march=native", "-fopenmp",
                                   "-fPIC", "-shared", "-I" + dlpack_include_dir_.string(),
                                   "-o", temp_name, stem + ".cpp"};
  // The compiler sees a read-only file system except its output folder and TMPDIR.
  eval::SandboxLimits limits = CompilerLimits();
  limits.read_only_filesystem = true;
  limits.writable_paths = {cache_dir_, "/tmp"};
  auto result = eval::RunSandboxed(argv, CompilerEnv(compiler_path_), cache_dir_, limits);
  build.seconds = result.wall_seconds;
  std::string log = result.stdout_text + result.stderr_text;
  build.log = eval::Utf8Head(log, kMaxLogBytes);

  std::error_code ec;
  bool ok = !result.timed_out && result.signal == 0 && result.exit_code == 0 &&
            fs::exists(cache_dir_ / temp_name);
  if (!ok) {
    fs::remove(cache_dir_ / temp_name, ec);
    build.status = core::Status::kCompileError;
    build.message = FailureMessage(result, log);
    build.artifact.clear();
    return build;
  }
  fs::rename(cache_dir_ / temp_name, build.artifact, ec);
  if (ec) {
    fs::remove(cache_dir_ / temp_name, ec);
    throw core::IoError("cannot move the compiled kernel into " + build.artifact.string() + ": " + ec.message());
  }
  build.status = core::Status::kOk;
  build.message = "ok";
  return RejectForbiddenSymbols(std::move(build));
}

}  // namespace kernelevolve::platforms::cpu
