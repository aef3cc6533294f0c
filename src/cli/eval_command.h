// `kernelevolve eval PROBLEM KERNEL`: the full fitness of a search (every check, the
// sandbox, timing, interleaved confirmation) on one kernel file written by a person or a
// model (issue 20), stored as a one-node run so that later tools read it like any run.
#pragma once

#include <filesystem>
#include <string>

#include "cli/optimize_command.h"

namespace CLI {
class App;
}

namespace kernelevolve::cli {

struct EvalOptions {
  /// The kernel: for --target cpu a C++ file with the DLPack ABI (docs/abi.md), for
  /// triton a Python module, for cuda a .cu file, as the platforms build candidates.
  std::filesystem::path kernel_path;
  /// The problem, target and measurement flags, as `optimize` takes them (out_dir
  /// defaults to runs/eval-<problem>-<UTC time>); the search flags stay at their
  /// defaults and are not used.
  OptimizeOptions run;
};

/// Adds the `eval` subcommand to `app`, filling `options`.
void AddEvalCommand(CLI::App& app, EvalOptions& options);

/// The text of the kernel file for `target`, whose extension must be one the target
/// takes: cpu .cpp/.cc/.cxx, triton .py, cuda .cu. Throws InvalidInputError naming the
/// file when it is missing, a directory or not a regular file, unreadable, empty, or has
/// another extension (the message names the --target that takes it, if any).
std::string ReadKernelFile(const std::filesystem::path& kernel_path, const std::string& target);

/// Loads the problem, builds and evaluates the kernel as `optimize` evaluates a
/// candidate (one node, operator "user", in OUT/kernelevolve.db), confirms a correct one
/// against eager PyTorch in run.confirm_rounds interleaved rounds, writes OUT/result.json
/// (docs/result_json.md, "kernelevolve eval") and, when correct, OUT/best_kernel.<ext>,
/// and prints the verdict on stdout. Returns 0 when the kernel is correct (in every
/// round), 1 when it failed (the status and the reason printed), 2 on bad input (missing
/// or unreadable files, unknown target, a problem file the worker rejects); throws
/// InvalidInputError for the bad inputs found before any work.
int RunEval(const EvalOptions& options);

}  // namespace kernelevolve::cli
