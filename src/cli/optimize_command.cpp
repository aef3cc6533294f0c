#include "cli/optimize_command.h"

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli/gpu_profiling.h"
#include "cli/gpu_target.h"
#include "cli/knowledge_hooks.h"
#include "cli/llm_setup.h"
#include "cli/machine_peaks.h"
#include "cli/interrupt.h"
#include "cli/paths.h"
#include "cli/run_config.h"
#include "core/error.h"
#include "eval/roofline.h"
#include "exec/confirm_speedup.h"
#include "exec/local_evaluator.h"
#include "exec/measurement_gate.h"
#include "operators/template/template_operator.h"
#include "platforms/cpu/cpu_platform.h"
#include "problem/eager_timer.h"
#include "problem/problem_loader.h"
#include "problem/worker_client.h"
#include "report/progress.h"
#include "report/run_summary.h"
#include "search/search_loop.h"
#include "search/selection_policy.h"
#include "store/store.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Whether `out_dir` holds only the result of a run whose problem failed to load.
bool PreviousLoadFailed(const fs::path& out_dir) {
  std::ifstream in(out_dir / "result.json");
  if (!in) return false;
  try {
    auto doc = nlohmann::json::parse(in);
    return doc.value("status", "") == "error" && doc.value("evaluations", 0) == 0;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

/// Creates the run directory; an unusable --out is the user's input error.
void CreateRunDirectory(const fs::path& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir / "logs", ec);
  if (ec) {
    throw core::InvalidInputError(fmt::format("--out {}: cannot create the run directory: {}",
                                              out_dir.string(), ec.message()));
  }
}

void ValidateOptions(OptimizeOptions& o) {
  ValidateTarget(o.target);  // issue 6: cpu | triton | cuda
  if (!o.resume && !fs::is_regular_file(o.problem_path)) {
    throw core::InvalidInputError(fmt::format(
        "{}: {}", o.problem_path.string(),
        fs::is_directory(o.problem_path) ? "is a directory, not a problem file"
                                         : "no such problem file"));
  }
  if (o.budget < 1) throw core::InvalidInputError("--budget must be at least 1");
  if (o.time_limit_seconds <= 0) throw core::InvalidInputError("--time-limit must be positive");
  if (o.seeds < 1) throw core::InvalidInputError("--seeds must be at least 1");
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (o.threads < 0) throw core::InvalidInputError("--threads must be 0 (all CPUs) or positive");
  if (o.threads > cpus) {
    throw core::InvalidInputError(fmt::format(
        "--threads {}: this machine has {} logical CPUs; more threads only oversubscribe them "
        "(use --threads {} or less)", o.threads, cpus, cpus));
  }
  if (o.threads == 0) o.threads = cpus;
  if (o.candidate_timeout_seconds <= 0) throw core::InvalidInputError("--candidate-timeout must be positive");
  if (o.min_time_seconds <= 0) throw core::InvalidInputError("--min-time must be positive");
  if (o.drafts < 0) throw core::InvalidInputError("--drafts must be 0 (automatic) or positive");
  if (o.candidate_memory_mb < 0) throw core::InvalidInputError("--candidate-memory-mb must be 0 (automatic) or positive");
  if (o.confirm_rounds < 0) throw core::InvalidInputError("--confirm-rounds must be 0 (skip) or positive");
  o.profile_top = ProfileTopFor(o.profile_top, o.target != "cpu");  // issue 6: ncu after the search
  o.profile_during = ProfileDuringFor(o.profile_during, o.target != "cpu");  // and during it
  if (o.profile_timeout_seconds <= 0) throw core::InvalidInputError("--profile-timeout must be positive");
  if (o.out_dir.empty()) o.out_dir = fs::path("runs") / fmt::format("{}-{}", o.problem_path.stem().string(), UtcStamp());
  if (o.cache_dir.empty()) o.cache_dir = DefaultCacheDir();
  EnsureCacheDir(o.cache_dir);  // an unusable --cache-dir fails before the problem loads
  if (!o.resume && !fs::exists(o.out_dir / "kernelevolve.db") && PreviousLoadFailed(o.out_dir)) {
    // A run that never got past loading the problem holds nothing worth keeping.
    std::error_code ec;
    fs::remove(o.out_dir / "result.json", ec);
    fs::remove_all(o.out_dir / "logs", ec);
  }
  if (!o.resume &&
      (fs::exists(o.out_dir / "kernelevolve.db") || fs::exists(o.out_dir / "result.json"))) {
    throw core::InvalidInputError(fmt::format(
        "--out {}: already holds a run; choose another directory, or continue an interrupted "
        "run with `kernelevolve resume {}`",
        o.out_dir.string(), o.out_dir.string()));
  }
  ValidateSearchFlags(o);  // issue 3: policy, jobs, stall, context... before any work
  ValidateLlmFlags(o);     // issue 7: models, keys, prices, prompts; no network yet
}

int64_t CandidateMemoryLimit(const OptimizeOptions& o, const core::Problem& problem) {
  if (o.candidate_memory_mb > 0) return o.candidate_memory_mb << 20;
  int64_t bytes = 0;
  for (const auto& t : problem.inputs) bytes += t.NumBytes();
  for (const auto& t : problem.outputs) bytes += t.NumBytes();
  // One set of fixtures per seed and per edge case (at most 4, edge_cases.py), copies
  // for input-mutation checks and per-call outputs, plus room for the runtime (OpenMP
  // stacks, glibc arenas).
  constexpr int64_t kMaxEdgeCases = 4;
  const int64_t sets = static_cast<int64_t>(problem.seeds.size()) + kMaxEdgeCases;
  return std::max<int64_t>(4LL << 30, bytes * (2 * sets + 4) + (2LL << 30));
}

report::RunSummary BaseSummary(const OptimizeOptions& o) {
  report::RunSummary s;
  s.problem = o.problem_path.stem().string();
  s.problem_path = o.problem_path.string();
  s.target = o.target;
  s.machine = core::ProbeLocalMachine();
  s.machine.threads = o.threads;
  return s;
}

/// A problem file the worker rejected: one line on stderr, traceback in a log, exit 2.
int ReportProblemError(const OptimizeOptions& o, report::RunSummary& s, const std::string& message,
                       const std::string& traceback) {
  fs::path log = o.out_dir / "logs" / "problem_error.log";
  report::WriteTextAtomic(log, message + "\n\n" + traceback);
  std::error_code ec;
  fs::remove_all(o.out_dir / "fixtures", ec);
  s.status = "error";
  s.stop_reason = "error";
  s.error = message;
  s.error_log = log.string();
  report::WriteJsonAtomic(o.out_dir / "result.json", report::ResultJson(s));
  std::cerr << "error: " << message << " (details: " << log.string() << ")\n";
  return 2;
}

platforms::RunOptions MakeRunOptions(const OptimizeOptions& o, const core::Problem& problem) {
  platforms::RunOptions r;
  r.threads = o.threads;
  r.omp_wait_policy = o.omp_wait_policy;
  r.min_time_seconds = o.min_time_seconds;
  r.max_time_seconds = std::max(o.max_time_seconds, o.min_time_seconds);
  r.flush_cache = o.cache_flush;
  r.timeout_seconds = o.candidate_timeout_seconds;
  r.memory_limit_bytes = CandidateMemoryLimit(o, problem);
  return r;
}

/// Times eager PyTorch once through the worker, for the same time as a candidate.
exec::BaselineTimer MakeBaselineTimer(problem::WorkerClient& worker, const OptimizeOptions& o) {
  return problem::MakeEagerTimer(worker, {o.min_time_seconds, o.max_time_seconds, o.cache_flush});
}

}  // namespace

