// Outcome of building or running one candidate. Failures are data (design.md).
#pragma once

#include <string_view>

namespace kernelevolve::core {

enum class Status {
  kOk,
  kCompileError,
  kRuntimeError,     // the kernel returned non-zero or the harness reported an error
  kTimeout,          // wall-clock or CPU-time limit hit
  kCrash,            // killed by a signal (SIGSEGV, SIGBUS, SIGABRT, ...)
  kOutOfMemory,      // allocation failed under the memory limit
  kIncorrect,        // ran, but outputs differ from the reference
  kRejectedByCheck,  // caught by an anti-cheat or ABI check
  kWorkerLost,       // the process running it vanished without a verdict
};

/// snake_case name used in the database and result.json: "ok", "compile_error", ...
std::string_view StatusName(Status status);
/// Inverse of StatusName. Throws InvalidInputError on an unknown name.
Status StatusFromName(std::string_view name);

}  // namespace kernelevolve::core
