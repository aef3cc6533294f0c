#include "cli/optimize_command.h"

#include <iostream>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "cli/gpu_profiling.h"
#include "cli/gpu_target.h"
#include "cli/knowledge_hooks.h"
#include "cli/llm_setup.h"
#include "cli/machine_peaks.h"
#include "cli/interrupt.h"
#include "cli/paths.h"
#include "cli/queue_setup.h"
#include "cli/run_config.h"
#include "cli/run_setup.h"
#include "core/error.h"
#include "eval/roofline.h"
#include "exec/confirm_speedup.h"
#include "exec/local_evaluator.h"
#include "exec/measurement_gate.h"
#include "operators/template/template_operator.h"
#include "platforms/cpu/cpu_platform.h"
#include "problem/problem_loader.h"
#include "problem/worker_client.h"
#include "report/progress.h"
#include "report/run_summary.h"
#include "search/search_loop.h"
#include "search/selection_policy.h"
#include "store/store.h"

namespace kernelevolve::cli {

int RunOptimize(const OptimizeOptions& options_in) {
  OptimizeOptions o = options_in;
  store::RunDirectoryLock run_lock = ValidateRunOptions(o);  // issue 22: held until we return
  InstallInterruptHandler();  // from here on, Ctrl-C stops cleanly (after loading, if loading)
  std::optional<PreparedRun> prepared = PrepareRun(o);
  if (!prepared) return 2;  // the problem file is at fault: result.json and the log say why
  report::RunSummary& s = prepared->summary;
  const std::map<std::string, std::string>& overrides = prepared->overrides;
  problem::WorkerClient& worker = *prepared->worker;
  std::unique_ptr<platforms::triton::TritonPlatform>& gpu = prepared->gpu;
  core::Problem& problem = prepared->problem;
  platforms::Platform& platform = prepared->Platform();
  const platforms::triton::GpuBaselines& gpu_baselines = prepared->gpu_baselines;
  nlohmann::json baseline_profile;  // issue 6: torch.profiler breakdown of eager, once per problem
  if (gpu) {
    core::ScopedPhase phase(s.phases, "baseline_profile");
    baseline_profile = ProfileBaselineStep(*gpu, problem, o.quiet);
  }
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
  if (!o.llm.empty()) llm_op = MakeLlmOperator(o, store, run_id, nullptr, s.machine, problem, gpu.get());
  operators::UniversalOperator& op = llm_op ? static_cast<operators::UniversalOperator&>(*llm_op) : template_op;
  if (auto why = op.Unsupported(problem)) {
    s.status = "no_correct_candidate";
    s.stop_reason = *why;
    store.FinishRun(run_id, s.status, s.stop_reason);
    report::WriteJsonAtomic(o.out_dir / "result.json", report::ResultJson(s));
    (o.summary_out ? *o.summary_out : std::cout) << report::SummaryTable(s);
    std::cerr << "kernelevolve: " << *why << "; the PyTorch reference stays the answer\n";
    return 1;
  }

  platforms::RunOptions run_options = MakeRunOptions(o, problem);
  exec::BaselineTimer time_baseline = gpu ? GpuPairedEagerTimer(*gpu) : MakeBaselineTimer(worker, o);
  // Issue 3: --jobs evaluations in flight; builds in parallel, timed runs (and their
  // paired eager timing) one at a time through the gate (docs/search.md).
  exec::MeasurementGate gate(exec::TimingIsolationFromName(o.timing_isolation));
  exec::GatedPlatform gated_platform(platform, gate);
  // The paired eager timing runs inside gated_platform.DegradedDuring: gated too.
  exec::LocalEvaluator evaluator(gated_platform, problem, run_options, time_baseline);
  evaluator.SetRoofline(*s.work, {s.machine.copy_bandwidth_gbps, s.machine.peak_gflops});
  // Issue 22: with --queue, workers elsewhere build, check and time the candidates (each
  // with its own paired eager timing); the store here stays the record of the search.
  std::unique_ptr<exec::QueueEvaluator> queue = MakeQueueEvaluator(o, problem, run_options);
  exec::Evaluator& search_evaluator = queue ? static_cast<exec::Evaluator&>(*queue) : evaluator;
  if (queue && !o.quiet) {
    fmt::print(stderr, "evaluating through the queue {} ({} job{} in flight; start `kernelevolve worker --queue {}{}`)\n",
               o.queue, o.jobs, o.jobs == 1 ? "" : "s", o.queue, o.target == "cpu" ? "" : " --target " + o.target);
  }
  auto policy = search::MakePolicy(o.policy, MakePolicyOptions(o));
  search::SearchOptions sopts = MakeSearchOptions(o);
  sopts.interrupt = InterruptFlag();
  // Knowledge base (issue 8): start from prior kernels; never fails the run.
  // A template kernel has this problem's sizes in its text: a prior one made at other
  // sizes is written again with its knobs. An LLM's kernel runs as stored.
  SeedAdapter adapt_seed = [&](const core::Candidate& prior, std::string* why) -> std::optional<core::Candidate> {
    if (prior.operator_name != template_op.Name()) return prior;
    return template_op.Rederive(problem, prior, sopts.threads, why);
  };
  KnowledgeSession knowledge = StartKnowledge(
      // A resumed run seeded its prior kernel when it started: no second warm-start line.
      {o.kb_path, o.no_kb, o.cache_dir, o.quiet || o.resume, o.target, s.machine.cpu_model, s.machine.isa.level,
       adapt_seed},
      problem);
  sopts.seed_candidates = knowledge.plan.seeds;
  sopts.experiences = knowledge.plan.notes;
  report::ConsoleProgress progress(o.budget, o.time_limit_seconds);
  if (llm_op) progress.SetExtraField([&llm_op] { return LlmProgressField(*llm_op); });  // issue 21: cost so far
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
  search::SearchLoop loop(problem, op, *policy, search_evaluator, store, run_id, sopts, observer);
  search::SearchOutcome outcome;
  {
    core::ScopedPhase phase(s.phases, "search");
    outcome = loop.Run();
  }
  progress.Finish();
  if (!o.quiet && o.resume) {
    fmt::print(stderr, "resumed run {}: {} nodes from the store, {} pending candidates re-queued\n",
               run_id, outcome.resumed_evaluations, outcome.requeued);
  }
  if (outcome.stop_reason == "exhausted" && llm_op && !llm_op->last_failure().empty()) {
    // Issue 22: nothing left to evaluate because the LLM server never answered: say so
    // (even with --quiet), not a silent "exhausted".
    outcome.stop_reason = "llm_unreachable";
    fmt::print(stderr, "error: {}\n", llm_op->last_failure());
  }
  if (!o.quiet) fmt::print(stderr, "search stopped: {}\n", outcome.stop_reason);
  if (llm_op && !o.quiet) fmt::print(stderr, "{}\n", LlmCostLine(*llm_op));

  s.evaluations = outcome.evaluations;
  s.elapsed_seconds = outcome.elapsed_seconds;
  s.stop_reason = outcome.stop_reason;
  s.nodes = loop.tree().Nodes();
  s.speedup_baseline = search_evaluator.SharedBaseline().value_or(core::TimingStats{});
  if (outcome.best_node_id >= 0) {
    s.best = loop.tree().Get(outcome.best_node_id);
    s.status = "ok";
    s.best_source_path = o.out_dir / ("best_kernel" + KernelSourceExtension(o.target));
    report::WriteTextAtomic(s.best_source_path, s.best->candidate.source);
    if (Interrupted()) s.confirmation.message = "skipped: the run was interrupted";
    // Under Triton's interpreter both sides run on the CPU: rounds would time nothing
    // that says anything about the GPU.
    const std::string skip = ConfirmationSkipReason(gpu.get());
    if (!skip.empty() && o.confirm_rounds > 0 && !Interrupted()) {  // an interruption is the reason given
      s.confirmation.message = skip;
      if (!o.quiet) fmt::print(stderr, "confirmation {}\n", skip);
    }
    if (o.confirm_rounds > 0 && !Interrupted() && skip.empty()) {
      if (!o.quiet) fmt::print(stderr, "confirming node {} against eager: {} interleaved rounds...\n",
                               s.best->id, o.confirm_rounds);
      // bench --problems-at-once: one confirmation on this machine at a time.
      std::lock_guard<std::mutex> timing(OrchestratorTimingMutex());
      core::ScopedPhase phase(s.phases, "confirmation");
      s.confirmation = exec::ConfirmSpeedup(time_baseline, platform, problem, s.best->candidate,
                                            run_options, o.confirm_rounds);
    }
  } else {
    s.status = "no_correct_candidate";
  }
  const bool interrupted = outcome.stop_reason == "interrupted";
  // An interrupted run stays resumable: its database status says so.
  store.FinishRun(run_id, interrupted ? "interrupted" : s.status, s.stop_reason);
  if (!interrupted) {
    core::ScopedPhase phase(s.phases, "knowledge");
    s.warm_start = FinishKnowledge(knowledge, problem, s.nodes,  // knowledge base (issue 8)
                                   // "confirmed" only when the interleaved interval clears 1.0
                                   s.confirmation.VerifiedFaster()
                                       ? s.confirmation.speedup.value
                                       : 0.0,
                                   o.out_dir);
  }
  nlohmann::json profiles;  // issue 6: ncu during and after the search (docs/gpu.md "Profiling")
  if (gpu) {
    core::ScopedPhase phase(s.phases, "profiles");
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
  std::ostream& out = o.summary_out ? *o.summary_out : std::cout;
  out << report::SummaryTable(s);
  if (gpu) for (const auto& line : ProfileSummaryLines(baseline_profile, profiles)) out << line << "\n";
  out << fmt::format("run directory: {}\n", o.out_dir.string());
  if (interrupted) {
    out << fmt::format("interrupted: continue with `kernelevolve resume {}`\n", o.out_dir.string());
    return 128 + InterruptSignal();
  }
  return s.status == "ok" ? 0 : 1;
}

}  // namespace kernelevolve::cli
