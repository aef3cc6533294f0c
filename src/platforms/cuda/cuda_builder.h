// Compiles CUDA C++ candidates (.cu) with nvcc into shared objects, cached by
// content hash (platforms/native_build.h, shared with the CPU builder).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "platforms/native_build.h"
#include "platforms/platform.h"

namespace kernelevolve::platforms::cuda {

/// The -arch value for a device capability "X.Y" (torch's major.minor): "9.0" ->
/// "sm_90a" (Hopper's architecture-specific features: wgmma, setmaxnreg), any other
/// -> "sm_XY"; "" (no device, e.g. TRITON_INTERPRET=1) -> "sm_90a". Throws
/// InvalidInputError for a capability that is not "digits.digits".
std::string ArchForCapability(const std::string& capability);

/// The nvcc executable: `requested` when non-empty (a path or a name on PATH), else
/// $CUDACXX, else `nvcc` on PATH, else /usr/local/cuda/bin/nvcc. Throws
/// InvalidInputError saying to pass --nvcc or set CUDACXX when none is found.
std::string FindNvcc(const std::string& requested);

/// Builds one .cu translation unit into `<cache_dir>/<hash>.so` with
///   nvcc -O3 -std=c++17 -shared -Xcompiler -fPIC -arch=<arch> -I<dlpack dir>
/// (no --use_fast_math: templates opt into fast intrinsics in their source; the CUDA
/// runtime is linked statically, nvcc's default). hash = ContentHash(source + flags +
/// nvcc release line). In the sandbox, 300 s wall limit (nvcc is slower than g++).
/// No symbol allow-list: a CUDA object always imports dlopen/pthread through its
/// static CUDA runtime, and it runs in the GPU runner process, as Triton code does.
class CudaBuilder {
 public:
  /// `nvcc`: as for FindNvcc; `arch`: e.g. "sm_90a". Creates `cache_dir`. Throws
  /// InvalidInputError when nvcc is missing or does not answer --version, or
  /// dlpack/dlpack.h is not found; IoError when `cache_dir` cannot be created.
  CudaBuilder(std::filesystem::path cache_dir, const std::string& nvcc, std::string arch);

  /// Compiles `candidate.source`; nvcc errors are kCompileError values with the first
  /// "error" line as message and nvcc's output (first 16 KiB) as log. A source that
  /// never names `kernelevolve_entry` is kCompileError without running nvcc.
  /// Throws IoError when the cache cannot be written.
  BuildResult Build(const core::Candidate& candidate) const;

  /// nvcc's release line, e.g. "Cuda compilation tools, release 13.0, V13.0.88".
  const std::string& Version() const { return compiler_.version; }
  const std::string& Arch() const { return arch_; }
  const std::string& NvccPath() const { return compiler_.compiler_path; }
  /// The flags hashed and passed before -o, space-separated.
  std::string Flags() const;

 private:
  std::filesystem::path cache_dir_;
  std::string arch_;
  NativeCompiler compiler_;
};

}  // namespace kernelevolve::platforms::cuda
