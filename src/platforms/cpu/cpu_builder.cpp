#include "platforms/cpu/cpu_builder.h"

#include "core/error.h"
#include "platforms/cpu/symbol_check.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

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

const std::vector<std::string>& CandidateCompileFlags() {
  static const std::vector<std::string> kFlags = {"-std=c++17",         "-O3",     "-march=native",
                                                  "-fno-trapping-math", "-ffp-contract=fast",
                                                  "-fopenmp",           "-fPIC",   "-shared"};
  return kFlags;
}

CpuBuilder::CpuBuilder(fs::path cache_dir, std::string compiler)
    : cache_dir_(std::move(cache_dir)) {
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec) throw core::IoError("cannot create build cache " + cache_dir_.string() + ": " + ec.message());
  cache_dir_ = fs::absolute(cache_dir_);
  // There is no compiler flag for the CPU target (it compiles with g++ from PATH), so
  // the errors say how to pick another.
  const char* hint = "a g++ first on PATH (the CPU target compiles with g++)";
  compiler_.compiler_path = ResolveProgram(compiler, hint);
  compiler_version_ = QueryCompilerVersion(compiler_.compiler_path, hint);
  compiler_.version = compiler_version_;
  compiler_.flags = CandidateCompileFlags();
  compiler_.flags.push_back("-I" + FindDLPackIncludeDir().string());
  compiler_.target = QueryNativeTarget(compiler_.compiler_path);
  compiler_.source_extension = ".cpp";
}

std::string CpuBuilder::Flags() const {
  std::string out;
  for (const auto& flag : compiler_.flags) out += (out.empty() ? "" : " ") + flag;
  return out;
}

BuildResult CpuBuilder::Build(const core::Candidate& candidate) const {
  BuildResult build = CompileCached(cache_dir_, compiler_, candidate.source);
  if (build.status != core::Status::kOk) return build;
  return RejectForbiddenSymbols(std::move(build));
}

}  // namespace kernelevolve::platforms::cpu
