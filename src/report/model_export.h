// `kernelevolve export`: a run's best kernel as a KernelBench-format model_new.py
// (docs/export.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kernelevolve::report {

/// What `ExportRun` wrote.
struct ExportedModel {
  std::filesystem::path model_path;    // OUT/model_new.py
  std::filesystem::path kernel_path;   // OUT/best_kernel.cpp (.py for triton): a copy for reading
  std::filesystem::path problem_path;  // OUT/problem.py: a copy for reading
  std::string op_name;                 // torch.ops.kernelevolve.<op_name>
  std::string target;                  // "cpu" or "triton"
};

/// Writes OUT/model_new.py, OUT/problem.py and OUT/best_kernel.<ext> for the run in
/// `run_dir` (a folder written by `kernelevolve optimize --out`). It reads
/// `result.json` (status, target, best node), the kernel file, `fixtures/manifest.json`
/// (the ABI's tensors, overrides, tolerances) and the problem file the manifest names,
/// and fills the templates in `template_dir` (model_new.py.in, cpu_kernel.py.in,
/// triton_kernel.py.in). A CPU kernel is built on first import with `cpu_flags` (pass
/// platforms::cpu::CandidateCompileFlags(): the flags it was verified with; model_new.py
/// adds -I<dlpack dir>). Both sources are embedded in model_new.py, so it is
/// self-contained. Existing files in `out_dir` are replaced; other files are kept.
/// Throws InvalidInputError (one line naming the file) when `run_dir` is not a run,
/// found no correct kernel, was a --target cuda run, or misses a file; IoError when
/// `out_dir` cannot be written or a template is missing.
ExportedModel ExportRun(const std::filesystem::path& run_dir, const std::filesystem::path& out_dir,
                        const std::filesystem::path& template_dir, const std::vector<std::string>& cpu_flags);

/// <source tree>/export: the templates' folder, found like prompts/.
std::filesystem::path DefaultExportTemplateDir();

}  // namespace kernelevolve::report
