#include "cli/eval_command.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/gpu_target.h"
#include "cli/machine_peaks.h"
#include "cli/number_flags.h"
#include "cli/paths.h"
#include "cli/run_config.h"
#include "cli/run_setup.h"
#include "core/error.h"
#include "eval/roofline.h"
#include "exec/confirm_speedup.h"
#include "exec/local_evaluator.h"
#include "platforms/cpu/cpu_platform.h"
#include "report/eval_verdict.h"
#include "report/run_summary.h"
#include "store/store.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

/// The operator name of a node `eval` stores: the kernel came from outside the search.
constexpr const char* kUserOperator = "user";

/// The extensions each target builds (as its platform takes candidates).
std::vector<std::string> KernelExtensions(const std::string& target) {
  if (target == "triton") return {".py"};
  if (target == "cuda") return {".cu"};
  return {".cpp", ".cc", ".cxx"};
}

/// The target whose kernels have this extension, or "".
std::string TargetForExtension(const std::string& ext) {
  for (const char* target : {"cpu", "triton", "cuda"}) {
    for (const auto& e : KernelExtensions(target)) {
      if (e == ext) return target;
    }
  }
  return "";
}

/// runs.config_json of an eval: optimize's flags (threads, seeds, timing...) plus what
/// tells the run apart from a search (`resume` refuses it).
nlohmann::json EvalConfig(const OptimizeOptions& o, const std::map<std::string, std::string>& overrides,
                          const fs::path& kernel_path) {
  nlohmann::json config = OptionsToConfig(o, overrides);
  config["command"] = "eval";
  config["kernel_path"] = kernel_path.string();
  config["kernel_path_abs"] = fs::absolute(kernel_path).lexically_normal().string();
  return config;
}

/// The compiler saw the kernel as a file of the build cache named by its hash
/// (".../0123456789abcdef.cpp:2:95: error: ..."); in what `eval` prints, that name is
/// replaced by the user's file, so that the messages point at the file they edit.
void NameTheUsersFile(core::Evaluation& e, const fs::path& kernel) {
  static const std::regex cached(R"(([^\s:'"]*/)?[0-9a-f]{16}\.(cpp|cu|py)\b)");
  e.message = std::regex_replace(e.message, cached, kernel.string());
  e.log_excerpt = std::regex_replace(e.log_excerpt, cached, kernel.string());
}

}  // namespace

