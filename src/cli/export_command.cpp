#include "cli/export_command.h"

#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "platforms/cpu/cpu_builder.h"
#include "problem/worker_client.h"
#include "report/model_export.h"

namespace kernelevolve::cli {

void AddExportCommand(CLI::App& app, ExportOptions& o) {
  auto* cmd = app.add_subcommand("export",
                                 "write a run's best kernel as a KernelBench-format model_new.py "
                                 "(ModelNew over a torch.library custom op; docs/export.md)");
  cmd->add_option("run_dir", o.run_dir, "run directory of `kernelevolve optimize --out`")
      ->required();
  cmd->add_option("--out", o.out_dir,
                  "folder for model_new.py, problem.py and the kernel (default RUN_DIR/export)");
}

int RunExport(const ExportOptions& o) {
  const std::filesystem::path out_dir = o.out_dir.empty() ? o.run_dir / "export" : o.out_dir;
  const report::ExportedModel model =
      report::ExportRun(o.run_dir, out_dir, report::DefaultExportTemplateDir(),
                        platforms::cpu::CandidateCompileFlags());
  std::cout << fmt::format(
      "wrote {} (ModelNew, torch.ops.kernelevolve.{}), {} and {}\n"
      "use: cd {} && {} -c \"from model_new import ModelNew, get_inputs, get_init_inputs\"\n",
      model.model_path.string(), model.op_name, model.problem_path.filename().string(),
      model.kernel_path.filename().string(), out_dir.string(), problem::DefaultPython().string());
  if (model.target == "cpu") {
    std::cout << "the first import compiles the kernel with the system C++ compiler into "
                 "$KERNELEVOLVE_EXPORT_CACHE (default ~/.cache/kernelevolve/export)\n";
  } else {
    std::cout << "needs an NVIDIA GPU with triton; inputs and model on the GPU (.to('cuda'))\n";
  }
  return 0;
}

}  // namespace kernelevolve::cli
