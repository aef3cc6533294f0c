#include "cli/bench_command.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <mutex>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/bench_sizes.h"
#include "cli/gpu_profiling.h"
#include "cli/gpu_target.h"
#include "cli/interrupt.h"
#include "cli/machine_peaks.h"
#include "cli/llm_setup.h"
#include "cli/number_flags.h"
#include "cli/optimize_command.h"
#include "cli/paths.h"
#include "cli/queue_setup.h"
#include "cli/resume_command.h"
#include "cli/run_setup.h"
#include "cli/search_flags.h"
#include "core/error.h"
#include "core/machine.h"
#include "report/bench_summary.h"
#include "report/run_summary.h"
#include "store/run_lock.h"
#include "store/store.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

OptimizeOptions OptimizeFor(const BenchOptions& b, const fs::path& problem, const fs::path& out) {
  OptimizeOptions o;
  o.problem_path = problem;
  o.target = b.target;
  o.budget = b.budget;
  o.time_limit_seconds = b.time_limit_seconds;
  o.sets = b.sets;
  o.threads = b.threads;
  o.seeds = b.seeds;
  o.drafts = b.drafts;
  o.jobs = b.jobs;
  o.queue = b.queue;
  o.seed = b.seed;
  o.policy = b.policy;
  o.min_time_seconds = b.min_time_seconds;
  o.confirm_rounds = b.confirm_rounds;
  o.candidate_timeout_seconds = b.candidate_timeout_seconds;
  o.load_timeout_seconds = b.load_timeout_seconds;
  o.omp_wait_policy = b.omp_wait_policy;
  o.fixtures = b.fixtures;
  o.cache_dir = b.cache_dir;
  o.kb_path = b.kb_path;
  o.no_kb = b.no_kb || b.kb_path.empty();
  o.out_dir = out;
  o.quiet = true;
  o.profile_top = b.profile_top;  // issue 6
  o.profile_timeout_seconds = b.profile_timeout_seconds;
  o.profile_during = b.profile_during;
  static_cast<LlmFlags&>(o) = b;  // issue 21: the LLM operator's flags, as optimize takes them
  return o;
}

/// Optimizes one problem into `run_dir`, or with `resume` continues the run stored there
/// (`kernelevolve resume` with the run's own flags), and reads its result.json.
report::BenchEntry RunOne(const BenchOptions& b, const fs::path& problem, const fs::path& run_dir, bool resume) {
  report::BenchEntry entry;
  entry.problem = problem.stem().string();
  entry.problem_path = problem.string();
  entry.problem_hash = core::FileContentHash(problem);
  entry.run_dir = run_dir;
  bool threw = false;
  try {
    fs::create_directories(run_dir);
    if (resume) {
      std::ofstream summary(run_dir / "summary.txt", std::ios::app);  // the resumed part's summary
      ResumeOptions r;
      r.run_dir = run_dir;
      r.quiet = true;
      r.summary_out = &summary;
      entry.exit_code = RunResume(r);
    } else {
      std::ofstream summary(run_dir / "summary.txt");  // optimize's console summary, per problem
      OptimizeOptions o = OptimizeFor(b, problem, run_dir);
      o.summary_out = &summary;
      entry.exit_code = RunOptimize(o);
    }
  } catch (const std::exception& e) {
    const bool bad_input = dynamic_cast<const core::InvalidInputError*>(&e) != nullptr ||
                           dynamic_cast<const store::NotAStoreError*>(&e) != nullptr;
    entry.exit_code = bad_input ? 2 : 3;
    entry.outcome = "error";
    entry.message = e.what();
    threw = true;
  }
  std::ifstream in(run_dir / "result.json");
  const nlohmann::json result = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  // A run that threw (e.g. a resume refused) ends "error" even where an older
  // result.json is left: `bench --resume` then runs the problem again.
  if (result.is_object() && !threw) {
    const std::string message = entry.message;
    entry = report::BenchEntryFromResult(result, entry);
    if (!message.empty()) entry.message = message;
  } else if (entry.outcome.empty()) {
    entry.outcome = "error";
    entry.message = "no result.json written";
  }
  return entry;
}

