// Compiles CPU candidates into shared objects, cached by content hash.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "platforms/native_build.h"
#include "platforms/platform.h"

namespace kernelevolve::platforms::cpu {

/// The flags every CPU candidate is built with (before -I<dlpack dir>):
///   -std=c++17 -O3 -march=native -fno-trapping-math -ffp-contract=fast -fopenmp -fPIC -shared
/// -fno-trapping-math lets GCC if-convert (and so vectorize) loops whose selects guard a
/// floating-point operation, e.g. the clamps of the math prelude's ke_exp: with the
/// default -ftrapping-math only AVX-512's masked instructions could do so, and the same
/// source ran 6-8x slower on an AVX2 machine (issue 16). -ffp-contract=fast fuses a*b+c
/// into FMA, as GCC does by default outside ISO mode. Neither changes the process's
/// floating-point environment (no -ffast-math: NaN, Inf, signed zeros and rounding keep
/// IEEE 754 semantics apart from the single rounding of a fused multiply-add).
const std::vector<std::string>& CandidateCompileFlags();

/// Builds one candidate translation unit into `<cache_dir>/<hash>.so` with
///   <compiler> <CandidateCompileFlags()> -I<dlpack dir>
/// where hash = core::ContentHash(source + flags + compiler version + what -march=native
/// resolves to on this machine, platforms::QueryNativeTarget). An existing .so
/// with that hash is reused (cache_hit). The compiler runs through eval::RunSandboxed
/// (120 s wall limit, no network) by platforms::CompileCached. Build may be called from
/// several threads, and several processes may share a cache directory: sources and
/// objects are written to unique temporary names and renamed into place.
class CpuBuilder {
 public:
  /// `compiler`: a program name looked up on PATH, or a path. Creates `cache_dir`.
  /// Throws InvalidInputError when the compiler cannot be found or run, or when
  /// dlpack/dlpack.h is not found (set KE_DLPACK_INCLUDE_DIR to its include dir);
  /// IoError when `cache_dir` cannot be created.
  explicit CpuBuilder(std::filesystem::path cache_dir, std::string compiler = "g++");

  /// Compiles `candidate.source`. Compile failures, compiler crashes and the 120 s
  /// timeout are returned as kCompileError with the first "error:" line as message and
  /// the compiler output (first 16 KiB) as log. A built object (fresh or cached) whose
  /// undefined symbols leave the allow-list of symbol_check.h is returned as
  /// kRejectedByCheck ("links to a forbidden symbol: cblas_sgemm; ..."). Throws IoError when the cache directory
  /// cannot be written.
  BuildResult Build(const core::Candidate& candidate) const;

  /// First line of `<compiler> --version`, e.g. "g++ (Debian 12.2.0-14) 12.2.0".
  const std::string& CompilerVersion() const { return compiler_version_; }
  /// The flags hashed and passed before the source file, space-separated.
  std::string Flags() const;
  const std::filesystem::path& CacheDir() const { return cache_dir_; }

 private:
  std::filesystem::path cache_dir_;
  std::string compiler_version_;
  NativeCompiler compiler_;
};

// Shared with the CUDA builder (platforms/native_build.h), named here as before.
using platforms::FindDLPackIncludeDir;
using platforms::FirstErrorLine;
using platforms::QueryNativeTarget;
using platforms::ResolveProgram;

}  // namespace kernelevolve::platforms::cpu