void AddEvalCommand(CLI::App& app, EvalOptions& e) {
  OptimizeOptions& o = e.run;
  auto* cmd = app.add_subcommand(
      "eval", "judge one kernel file (yours or a model's) with the full fitness: checks, sandbox, timing, confirmation");
  cmd->add_option("problem", o.problem_path, "KernelBench-format problem file (.py)")->required();
  cmd->add_option("kernel", e.kernel_path,
                  "the kernel: cpu .cpp with the DLPack ABI (docs/abi.md), triton .py, cuda .cu")
      ->required();
  cmd->add_option("--target", o.target, "hardware interpreter: cpu, triton or cuda (NVIDIA GPU; docs/gpu.md)")
      ->default_val("cpu");
  cmd->add_option("--nvcc", o.nvcc, "nvcc for --target cuda (default: $CUDACXX, else nvcc on PATH)");
  cmd->add_option("--out", o.out_dir, "run directory (default runs/eval-<problem>-<UTC time>)");
  cmd->add_option("--set", o.sets, "override a module-level constant of the problem, NAME=VALUE (repeatable)");
  cmd->add_option("--threads", o.threads, "threads for the kernel and the eager baseline (0: all CPUs)")->default_val(0);
  cmd->add_option("--seeds", o.seeds, "seeded input sets the kernel must match")->default_val(3);
  cmd->add_option("--confirm-rounds", o.confirm_rounds,
                  "interleaved eager/kernel rounds for the verdict (0: skip; >= 8 keeps the A/A "
                  "false-positive rate under 0.4%)")
      ->default_val(8);
  cmd->add_option("--min-time", o.min_time_seconds, "timed seconds per measurement")->default_val(0.2);
  cmd->add_option("--max-time", o.max_time_seconds,
                  "wall seconds per measurement at most while its 95% interval is wider than 2% of the median")
      ->default_val(2.0)
      ->check(PositiveSeconds());
  cmd->add_flag("--cache-flush", o.cache_flush,
                "write 2x the last-level cache before every timed call (cold-cache timing; eager and kernel alike)");
  cmd->add_option("--candidate-timeout", o.candidate_timeout_seconds, "wall-clock limit per kernel run, seconds")
      ->default_val(60);
  cmd->add_option("--candidate-memory-mb", o.candidate_memory_mb,
                  "address-space limit of the kernel's process, MiB (0: from problem size)")
      ->default_val(0);
  cmd->add_option("--cache-dir", o.cache_dir, fmt::format("build cache ({})", kCacheDirDefaultHelp));
  cmd->add_option("--load-timeout", o.load_timeout_seconds,
                  "limit for loading the problem (import, reference runs, eager timing), seconds")
      ->default_val(300)
      ->check(LoadTimeoutSeconds());
  cmd->add_option("--omp-wait-policy", o.omp_wait_policy,
                  "OMP_WAIT_POLICY for eager PyTorch and the kernel alike (default: OpenMP's own)")
      ->check(CLI::IsMember({"passive", "active"}));
  cmd->add_option("--fixtures", o.fixtures,
                  "GPU targets: where the input sets and reference outputs live: files (safetensors under "
                  "OUT/fixtures) or device (drawn again on the GPU from their seeds, no files: for inputs of several "
                  "GB; fixed-shape problems only); default $KE_FIXTURES, else files")
      ->transform(CLI::IsMember({"files", "device"}, CLI::ignore_case));
  cmd->add_flag("--remeasure-machine", o.remeasure_machine,
                "measure the copy bandwidth and FMA peak again instead of using the cached figures");
  cmd->add_flag("--quiet", o.quiet, "no progress lines on stderr");
}

std::string ReadKernelFile(const fs::path& path, const std::string& target) {
  if (!fs::exists(path)) throw core::InvalidInputError(fmt::format("{}: no such kernel file", path.string()));
  if (fs::is_directory(path)) {
    throw core::InvalidInputError(fmt::format("{}: is a directory, not a kernel file", path.string()));
  }
  if (!fs::is_regular_file(path)) {
    throw core::InvalidInputError(fmt::format("{}: not a regular file, not a kernel file", path.string()));
  }
  const std::string ext = path.extension().string();
  const std::vector<std::string> allowed = KernelExtensions(target);
  if (std::find(allowed.begin(), allowed.end(), ext) == allowed.end()) {
    const std::string other = TargetForExtension(ext);
    throw core::InvalidInputError(fmt::format(
        "{}: --target {} takes a {} file ({}){}", path.string(), target,
        target == "cpu" ? "C++ kernel with the DLPack ABI (docs/abi.md)"
        : target == "cuda" ? "CUDA C++ kernel (docs/gpu.md)"
                           : "Triton module (docs/gpu.md)",
        fmt::join(allowed, ", "), other.empty() ? "" : fmt::format("; for this file use --target {}", other)));
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || in.bad()) throw core::InvalidInputError(fmt::format("{}: cannot read the kernel file", path.string()));
  if (text.str().empty()) throw core::InvalidInputError(fmt::format("{}: the kernel file is empty", path.string()));
  return text.str();
}