/// How many problems run at once: --problems-at-once, or with 0 the queue's live
/// workers (at least 1; 1 without --queue). More than 1 without --queue is refused.
int ProblemsAtOnce(const BenchOptions& b) {
  if (b.problems_at_once < 0) throw core::InvalidInputError("--problems-at-once must be 0 (automatic) or positive");
  if (b.queue.empty()) {
    if (b.problems_at_once > 1) {
      throw core::InvalidInputError(fmt::format(
          "--problems-at-once {} needs --queue: problems evaluated on this machine at once would disturb each "
          "other's timings", b.problems_at_once));
    }
    return 1;
  }
  if (b.problems_at_once > 0) return b.problems_at_once;
  return std::max(1, LiveQueueWorkers(b.queue, b.target));
}

std::string ProgressLine(size_t index, size_t total, const report::BenchEntry& e, size_t name_width) {
  std::string what = e.outcome;
  if (e.correct) {
    what = fmt::format("correct {:.2f}x [{:.2f}, {:.2f}] ({})", e.speedup, e.ci_low, e.ci_high, e.speedup_source);
    if (e.bound == "memory") what += fmt::format(", {:.0f}% of copy bw", 100 * e.roofline_fraction);
    if (e.bound == "compute") what += ", compute-bound";
    if (e.speedup_vs_compile > 0) what += fmt::format(", {:.2f}x vs torch.compile", e.speedup_vs_compile);
  } else if (!e.message.empty()) {
    what += ": " + e.message.substr(0, 100);
  }
  return fmt::format("[{}/{}] {:<{}} {} ({} evals, {:.0f} s)", index + 1, total, e.problem, name_width, what,
                     e.evaluations, e.elapsed_seconds);
}

/// Fills the machine's `compiler` and `torch_version` (known only once a problem has
/// loaded and built) from the first problem's result.json that has them.
void FillMachineFromResult(core::MachineContext& machine, const fs::path& result_path) {
  if (!machine.compiler.empty() && !machine.torch_version.empty()) return;
  std::ifstream in(result_path);
  const nlohmann::json result = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  if (!result.is_object() || !result.contains("machine") || !result["machine"].is_object()) return;
  const nlohmann::json& m = result["machine"];
  if (machine.compiler.empty()) machine.compiler = m.value("compiler", "");
  if (machine.torch_version.empty()) machine.torch_version = m.value("torch_version", "");
}

/// The flags that shape every problem's figures; `bench --resume` refuses to continue a
/// bench with other values (a suite measured half one way, half another, has no totals).
nlohmann::json MeasurementFlags(const BenchOptions& b) {
  return {{"target", b.target},
          {"budget", b.budget},
          {"policy", b.policy},
          {"seed", b.seed},
          {"sets", b.sets},
          {"sizes_file_hash", b.sizes_file.empty() ? "" : core::FileContentHash(b.sizes_file)},
          {"confirm_rounds", b.confirm_rounds},
          {"threads", b.threads},
          {"omp_wait_policy", b.omp_wait_policy},
          {"seeds", b.seeds},
          {"drafts", b.drafts},
          {"min_time_seconds", b.min_time_seconds},
          {"time_limit_seconds", b.time_limit_seconds},
          {"llm", b.llm}};
}

nlohmann::json BenchDocument(const BenchOptions& b, const core::MachineContext& machine,
                             const std::vector<report::BenchEntry>& entries, size_t suite_size,
                             bool interrupted) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : entries) list.push_back(report::BenchEntryToJson(e));
  nlohmann::json doc = MeasurementFlags(b);
  doc.update({{"suite_dir", b.suite_dir.string()},
              {"sizes_file", b.sizes_file.string()},
              {"jobs", b.jobs},
              {"problems_at_once", b.problems_at_once},  // issue 22: 0 = automatic
              {"queue", b.queue},  // issue 22: "" when evaluated locally
              {"suite_problems", suite_size},
              {"interrupted", interrupted},
              {"machine", core::MachineToJson(machine)},
              {"totals", report::BenchTotalsToJson(report::SummarizeBench(entries))},
              {"problems", list}});
  return doc;
}