int RunOptimize(const OptimizeOptions& options_in) {
  OptimizeOptions o = options_in;
  ValidateOptions(o);
  InstallInterruptHandler();  // from here on, Ctrl-C stops cleanly (after loading, if loading)
  CreateRunDirectory(o.out_dir);
  report::RunSummary s = BaseSummary(o);
  // Issue 6: the GPU runner starts before the problem loads, so no GPU fails fast.
  std::unique_ptr<platforms::triton::TritonPlatform> gpu = MakeGpuPlatform(o);
  s.database_path = o.out_dir / "kernelevolve.db";

  std::map<std::string, std::string> overrides;
  for (const auto& text : o.sets) {
    auto [name, value] = problem::ParseOverride(text);
    if (!overrides.emplace(name, value).second) {
      throw core::InvalidInputError(fmt::format("--set {}: given twice ({}={} and {}={})", name, name,
                                                overrides[name], name, value));
    }
  }
  s.overrides = overrides;

  problem::WorkerOptions wopts;
  wopts.log_path = o.out_dir / "logs" / "worker.log";
  wopts.threads = o.threads;
  wopts.omp_wait_policy = o.omp_wait_policy;
  problem::WorkerClient worker(wopts);

  problem::LoadOptions lopts;
  lopts.problem_path = o.problem_path;
  lopts.overrides = overrides;
  lopts.seeds.clear();
  for (int k = 0; k < o.seeds; ++k) lopts.seeds.push_back(k);
  lopts.fixtures_dir = o.out_dir / "fixtures";
  lopts.threads = o.threads;
  lopts.timeout_seconds = o.load_timeout_seconds;
  lopts.baseline.flush_cache = o.cache_flush;  // eager timed as the candidates are
  if (!o.quiet) fmt::print(stderr, "loading {} (reference, {} input sets, eager baseline on {} threads)...\n",
                           o.problem_path.string(), o.seeds, o.threads);
  core::Problem problem;
  try {
    problem = problem::LoadProblem(worker, lopts);
  } catch (const problem::ProblemError& e) {
    return ReportProblemError(o, s, e.what(), e.traceback());
  } catch (const problem::WorkerLostError& e) {
    // The worker runs the user's reference: a crash, exit or hang there is the
    // problem file's fault, not kernelevolve's.
    return ReportProblemError(
        o, s,
        fmt::format("{}: loading the problem failed: the {} (the reference crashed, exited or "
                    "hung; the limit is --load-timeout {:.0f} s)",
                    o.problem_path.string(), e.what(), o.load_timeout_seconds),
        "see " + (o.out_dir / "logs" / "worker.log").string());
  }
  s.problem = problem.name;
  s.eager_baseline = problem.eager_baseline;
  s.machine.torch_version = problem.torch_version;

  std::unique_ptr<platforms::cpu::CpuPlatform> cpu_platform;
  if (!gpu) cpu_platform = std::make_unique<platforms::cpu::CpuPlatform>(o.cache_dir / "cpu", HarnessPath(), "g++");
  platforms::Platform& platform = gpu ? static_cast<platforms::Platform&>(*gpu) : *cpu_platform;
  s.machine.compiler = platform.Machine().compiler;
  // Roofline (issue 5): the machine's measured peaks (cached per machine) and the
  // problem's bytes and FLOPs per call.
  platforms::triton::GpuBaselines gpu_baselines;
  if (gpu) gpu_baselines = PrepareGpuRun(*gpu, problem, s, MakeRunOptions(o, problem), o.quiet);  // issue 6
  else AttachMachinePeaks(s.machine, o.cache_dir, o.remeasure_machine, o.quiet);
  nlohmann::json baseline_profile;  // issue 6: torch.profiler breakdown of eager, once per problem
  if (gpu) baseline_profile = ProfileBaselineStep(*gpu, problem, o.quiet);
  s.work = eval::EstimateWork(problem);
  auto store = store::Store::Open(s.database_path);
  store::RunRecord run;
  run.problem = problem.name;
  run.problem_path = o.problem_path.string();
  run.target = o.target;
  run.config = OptionsToConfig(o, overrides);  // every flag resume needs (issue 3)
  run.machine = core::MachineToJson(s.machine);
  run.started_unix_s = UnixNow();
  int64_t run_id = o.resume ? o.resume_run_id : store.CreateRun(run);

  // Issue 7: with --llm the LLM operator writes every candidate (docs/llm.md); without,
  // the offline template operator does.
  operators::TemplateOperator template_op(o.target, s.machine.isa.FloatLanes());
  std::unique_ptr<operators::llm::LlmOperator> llm_op;
  if (!o.llm.empty()) llm_op = MakeLlmOperator(o, store, run_id, nullptr, s.machine);
  operators::UniversalOperator& op = llm_op ? static_cast<operators::UniversalOperator&>(*llm_op) : template_op;
  if (auto why = op.Unsupported(problem)) {
    s.status = "no_correct_candidate";
    s.stop_reason = *why;
    store.FinishRun(run_id, s.status, s.stop_reason);
    report::WriteJsonAtomic(o.out_dir / "result.json", report::ResultJson(s));
    std::cout << report::SummaryTable(s);
    std::cerr << "kernelevolve: " << *why << "; the PyTorch reference stays the answer\n";
    return 1;
  }

  platforms::RunOptions run_options = MakeRunOptions(o, problem);
  exec::BaselineTimer time_baseline = gpu ? GpuPairedEagerTimer(*gpu) : MakeBaselineTimer(worker, o);
  // Issue 3: --jobs evaluations in flight; builds in parallel, timed runs (and their
  // paired eager timing) one at a time through the gate (docs/search.md).
  exec::MeasurementGate gate(exec::TimingIsolationFromName(o.timing_isolation));
  exec::GatedPlatform gated_platform(platform, gate);
  exec::LocalEvaluator evaluator(gated_platform, problem, run_options,
                                 exec::GateTimer(gate, time_baseline));
  evaluator.SetRoofline(*s.work, {s.machine.copy_bandwidth_gbps, s.machine.peak_gflops});
  auto policy = search::MakePolicy(o.policy, MakePolicyOptions(o));
  search::SearchOptions sopts = MakeSearchOptions(o);
  sopts.interrupt = InterruptFlag();
  // Knowledge base (issue 8): start from prior kernels; never fails the run.
  KnowledgeSession knowledge = StartKnowledge(
      {o.kb_path, o.no_kb, o.cache_dir, o.quiet, o.target, s.machine.cpu_model, s.machine.isa.level}, problem);
  sopts.seed_candidates = knowledge.plan.seeds;
  sopts.experiences = knowledge.plan.notes;
  report::ConsoleProgress progress(o.budget, o.time_limit_seconds);
  search::SearchObserver* observer = o.quiet ? nullptr : &progress;
  std::unique_ptr<LlmObserver> llm_observer;
  if (llm_op) {
    llm_op->SetKnowledgeBase(knowledge.kb.get());
    llm_observer = std::make_unique<LlmObserver>(*llm_op, observer);
    observer = llm_observer.get();
  }
  if (gpu && o.profile_during > 0) {  // issue 6: ncu on the node being expanded steers its child
    sopts.profiler = SearchProfiler(*gpu, problem, o.profile_timeout_seconds, o.quiet,
                                    [&progress] { progress.Finish(); });
    sopts.profile_budget = o.profile_during;
  }
  search::SearchLoop loop(problem, op, *policy, evaluator, store, run_id, sopts, observer);
  search::SearchOutcome outcome = loop.Run();
  progress.Finish();
  if (!o.quiet && o.resume) {
    fmt::print(stderr, "resumed run {}: {} nodes from the store, {} pending candidates re-queued\n",
               run_id, outcome.resumed_evaluations, outcome.requeued);
  }
  if (!o.quiet) fmt::print(stderr, "search stopped: {}\n", outcome.stop_reason);
  if (llm_op && !o.quiet) fmt::print(stderr, "{}\n", LlmCostLine(*llm_op));

  s.evaluations = outcome.evaluations;
  s.elapsed_seconds = outcome.elapsed_seconds;
  s.stop_reason = outcome.stop_reason;
  s.nodes = loop.tree().Nodes();
  if (outcome.best_node_id >= 0) {
    s.best = loop.tree().Get(outcome.best_node_id);
    s.status = "ok";
    s.best_source_path = o.out_dir / (!gpu ? "best_kernel.cpp" : o.target == "cuda" ? "best_kernel.cu" : "best_kernel.py");
    report::WriteTextAtomic(s.best_source_path, s.best->candidate.source);
    if (Interrupted()) s.confirmation.message = "skipped: the run was interrupted";
    if (o.confirm_rounds > 0 && !Interrupted()) {
      if (!o.quiet) fmt::print(stderr, "confirming node {} against eager: {} interleaved rounds...\n",
                               s.best->id, o.confirm_rounds);
      s.confirmation = exec::ConfirmSpeedup(time_baseline, platform, problem, s.best->candidate,
                                            run_options, o.confirm_rounds);
    }
  } else {
    s.status = "no_correct_candidate";
  }
  const bool interrupted = outcome.stop_reason == "interrupted";
  // An interrupted run stays resumable: its database status says so.
  store.FinishRun(run_id, interrupted ? "interrupted" : s.status, s.stop_reason);
  if (!interrupted) s.warm_start = FinishKnowledge(knowledge, problem, s.nodes,  // knowledge base (issue 8)
                                 // "confirmed" only when the interleaved interval clears 1.0
                                 s.confirmation.done && s.confirmation.speedup.ClearlyFaster()
                                     ? s.confirmation.speedup.value
                                     : 0.0,
                                 o.out_dir);
  nlohmann::json profiles;  // issue 6: ncu during and after the search (docs/gpu.md "Profiling")
  if (gpu) {
    profiles = ProfileTopCandidates(*gpu, problem, store, run_id, s.best && !interrupted ? o.profile_top : 0,
                                    o.profile_timeout_seconds, o.quiet, s.nodes);
  }
  nlohmann::json result = report::ResultJson(s);
  if (llm_op) result["llm"] = LlmResultJson(*llm_op, o);  // issue 7: the run's LLM spending
  if (gpu) result["gpu"] = GpuResultJson(*gpu, gpu_baselines, s);  // issue 6
  if (gpu) {
    result["gpu"]["baseline_profile"] = baseline_profile;
    result["profiles"] = profiles.is_array() ? profiles : nlohmann::json::array();
    for (const auto& p : result["profiles"]) {
      if (result["best"].is_object() && p.value("node_id", -1) == s.best->id) result["best"]["profile"] = p;
    }
  }
  report::WriteJsonAtomic(o.out_dir / "result.json", result);
  std::cout << report::SummaryTable(s);
  if (gpu) for (const auto& line : ProfileSummaryLines(baseline_profile, profiles)) std::cout << line << "\n";
  std::cout << fmt::format("run directory: {}\n", o.out_dir.string());
  if (interrupted) {
    std::cout << fmt::format("interrupted: continue with `kernelevolve resume {}`\n", o.out_dir.string());
    return 128 + InterruptSignal();
  }
  return s.status == "ok" ? 0 : 1;
}

}  // namespace kernelevolve::cli
