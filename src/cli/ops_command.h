// `kernelevolve ops [--json]`: the ATen overloads the Core ATen lowering knows
// (operators/ir/lower_core.h), each with how it lowers: what any captured graph may
// contain and still compile (docs/core_aten.md is generated from it).
#pragma once

namespace CLI {
class App;
}

namespace kernelevolve::cli {

struct OpsOptions {
  bool json = false;  // --json: [{"target", "lowering"}, ...]
};

/// Adds the `ops` subcommand to `app`, filling `options`.
void AddOpsCommand(CLI::App& app, OpsOptions& options);

/// Prints the lowering table (one "TARGET  LOWERING" line per overload, or JSON).
/// Returns 0.
int RunOps(const OpsOptions& options);

}  // namespace kernelevolve::cli