/// `bench --resume`: the entries of OUT/bench.json (RunBench checked that it exists) by
/// problem name, after checking that the bench there was measured with these flags, on
/// this kind of machine, over problems this suite has, unchanged since. Throws
/// InvalidInputError naming each mismatch.
std::map<std::string, report::BenchEntry> EntriesToResume(const BenchOptions& b,
                                                          const core::MachineContext& machine,
                                                          const std::vector<fs::path>& problems) {
  const fs::path path = b.out_dir / "bench.json";
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (!doc.is_object() || !doc.contains("problems") || !doc["problems"].is_array()) {
    throw core::InvalidInputError(fmt::format("--resume: {} is not a bench.json (no problem list)", path.string()));
  }
  std::vector<std::string> mismatches;
  const nlohmann::json flags = MeasurementFlags(b);
  for (const auto& [key, value] : flags.items()) {
    if (doc.contains(key) && doc[key] != value) {
      mismatches.push_back(fmt::format("{} {} there, {} here", key, doc[key].dump(), value.dump()));
    }
  }
  // Figures from two kinds of machine do not add up to one table.
  const nlohmann::json here = core::MachineToJson(machine);
  const nlohmann::json there = doc.value("machine", nlohmann::json::object());
  for (const char* key : {"cpu_model", "isa", "logical_cores"}) {
    if (there.contains(key) && there[key] != here[key]) {
      mismatches.push_back(fmt::format("machine {} {} there, {} here", key, there[key].dump(), here[key].dump()));
    }
  }
  std::set<std::string> names;
  for (const auto& p : problems) names.insert(p.stem().string());
  std::map<std::string, report::BenchEntry> entries;
  for (const auto& item : doc["problems"]) {
    report::BenchEntry e = report::BenchEntryFromJson(item);
    if (!names.count(e.problem)) {
      mismatches.push_back(fmt::format("problem '{}' ran there but is not in {}", e.problem, b.suite_dir.string()));
      continue;
    }
    const std::string now = core::FileContentHash(b.suite_dir / (e.problem + ".py"));
    if (!e.problem_hash.empty() && now != e.problem_hash) {
      mismatches.push_back(fmt::format("{}.py changed since the bench ran it (hash {} there, {} here)", e.problem,
                                       e.problem_hash, now.empty() ? "unreadable" : now));
    }
    e.run_dir = b.out_dir / e.problem;  // where it is now (the folder may have been copied)
    entries.emplace(e.problem, std::move(e));
  }
  if (!mismatches.empty()) {
    throw core::InvalidInputError(fmt::format(
        "--resume: the bench in {} was run differently: {}; give the same suite and flags, or bench into a new --out",
        b.out_dir.string(), fmt::join(mismatches, "; ")));
  }
  return entries;
}

/// Whether a resumed bench keeps an earlier entry as the problem's result: not when it
/// was interrupted (its search goes on), nor when it ended "error", kernelevolve itself
/// failing (a missing header, a full disk): that problem runs again from the start.
bool KeptOnResume(const report::BenchEntry& e) { return e.outcome != "interrupted" && e.outcome != "error"; }

/// Moves the folder of a problem that ended "error" aside (OUT/<problem>.error-<UTC
/// time>, kept for its logs) so that the problem runs again from an empty folder.
void SetFailedRunAside(const fs::path& run_dir) {
  if (!fs::exists(run_dir)) return;
  const fs::path aside = run_dir.string() + ".error-" + UtcStamp();
  std::error_code ec;
  fs::rename(run_dir, aside, ec);
  if (ec) {
    throw core::InvalidInputError(fmt::format("--resume: cannot move {} aside to run it again: {}",
                                              run_dir.string(), ec.message()));
  }
}

}  // namespace

