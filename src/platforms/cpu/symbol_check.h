// Link-time check of a built candidate: the symbols its shared object needs from
// elsewhere must come from the C/C++ runtime and OpenMP, never from PyTorch, a BLAS, a
// dynamic loader or process-spawning calls (docs/fitness.md, "forbidden symbols").
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kernelevolve::platforms::cpu {

/// Checks the output of `nm -D --undefined-only <so>` (one "  U name[@VERSION]" or
/// "  w name" line per symbol). A symbol is allowed when
///  - it carries a version of the runtime libraries: GLIBC_*, GLIBCXX_*, CXXABI_*,
///    GCC_* (libgcc_s), GOMP_*, OMP_* (libgomp), and it is not on the deny-list; or
///  - it is one of the weak, unversioned toolchain hooks (__gmon_start__,
///    _ITM_registerTMCloneTable, _ITM_deregisterTMCloneTable, __cxa_finalize).
/// The deny-list (allowed libraries, forbidden calls): dlopen, dlmopen, dlsym, dlvsym,
/// system, popen, fork, vfork, clone, execve/execv/execvp/execvpe/execl/execlp/execle,
/// fexecve, posix_spawn, posix_spawnp, socket, connect, syscall, ptrace.
/// Any other unversioned symbol (cblas_sgemm, sgemm_, at::, c10::, torch::) would have
/// to come from a library the harness does not load: rejected too.
/// Returns nullopt when every symbol is allowed, else "links to a forbidden symbol:
/// cblas_sgemm" (C++ names demangled: "at::relu(at::Tensor const&)"), naming the
/// first offender, with " (and N more)" when there are several.
std::optional<std::string> CheckUndefinedSymbols(const std::string& nm_output);

/// Runs `nm -D --undefined-only` on `shared_object` (sandboxed, 30 s) and applies
/// CheckUndefinedSymbols. Returns nullopt when allowed, else the rejection message
/// ("cannot list the symbols of X: ..." when nm fails or is missing: a kernel that
/// cannot be inspected is not run).
std::optional<std::string> CheckSharedObjectSymbols(const std::filesystem::path& shared_object);

}  // namespace kernelevolve::platforms::cpu
