#include "platforms/cuda/cuda_builder.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include "core/error.h"

namespace kernelevolve::platforms::cuda {
namespace {

namespace fs = std::filesystem;

constexpr double kNvccTimeoutSeconds = 300;

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string ArchForCapability(const std::string& capability) {
  if (capability.empty()) return "sm_90a";
  const auto dot = capability.find('.');
  const std::string major = capability.substr(0, dot);
  const std::string minor = dot == std::string::npos ? "" : capability.substr(dot + 1);
  if (!AllDigits(major) || !AllDigits(minor)) {
    throw core::InvalidInputError("device capability '" + capability +
                                  "' is not MAJOR.MINOR (as torch.cuda.get_device_capability reports)");
  }
  if (major == "9" && minor == "0") return "sm_90a";
  return "sm_" + major + minor;
}

std::string FindNvcc(const std::string& requested) {
  const std::string hint = "--nvcc (or set CUDACXX)";
  if (!requested.empty()) return ResolveProgram(requested, hint);
  if (const char* env = std::getenv("CUDACXX"); env != nullptr && *env != '\0') return ResolveProgram(env, hint);
  try {
    return ResolveProgram("nvcc", hint);
  } catch (const core::InvalidInputError&) {
    if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return "/usr/local/cuda/bin/nvcc";
    throw core::InvalidInputError(
        "--target cuda: nvcc not found (not in $CUDACXX, not on PATH, not /usr/local/cuda/bin/nvcc); "
        "install the CUDA toolkit or pass its path with --nvcc");
  }
}

CudaBuilder::CudaBuilder(fs::path cache_dir, const std::string& nvcc, std::string arch)
    : cache_dir_(std::move(cache_dir)), arch_(std::move(arch)) {
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec) throw core::IoError("cannot create build cache " + cache_dir_.string() + ": " + ec.message());
  cache_dir_ = fs::absolute(cache_dir_);
  compiler_.compiler_path = FindNvcc(nvcc);
  compiler_.version = QueryCompilerVersion(compiler_.compiler_path, "--nvcc");
  compiler_.flags = {"-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-arch=" + arch_,
                     "-I" + FindDLPackIncludeDir().string()};
  compiler_.source_extension = ".cu";
  compiler_.timeout_seconds = kNvccTimeoutSeconds;
}

std::string CudaBuilder::Flags() const {
  std::string out;
  for (const auto& flag : compiler_.flags) out += (out.empty() ? "" : " ") + flag;
  return out;
}

BuildResult CudaBuilder::Build(const core::Candidate& candidate) const {
  if (candidate.source.find("kernelevolve_entry") == std::string::npos) {
    BuildResult build;
    build.status = core::Status::kCompileError;
    build.message = "the source defines no extern \"C\" kernelevolve_entry (docs/gpu.md, CUDA C++ ABI)";
    return build;
  }
  return CompileCached(cache_dir_, compiler_, candidate.source);
}

}  // namespace kernelevolve::platforms::cuda
