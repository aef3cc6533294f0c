#include "cli/run_setup.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cli/gpu_profiling.h"
#include "cli/gpu_target.h"
#include "cli/llm_setup.h"
#include "cli/machine_peaks.h"
#include "cli/paths.h"
#include "cli/queue_setup.h"
#include "cli/run_config.h"
#include "core/error.h"
#include "eval/roofline.h"
#include "eval/timing_stats.h"
#include "problem/eager_timer.h"
#include "problem/problem_loader.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

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

/// A problem file the worker rejected: one line on stderr, traceback in a log, exit 2.
void ReportProblemError(const OptimizeOptions& o, report::RunSummary& s, const std::string& message,
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
}

/// After a refusal before any work (no GPU for --target triton/cuda): removes the run
/// directory when it holds nothing but what this process just made there (the lock
/// file and logs/ with at most an empty GPU runner log), so that a refused run leaves
/// no folder behind, as the other refusals do. A resumed run's folder, and one holding
/// anything else, is kept.
void RemoveUnusedRunDirectory(const OptimizeOptions& o) {
  if (o.resume) return;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(o.out_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == store::kRunLockFileName) continue;
    if (name != "logs") return;
    for (const auto& log : fs::directory_iterator(entry.path(), ec)) {
      // A runner log with text may be what the error message points at: kept.
      if (log.path().filename() != "gpu_runner.log" || fs::file_size(log.path(), ec) != 0) return;
    }
  }
  if (!ec) fs::remove_all(o.out_dir, ec);
}

}  // namespace

std::string FixturesModeFromEnv() {
  const char* raw = std::getenv("KE_FIXTURES");
  std::string text = raw == nullptr ? "" : raw;
  const auto first = text.find_first_not_of(" \t\n\r\f\v");
  text = first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(" \t\n\r\f\v") - first + 1);
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (text.empty() || text == "files") return "files";
  return text == "device" ? "device" : "";
}

void ResolveFixturesMode(OptimizeOptions& o) {
  if (!o.fixtures.empty()) ::setenv("KE_FIXTURES", o.fixtures.c_str(), 1);
  const std::string mode = FixturesModeFromEnv();
  if (mode.empty()) {
    // The problem worker would refuse it mid-load, as an internal error.
    throw core::InvalidInputError(fmt::format("KE_FIXTURES='{}': expected 'files' (the default) or 'device'",
                                              std::getenv("KE_FIXTURES")));
  }
  if (o.target == "cpu" && mode == "device") {
    // The problem worker then writes no fixture file; the CPU harness needs them.
    throw core::InvalidInputError(
        "--fixtures device (KE_FIXTURES=device) keeps fixtures on the GPU for --target triton and cuda; the CPU "
        "harness reads fixture files: drop it (and unset KE_FIXTURES) for --target cpu");
  }
  o.fixtures = mode;
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void CreateRunDirectory(const fs::path& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir / "logs", ec);
  if (ec) {
    throw core::InvalidInputError(fmt::format("--out {}: cannot create the run directory: {}",
                                              out_dir.string(), ec.message()));
  }
}