std::vector<fs::path> SuiteProblems(const fs::path& dir) {
  if (!fs::exists(dir)) {
    throw core::InvalidInputError(fmt::format("{}: no such folder; give a folder of problem files", dir.string()));
  }
  if (!fs::is_directory(dir)) {
    throw core::InvalidInputError(fmt::format("{}: not a folder; give a folder of problem files", dir.string()));
  }
  std::vector<fs::path> files;
  for (const auto& item : fs::directory_iterator(dir)) {
    const fs::path& p = item.path();
    if (item.is_regular_file() && p.extension() == ".py" && p.filename().string().front() != '_') files.push_back(p);
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
  if (files.empty()) {
    throw core::InvalidInputError(fmt::format("{}: holds no problem files (*.py)", dir.string()));
  }
  return files;
}

void AddBenchCommand(CLI::App& app, BenchOptions& o) {
  auto* cmd = app.add_subcommand("bench", "optimize every problem of a folder and print KernelBench-style totals");
  cmd->add_option("suite", o.suite_dir, "folder of KernelBench-format problem files")->required();
  cmd->add_option("--target", o.target, "hardware interpreter: cpu, triton or cuda (nvcc from $CUDACXX or PATH)")->default_val("cpu");
  cmd->add_option("--budget", o.budget, "candidate evaluations per problem")->default_val(20);
  cmd->add_option("--time-limit", o.time_limit_seconds, "search wall time per problem, seconds")->default_val(600);
  cmd->add_option("--set", o.sets, "override a module-level constant, NAME=VALUE, for every problem (repeatable)");
  AddSharedSearchFlags(*cmd, o);  // --threads ... --profile-timeout, as `optimize` has them
  cmd->add_option("--jobs", o.jobs, "candidates in flight per problem")->default_val(1);
  cmd->add_option("--problems-at-once", o.problems_at_once,
                  "problems run at the same time, with --queue only (0: one per live queue worker; 1 without --queue)")
      ->default_val(0);
  cmd->add_option("--queue", o.queue, "evaluate candidates on `kernelevolve worker`s through a Redis stream: redis://HOST:PORT[/DB] (docs/scale.md)");
  cmd->add_option("--confirm-rounds", o.confirm_rounds, "interleaved eager/kernel rounds per problem's best (0: skip)")
      ->default_val(8);
  cmd->add_option("--load-timeout", o.load_timeout_seconds, "limit for loading each problem, seconds")
      ->default_val(300)
      ->check(LoadTimeoutSeconds());
  auto* out = cmd->add_option("--out", o.out_dir, "bench directory (default runs/bench-<UTC time>)");
  cmd->add_flag("--resume", o.resume,
                "continue the bench in --out with the same suite and flags: its finished problems are kept, an "
                "interrupted one is resumed, the rest run")
      ->needs(out);
  auto* kb = cmd->add_option("--kb", o.kb_path, "knowledge base to warm-start from and record into (default: none)");
  cmd->add_flag("--no-kb", o.no_kb, "no knowledge base (the default in a bench: it uses one only with --kb)")
      ->excludes(kb);
  cmd->add_flag("--quiet", o.quiet, "no per-problem progress lines");
  cmd->add_option("--sizes", o.sizes_file,
                  "JSON file: problem name -> {CONSTANT: value}, applied as --set for that problem (it wins over "
                  "--set); e.g. problems/level1/gpu_sizes.json");
  cmd->add_option("--profile-top", o.profile_top, "GPU targets: Nsight Compute on each problem's N best (0: none)")
      ->default_val(0);
  cmd->add_option("--profile-during", o.profile_during,
                  "GPU targets: Nsight Compute on up to N nodes per problem as the search expands them, fed to "
                  "the next proposal (~20-60 s each; 0: none, the default; at most 8)")
      ->default_val(0);
  AddLlmFlags(*cmd, o);  // issue 21
}

int RunBench(const BenchOptions& options) {
  BenchOptions b = options;
  ValidateTarget(b.target);  // the targets optimize accepts
  if (b.budget < 1) throw core::InvalidInputError("--budget must be at least 1");
  ProfileDuringFor(b.profile_during, b.target != "cpu");  // issue 6: refused before any problem runs
  ProfileTopFor(b.profile_top, b.target != "cpu");
  const std::vector<fs::path> problems = SuiteProblems(b.suite_dir);
  ValidateLlmFlags(OptimizeFor(b, problems.front(), b.out_dir));  // issue 21: models, keys, prompts before any work
  OptimizeOptions first = OptimizeFor(b, problems.front(), b.out_dir);
  ResolveFixturesMode(first);  // issue 22: --fixtures / KE_FIXTURES before any work, and before --queue's check
  ValidateQueueFlags(first);   // issue 22: --queue parses and Redis answers
  const int at_once_requested = ProblemsAtOnce(b);  // issue 22: several problems at once with --queue only
  // Issue 6: per-problem sizes (checked against the suite before any work).
  const ProblemSizes sizes = b.sizes_file.empty() ? ProblemSizes{} : LoadProblemSizes(b.sizes_file, problems);
  if (b.out_dir.empty()) b.out_dir = fs::path("runs") / fmt::format("bench-{}", UtcStamp());
  if (b.cache_dir.empty()) b.cache_dir = DefaultCacheDir();
  EnsureCacheDir(b.cache_dir);  // before the out folder and any problem
  if (b.resume && !fs::is_regular_file(b.out_dir / "bench.json")) {  // before the lock creates the folder
    throw core::InvalidInputError(fmt::format(
        "--resume: {} does not exist; give the --out folder of an earlier `kernelevolve bench`",
        (b.out_dir / "bench.json").string()));
  }
  // Issue 22: one bench per folder (each problem's run folder is locked by its optimize).
  store::RunDirectoryLock bench_lock = store::RunDirectoryLock::Acquire(b.out_dir, "--out");
  if (!b.resume && fs::exists(b.out_dir / "bench.json")) {
    throw core::InvalidInputError(fmt::format(
        "--out {}: already holds a bench run; choose another directory, or continue it with --resume",
        b.out_dir.string()));
  }
  std::error_code ec;
  fs::create_directories(b.out_dir, ec);
  if (ec) throw core::InvalidInputError(fmt::format("--out {}: cannot create it: {}", b.out_dir.string(), ec.message()));
  InstallInterruptHandler(
      "finished problems keep their folders under --out; the same command with `--out <out> --resume` keeps them "
      "and finishes the suite");

  core::MachineContext machine = core::ProbeLocalMachine();
  machine.threads = b.threads > 0 ? b.threads : std::max(1, machine.logical_cores);
  // --resume: finished problems keep their entries; the others run (or resume) below.
  std::vector<std::optional<report::BenchEntry>> slots(problems.size());
  std::vector<report::BenchEntry> entries;  // the finished ones, in suite order
  std::vector<size_t> todo;                 // indices of the problems to run, in suite order
  {
    const auto earlier = b.resume ? EntriesToResume(b, machine, problems)
                                  : std::map<std::string, report::BenchEntry>{};
    for (size_t i = 0; i < problems.size(); ++i) {
      const auto it = earlier.find(problems[i].stem().string());
      if (it != earlier.end() && KeptOnResume(it->second)) {
        slots[i] = it->second;
        entries.push_back(it->second);
        FillMachineFromResult(machine, it->second.run_dir / "result.json");
        continue;
      }
      if (it != earlier.end() && it->second.outcome == "error") SetFailedRunAside(b.out_dir / problems[i].stem());
      todo.push_back(i);
    }
  }
  // CPU peaks for the roofline (optimize then reads the cache); GPU targets measure their own.
  if (b.target == "cpu") AttachMachinePeaks(machine, b.cache_dir, b.remeasure_machine, b.quiet);
  if (!b.quiet) {
    const std::string kept =
        b.resume ? fmt::format(" ({} finished before, kept)", problems.size() - todo.size()) : "";
    fmt::print(stderr, "bench: {} problems from {}{}, budget {} each, {} at a time, results in {}\n",
               problems.size(), b.suite_dir.string(), kept, b.budget,
               std::min<size_t>(at_once_requested, std::max<size_t>(1, todo.size())), b.out_dir.string());
  }
  // Written before the first problem, so that a bench killed (SIGKILL, power) in its
  // first problem can still be resumed.
  report::WriteJsonAtomic(b.out_dir / "bench.json",
                          BenchDocument(b, machine, entries, problems.size(), /*interrupted=*/true));
  size_t name_width = 16;  // progress lines align on the suite's longest problem name
  for (const auto& p : problems) name_width = std::max(name_width, p.stem().string().size());
  // Issue 22: several problems at once with queue workers; results kept in suite order.
  std::mutex mutex;                         // guards slots, entries, next, finished, cost, machine
  size_t next = 0;                          // position in todo
  size_t finished = problems.size() - todo.size();
  double llm_cost_usd = 0;  // issue 21: the suite's LLM spending so far
  auto record = [&](size_t i, report::BenchEntry entry) {
    std::lock_guard<std::mutex> lock(mutex);
    slots[i] = std::move(entry);
    const report::BenchEntry& e = *slots[i];
    FillMachineFromResult(machine, e.run_dir / "result.json");
    std::string line = ProgressLine(finished++, problems.size(), e, name_width);
    if (!b.llm.empty()) {
      const double cost = LlmCostOfRun(e.run_dir / "result.json");
      llm_cost_usd += cost;
      line += fmt::format(" | llm ${:.4f}, ${:.4f} so far", cost, llm_cost_usd);
    }
    if (!b.quiet) fmt::print(stderr, "{}\n", line);
    entries.clear();
    for (const auto& slot : slots) if (slot) entries.push_back(*slot);
    const report::BenchTotals totals = report::SummarizeBench(entries);
    // "interrupted" stays true until the suite is complete: a bench killed now says so.
    report::WriteJsonAtomic(b.out_dir / "bench.json",
                            BenchDocument(b, machine, entries, problems.size(), /*interrupted=*/true));
    report::WriteTextAtomic(b.out_dir / "bench.txt",
                            "machine: " + core::MachineSummary(machine) + "\n" + report::BenchTable(entries, totals));
  };
  auto serve = [&] {
    while (true) {
      size_t i = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (next >= todo.size() || Interrupted()) return;
        i = todo[next++];
      }
      BenchOptions per_problem = b;
      if (auto it = sizes.find(problems[i].stem().string()); it != sizes.end()) {
        per_problem.sets = MergeSets(b.sets, it->second);
      }
      const fs::path run_dir = b.out_dir / problems[i].stem();
      // --resume: a problem whose run was cut (or whose entry never reached bench.json)
      // continues its own search rather than starting over.
      const bool continue_run = b.resume && fs::is_regular_file(run_dir / "kernelevolve.db");
      record(i, RunOne(per_problem, problems[i], run_dir, continue_run));
    }
  };
  const int at_once = std::min<int>(at_once_requested, static_cast<int>(todo.size()));
  if (at_once <= 1) {
    serve();
  } else {
    std::vector<std::thread> threads;
    for (int k = 0; k < at_once; ++k) threads.emplace_back(serve);
    for (auto& t : threads) t.join();
  }
  const report::BenchTotals totals = report::SummarizeBench(entries);
  report::WriteJsonAtomic(b.out_dir / "bench.json", BenchDocument(b, machine, entries, problems.size(), Interrupted()));
  const std::string table = "machine: " + core::MachineSummary(machine) + "\n" + report::BenchTable(entries, totals);
  report::WriteTextAtomic(b.out_dir / "bench.txt", table);
  std::cout << "\n" << table;
  std::cout << fmt::format("written: {} and bench.txt\n", (b.out_dir / "bench.json").string());
  if (Interrupted()) {
    std::cout << fmt::format(
        "interrupted after {} of {} problems; their runs stay in {}; the same command with `--out {} --resume` "
        "finishes the suite\n",
        totals.problems, problems.size(), b.out_dir.string(), b.out_dir.string());  // finished ones only
    return 128 + InterruptSignal();
  }
  return 0;
}

}  // namespace kernelevolve::cli
