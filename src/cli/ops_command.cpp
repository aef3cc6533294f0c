#include "cli/ops_command.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <CLI/CLI.hpp>

#include "operators/ir/lower_core.h"

namespace kernelevolve::cli {

void AddOpsCommand(CLI::App& app, OpsOptions& o) {
  auto* cmd = app.add_subcommand("ops",
                                 "list the ATen overloads a captured graph may contain, with how each "
                                 "lowers to loop-nest kernels (docs/core_aten.md)");
  cmd->add_flag("--json", o.json, "print JSON: [{\"target\", \"lowering\"}, ...]");
}

int RunOps(const OpsOptions& o) {
  const auto rows = operators::ir::CoreLoweringTable();
  if (o.json) {
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& r : rows) doc.push_back({{"target", r.target}, {"lowering", r.how}});
    std::cout << doc.dump(1) << "\n";
    return 0;
  }
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.target.size());
  for (const auto& r : rows) std::cout << fmt::format("{:<{}}  {}\n", r.target, width, r.how);
  std::cout << fmt::format("{} overloads; any other op ends 'unsupported_op: aten.NAME (node N)'\n", rows.size());
  return 0;
}

}  // namespace kernelevolve::cli