int RunEval(const EvalOptions& options) {
  OptimizeOptions o = options.run;
  ValidateTarget(o.target);
  const std::string source = ReadKernelFile(options.kernel_path, o.target);
  if (o.out_dir.empty()) o.out_dir = fs::path("runs") / fmt::format("eval-{}-{}", o.problem_path.stem().string(), UtcStamp());
  store::RunDirectoryLock run_lock = ValidateRunOptions(o);  // issue 22
  std::optional<PreparedRun> prepared = PrepareRun(o);  // no GPU, bad flags: exit 2 at once
  if (!prepared) return 2;  // the problem file is at fault: result.json and the log say why
  report::RunSummary& s = prepared->summary;
  const std::map<std::string, std::string>& overrides = prepared->overrides;
  std::unique_ptr<platforms::triton::TritonPlatform>& gpu = prepared->gpu;
  const core::Problem& problem = prepared->problem;
  platforms::Platform& platform = prepared->Platform();

  auto store = store::Store::Open(s.database_path);
  store::RunRecord run;
  run.problem = problem.name;
  run.problem_path = o.problem_path.string();
  run.target = o.target;
  run.config = EvalConfig(o, overrides, options.kernel_path);
  run.machine = core::MachineToJson(s.machine);
  run.started_unix_s = UnixNow();
  const int64_t run_id = store.CreateRun(run);

  // The kernel is judged as the search judges a candidate: same evaluator, same
  // paired eager baseline, same roofline, then the best node's confirmation.
  const platforms::RunOptions run_options = MakeRunOptions(o, problem);
  const exec::BaselineTimer time_baseline = gpu ? GpuPairedEagerTimer(*gpu) : MakeBaselineTimer(*prepared->worker, o);
  exec::LocalEvaluator evaluator(platform, problem, run_options, time_baseline);
  evaluator.SetRoofline(*s.work, {s.machine.copy_bandwidth_gbps, s.machine.peak_gflops});
  search::Node node;
  node.candidate.source = source;
  node.candidate.operator_name = kUserOperator;
  node.candidate.rationale = fmt::format("evaluated by `kernelevolve eval` from {}", options.kernel_path.string());
  const double started = UnixNow();
  if (!o.quiet) fmt::print(stderr, "evaluating {}: build, {} input sets and edge cases, timing...\n",
                           options.kernel_path.string(), o.seeds);
  {
    core::ScopedPhase phase(s.phases, "evaluation");
    node.evaluation = evaluator.Evaluate(node.candidate);
  }
  NameTheUsersFile(node.evaluation, options.kernel_path);
  store.CommitNode(run_id, node);
  s.nodes = {node};
  s.speedup_baseline = evaluator.FastestEager();
  s.evaluations = 1;
  s.stop_reason = "eval";
  // A skipped confirmation is not attempted, not failed: the verdict stays "correct"
  // (report::DecideEvalVerdict fails a confirmation that has a message and no result).
  const std::string skip = ConfirmationSkipReason(gpu.get());
  if (node.evaluation.correct && o.confirm_rounds > 0 && !skip.empty()) {
    if (!o.quiet) fmt::print(stderr, "confirmation {}\n", skip);
  } else if (node.evaluation.correct && o.confirm_rounds > 0) {
    if (!o.quiet) fmt::print(stderr, "confirming against eager: {} interleaved rounds...\n", o.confirm_rounds);
    core::ScopedPhase phase(s.phases, "confirmation");
    s.confirmation = exec::ConfirmSpeedup(time_baseline, platform, problem, node.candidate, run_options,
                                          o.confirm_rounds);
  }
  s.elapsed_seconds = UnixNow() - started;
  const report::EvalVerdict verdict = report::DecideEvalVerdict(s, options.kernel_path);
  s.status = verdict.Correct() ? "ok" : "no_correct_candidate";
  if (verdict.Correct()) {
    s.best = node;
    s.best_source_path = o.out_dir / ("best_kernel" + KernelSourceExtension(o.target));
    report::WriteTextAtomic(s.best_source_path, source);
  }
  store.FinishRun(run_id, s.status, s.stop_reason);

  nlohmann::json result = report::ResultJson(s);
  result["eval"] = report::EvalResultJson(s, verdict);
  if (gpu) result["gpu"] = GpuResultJson(*gpu, prepared->gpu_baselines, s);
  report::WriteJsonAtomic(o.out_dir / "result.json", result);
  std::cout << report::EvalVerdictText(s, verdict);
  std::cout << fmt::format("run directory: {}\n", o.out_dir.string());
  return verdict.Correct() ? 0 : 1;
}

}  // namespace kernelevolve::cli