store::RunDirectoryLock ValidateRunOptions(OptimizeOptions& o) {
  ValidateTarget(o.target);  // issue 6: cpu | triton | cuda
  ResolveFixturesMode(o);     // issue 22
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
  ValidateSearchFlags(o);  // issue 3: policy, jobs, stall, context... before any work
  ValidateLlmFlags(o);     // issue 7: models, keys, prices, prompts; no network yet
  ValidateQueueFlags(o);   // issue 22: --queue parses and Redis answers
  ParseOverrides(o.sets);  // a malformed --set fails before the run directory exists
  if (o.out_dir.empty()) o.out_dir = fs::path("runs") / fmt::format("{}-{}", o.problem_path.stem().string(), UtcStamp());
  if (o.cache_dir.empty()) o.cache_dir = DefaultCacheDir();
  EnsureCacheDir(o.cache_dir);  // an unusable --cache-dir fails before the problem loads
  // Issue 22: one process per run directory, taken before looking at what it holds (a
  // second optimize or a resume used to write the same store and break the first run).
  store::RunDirectoryLock lock = store::RunDirectoryLock::Acquire(o.out_dir, o.resume ? "resume" : "--out");
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
  return lock;
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

std::map<std::string, std::string> ParseOverrides(const std::vector<std::string>& sets) {
  std::map<std::string, std::string> overrides;
  for (const auto& text : sets) {
    auto [name, value] = problem::ParseOverride(text);
    if (!overrides.emplace(name, value).second) {
      throw core::InvalidInputError(fmt::format("--set {}: given twice ({}={} and {}={})", name, name,
                                                overrides[name], name, value));
    }
  }
  return overrides;
}

problem::WorkerOptions MakeWorkerOptions(const OptimizeOptions& o) {
  problem::WorkerOptions wopts;
  wopts.log_path = o.out_dir / "logs" / "worker.log";
  wopts.threads = o.threads;
  wopts.omp_wait_policy = o.omp_wait_policy;
  return wopts;
}

std::optional<core::Problem> LoadRunProblem(problem::WorkerClient& worker, const OptimizeOptions& o,
                                            const std::map<std::string, std::string>& overrides,
                                            report::RunSummary& s, core::PhaseTimes* load_parts) {
  problem::LoadOptions lopts;
  lopts.problem_path = o.problem_path;
  lopts.overrides = overrides;
  lopts.seeds.clear();
  for (int k = 0; k < o.seeds; ++k) lopts.seeds.push_back(k);
  lopts.fixtures_dir = o.out_dir / "fixtures";
  lopts.threads = o.threads;
  lopts.timeout_seconds = o.load_timeout_seconds;
  lopts.baseline.flush_cache = o.cache_flush;  // eager timed as the candidates are
  // GPU targets time eager PyTorch on the device (PrepareGpuRun): none on the CPU here.
  lopts.time_eager = o.target == "cpu";
  lopts.phases = load_parts;
  if (!o.quiet) {
    fmt::print(stderr, "loading {} (reference, {} input sets, {})...\n", o.problem_path.string(), o.seeds,
               lopts.time_eager ? fmt::format("eager baseline on {} threads", o.threads)
                                : "eager baseline timed by the GPU runner next");
  }
  core::Problem problem;
  try {
    problem = problem::LoadProblem(worker, lopts);
  } catch (const problem::ProblemError& e) {
    ReportProblemError(o, s, e.what(), e.traceback());
    return std::nullopt;
  } catch (const problem::WorkerLostError& e) {
    // The worker runs the user's reference: a crash, exit or hang there is the
    // problem file's fault, not kernelevolve's.
    ReportProblemError(
        o, s,
        fmt::format("{}: loading the problem failed: the {} (the reference crashed, exited or "
                    "hung; the limit is --load-timeout {:.0f} s)",
                    o.problem_path.string(), e.what(), o.load_timeout_seconds),
        "see " + (o.out_dir / "logs" / "worker.log").string());
    return std::nullopt;
  }
  s.problem = problem.name;
  s.eager_baseline = problem.eager_baseline;
  s.machine.torch_version = problem.torch_version;
  return problem;
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

exec::BaselineTimer MakeBaselineTimer(problem::WorkerClient& worker, const OptimizeOptions& o) {
  return problem::MakeEagerTimer(worker, {o.min_time_seconds, o.max_time_seconds, o.cache_flush});
}

std::optional<PreparedRun> PrepareRun(const OptimizeOptions& o) {
  PreparedRun r;
  CreateRunDirectory(o.out_dir);
  r.summary = BaseSummary(o);
  try {
    r.gpu = MakeGpuPlatform(o);  // issue 6: no GPU fails before the problem loads
  } catch (const core::Error&) {
    RemoveUnusedRunDirectory(o);
    throw;
  }
  r.summary.database_path = o.out_dir / "kernelevolve.db";
  r.overrides = ParseOverrides(o.sets);
  r.summary.overrides = r.overrides;
  // Issue 22: a worker left by the previous problem of this process (bench, compare)
  // serves this one: no second torch import.
  {
    core::ScopedPhase phase(r.summary.phases, "worker_start");
    r.worker = problem::WorkerPool::Shared().Take(MakeWorkerOptions(o));
  }
  std::optional<core::Problem> loaded;
  core::PhaseTimes load_parts;
  {
    // bench --problems-at-once: loads (reference runs, eager timing) one at a time here.
    std::lock_guard<std::mutex> timing(OrchestratorTimingMutex());
    core::ScopedPhase phase(r.summary.phases, "load");
    loaded = LoadRunProblem(*r.worker, o, r.overrides, r.summary, &load_parts);
  }
  if (!loaded) return std::nullopt;
  r.summary.phases.AddAll(load_parts);  // the worker's parts of "load", after it
  r.problem = std::move(*loaded);
  if (!r.gpu) r.cpu = std::make_unique<platforms::cpu::CpuPlatform>(o.cache_dir / "cpu", HarnessPath(), "g++");
  r.summary.machine.compiler = r.Platform().Machine().compiler;
  // Roofline (issue 5): the machine's measured peaks (cached per machine) and, below,
  // the problem's bytes and FLOPs per call.
  if (r.gpu) {
    core::ScopedPhase phase(r.summary.phases, "gpu_prepare");
    r.gpu_baselines = PrepareGpuRun(*r.gpu, r.problem, r.summary, MakeRunOptions(o, r.problem), o.quiet);
  } else {
    core::ScopedPhase phase(r.summary.phases, "machine_peaks");
    AttachMachinePeaks(r.summary.machine, o.cache_dir, o.remeasure_machine, o.quiet);
  }
  r.summary.phases.AddAll(r.gpu_baselines.prepare_phases);
  r.summary.work = eval::EstimateWork(r.problem);
  return r;
}

std::mutex& OrchestratorTimingMutex() {
  static std::mutex mutex;
  return mutex;
}

std::string KernelSourceExtension(const std::string& target) {
  if (target == "cuda") return ".cu";
  if (target == "triton") return ".py";
  return ".cpp";
}

}  // namespace kernelevolve::cli
