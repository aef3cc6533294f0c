// Compiling one native candidate (C++ for the CPU, CUDA C++ for the GPU) into a
// shared object in the sandbox, cached by content hash: the part the CPU and CUDA
// builders share.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "platforms/platform.h"

namespace kernelevolve::platforms {

/// One compiler and how it is called: `<compiler_path> <flags...> -o <out.so> <src>`.
struct NativeCompiler {
  std::string compiler_path;       // resolved executable (ResolveProgram)
  std::string version;             // first line of `--version`, hashed with the source
  std::vector<std::string> flags;  // passed before -o; hashed, joined by spaces
  /// What machine-dependent flags (-march=native) resolve to on this machine
  /// (QueryNativeTarget), hashed when not empty: a cache shared by an AVX2 and an
  /// AVX-512 machine never hands one the other's object.
  std::string target;
  std::string source_extension;    // ".cpp", ".cu"
  /// Directories added in front of PATH for the compiler (its own directory is always
  /// first): nvcc runs its host compiler and cicc/ptxas found there.
  std::vector<std::string> extra_path;
  double timeout_seconds = 120;    // wall limit of one compile
};

/// Builds `source` into `<cache_dir>/<hash>.so`, hash = core::ContentHash(source + "\n"
/// + flags joined by spaces + "\n" + version [+ "\n" + target when set]); the source is kept beside it as
/// `<hash><source_extension>`. An existing object is reused (cache_hit, status kOk).
/// The compiler runs through eval::RunSandboxed: no network, read-only file system
/// except `cache_dir` (its TMPDIR is a folder of the build's own there, removed after),
/// 8 GiB of address space, `compiler.timeout_seconds` of wall time. Failures, compiler
/// crashes and timeouts are kCompileError values with the first "error" line as message
/// and the first 16 KiB of output as log. Safe from several threads and processes
/// sharing `cache_dir` (unique temporary names renamed into place). The first build of
/// a process in a `cache_dir` sweeps it (SweepStaleTemporaries). Throws IoError when
/// the cache cannot be written.
BuildResult CompileCached(const std::filesystem::path& cache_dir, const NativeCompiler& compiler,
                          const std::string& source);

/// First line of `<compiler_path> --version` (nvcc: its last line, the release).
/// Throws InvalidInputError naming `flag_hint` (how to pick another: "--nvcc", or for the CPU a g++ on PATH) when
/// the compiler does not answer.
std::string QueryCompilerVersion(const std::string& compiler_path, const std::string& flag_hint);

/// The options `-march=native` turns on for `compiler_path` on this machine: the
/// "enabled" lines of `<compiler> -march=native -Q --help=target` (GCC; -march=, -mtune=,
/// and every -m flag such as -mavx2 or -mavx512f), joined by newlines. Empty when the
/// compiler does not answer (clang has no -Q): the caller then hashes without it.
std::string QueryNativeTarget(const std::string& compiler_path);

/// Directory holding dlpack/dlpack.h: $KE_DLPACK_INCLUDE_DIR when set, else the first of
/// /usr/include, /usr/local/include that has it. Throws InvalidInputError when none does.
std::filesystem::path FindDLPackIncludeDir();

/// `program` resolved against $PATH (returned unchanged when it contains a '/').
/// Throws InvalidInputError naming the program and `flag_hint` (the flag that picks
/// another) when it is not found.
std::string ResolveProgram(const std::string& program, const std::string& flag_hint);

/// First line containing "error" followed by ':' (gcc "error:", nvcc "error :" and
/// "error   :") in a compiler log, trimmed; "" when none.
std::string FirstErrorLine(const std::string& log);

/// Writes `content` to `path` through a unique temporary name and a rename.
/// Throws IoError.
void WriteFileAtomically(const std::filesystem::path& path, const std::string& content);

/// Removes what builds of dead processes left in `cache_dir`: entries named
/// `<name>.tmp.<pid>.<n>` with any suffix (CompileCached's object and TMPDIR folder,
/// WriteFileAtomically's file) when no process `pid` runs on this machine and the entry
/// was last modified more than `min_age` ago (a host or PID namespace sharing the folder
/// keeps its in-flight files). A process killed mid-build (SIGKILL, Ctrl-C twice) leaves
/// them. Returns how many entries it removed; errors skip the entry.
int SweepStaleTemporaries(const std::filesystem::path& cache_dir,
                          std::chrono::seconds min_age = std::chrono::minutes(10));

}  // namespace kernelevolve::platforms
