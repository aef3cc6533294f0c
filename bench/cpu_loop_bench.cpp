// CPU loop benchmark (issue 16): ns per element, on ONE thread, of the generated CPU
// kernels' inner loops against PyTorch's own op on the same machine.
//
// What: for every function of the math prelude (ke_exp, ke_expm1, ke_log, ke_log1p,
// ke_sigmoid, ke_tanh, ke_softplus, ke_erf: operators/template/math_prelude.cpp) and
// for each CPU template's inner loop (pointwise: relu and x*sigmoid(x)+y;
// softmax_lastdim; rowwise: layer_norm, sum over the last dim, sum over a middle dim;
// scan: cumsum), one KernelBench-format problem in bench/loops/ (about 1M float32
// elements).
// How, per case: the problem is loaded through the Python worker with 1 thread exactly
// as `kernelevolve optimize --threads 1` loads it (problem::LoadProblem: 3 seeded input
// sets, fixtures, graph capture); the template is matched with MatchTemplate(problem, 1,
// HostCpuIsa().FloatLanes()); the template's single-thread drafts that use the
// vectorized prelude / math are built with the real CpuBuilder (-O3 -march=native
// -fno-trapping-math ...) and checked and timed once by the sandboxed harness (a
// prelude case uses exactly variant=vectorized, threads=1, unroll=1, so its figure is
// the prelude function's own loop); the fastest correct one then goes through the
// tool's own confirmation, exec::ConfirmSpeedup: R rounds of "eager PyTorch (the
// worker's time_baseline, 1 thread), then the kernel", each side timed for --min-time
// seconds with adaptive stopping up to --max-time.
// Prints, per case: the kernel's and eager's ns per element (median over rounds of each
// round's median call, divided by the elements of the largest input) with [min, max] of
// the round medians, the speedup (median of the per-round paired ratios of the fastest
// calls) with its 95% interval (eval::SpeedupFromRatios), and a verdict: "faster" (the
// interval lies above 1), "slower" (below 1), else "not clearly faster". A case that
// fails to load, has no template or no correct kernel prints a row saying so.
// Usage: cpu_loop_bench [--rounds 8] [--min-time 0.2] [--max-time 1] [--cases exp,tanh]
//        [--cache-dir DIR] [--loops-dir DIR] [--json FILE] [--list]
// docs/measuring.md ("CPU loop benchmark") has a table taken with it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/paths.h"
#include "core/cpu_isa.h"
#include "core/error.h"
#include "core/machine.h"
#include "exec/confirm_speedup.h"
#include "operators/template/kernel_template.h"
#include "platforms/cpu/cpu_platform.h"
#include "problem/eager_timer.h"
#include "problem/problem_loader.h"
#include "problem/worker_client.h"

namespace ke = kernelevolve;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// One benchmark case: bench/loops/<name>.py; `prelude` names the prelude function
/// it measures ("" for a template loop).
struct Case {
  std::string name;
  std::string prelude;
};

const std::vector<Case> kCases = {
    {"exp", "ke_exp"},         {"expm1", "ke_expm1"},     {"log", "ke_log"},    {"log1p", "ke_log1p"},
    {"sigmoid", "ke_sigmoid"}, {"tanh", "ke_tanh"},       {"softplus", "ke_softplus"},
    {"erf", "ke_erf"},         {"relu", ""},              {"silu_mul_add", ""}, {"softmax", ""},
    {"layer_norm", ""},        {"sum_lastdim", ""},       {"sum_middim", ""},   {"cumsum", ""},
};

struct Settings {
  int rounds = 8;
  double min_time_seconds = 0.2;
  double max_time_seconds = 1.0;
  fs::path cache_dir;
  fs::path loops_dir = KE_LOOPS_DIR;
  fs::path json_path;
  std::vector<std::string> cases;
};

/// What one case printed (error non-empty: the case has no figures).
struct Row {
  std::string name, kind, tmpl, error;
  json knobs = json::object();
  int64_t elements = 0;
  int drafts = 0;
  ke::core::TimingStats kernel, eager;  // microseconds per call, over round medians
  ke::core::Speedup speedup;
};

std::string Verdict(const ke::core::Speedup& s) {
  return s.ci_low > 1.0 ? "faster" : s.ci_high < 1.0 ? "slower" : "not clearly faster";
}

std::string KnobsText(const json& knobs) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : knobs.items()) parts.push_back(k + "=" + ke::operators::templates::KnobText(v));
  return fmt::format("{}", fmt::join(parts, " "));
}

/// The drafts this benchmark measures: single-thread, and using the vectorized prelude
/// (pointwise variant=vectorized; elsewhere math=vectorized where the knob exists). A
/// prelude case keeps only unroll=1, so its loop is one prelude call per element.
std::vector<json> BenchDrafts(const ke::operators::templates::KernelTemplate& tmpl, bool prelude_case) {
  std::vector<json> out;
  for (const json& d : tmpl.Drafts()) {
    if (d.value("threads", "1") != "1") continue;
    if (tmpl.Name() == "pointwise" && d.value("simd", "") != "on") continue;
    if (d.contains("math") && d.at("math") != "vectorized") continue;
    if (prelude_case && d.value("unroll", 1) != 1) continue;
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

int64_t LargestInputElements(const ke::core::Problem& problem) {
  int64_t n = 0;
  for (const auto& t : problem.inputs) n = std::max(n, t.NumElements());
  return n;
}

/// Builds and times each draft once; returns the fastest correct one (by median call),
/// or throws core::Error naming why none was correct.
ke::core::Candidate FastestDraft(const ke::operators::templates::KernelTemplate& tmpl, const std::vector<json>& drafts,
                                 ke::platforms::Platform& platform, const ke::core::Problem& problem,
                                 const ke::platforms::RunOptions& options, const std::string& name) {
  ke::core::Candidate best;
  double best_us = 0;
  std::string last_failure;
  for (const json& knobs : drafts) {
    ke::core::Candidate c;
    c.operator_name = "template";
    c.template_name = tmpl.Name();
    c.knobs = knobs;
    c.rationale = "cpu_loop_bench draft: " + tmpl.Summary(knobs);
    c.source = tmpl.Generate(knobs);
    const ke::platforms::BuildResult build = platform.Build(c);
    if (build.status != ke::core::Status::kOk) {
      last_failure = fmt::format("{}: build failed: {}", KnobsText(knobs), build.message);
      continue;
    }
    const ke::platforms::RunResult run = platform.Run(build, problem, options);
    if (run.status != ke::core::Status::kOk || !run.correct || !run.latency.Measured()) {
      last_failure = fmt::format("{}: {}: {}", KnobsText(knobs), ke::core::StatusName(run.status), run.message);
      continue;
    }
    fmt::print(stderr, "  {:<12} draft {:<60} {:8.1f} us\n", name, KnobsText(knobs), run.latency.median_us);
    if (best.source.empty() || run.latency.median_us < best_us) {
      best = c;
      best_us = run.latency.median_us;
    }
  }
  if (best.source.empty()) {
    throw ke::core::Error(fmt::format("no correct kernel among {} drafts (last: {})", drafts.size(), last_failure));
  }
  return best;
}

/// Loads, matches, picks and confirms one case; every failure becomes row.error.
Row RunCase(const Case& c, const Settings& s, ke::platforms::Platform& platform, const fs::path& work_dir,
            std::string& torch_version) {
  Row row;
  row.name = c.name;
  row.kind = c.prelude.empty() ? "loop" : "prelude " + c.prelude;
  try {
    ke::problem::WorkerOptions wopts;
    wopts.log_path = work_dir / (c.name + ".worker.log");
    wopts.threads = 1;
    ke::problem::WorkerClient worker(wopts);
    ke::problem::LoadOptions lopts;
    lopts.problem_path = s.loops_dir / (c.name + ".py");
    lopts.fixtures_dir = work_dir / c.name;
    lopts.threads = 1;
    lopts.timeout_seconds = 300;
    const ke::core::Problem problem = ke::problem::LoadProblem(worker, lopts);
    if (torch_version.empty()) torch_version = problem.torch_version;
    row.elements = LargestInputElements(problem);

    auto match = ke::operators::templates::MatchTemplate(problem, 1, ke::core::HostCpuIsa().FloatLanes());
    if (!match.tmpl) throw ke::core::Error("no template: " + match.unsupported);
    row.tmpl = match.tmpl->Name();
    const std::vector<json> drafts = BenchDrafts(*match.tmpl, !c.prelude.empty());
    row.drafts = static_cast<int>(drafts.size());
    if (drafts.empty()) throw ke::core::Error("the template has no single-thread vectorized draft");

    ke::platforms::RunOptions options;
    options.threads = 1;
    options.min_time_seconds = s.min_time_seconds;
    options.max_time_seconds = std::max(s.max_time_seconds, s.min_time_seconds);
    options.timeout_seconds = 60;
    const ke::core::Candidate best = FastestDraft(*match.tmpl, drafts, platform, problem, options, c.name);
    row.knobs = best.knobs;
    fmt::print(stderr, "  {:<12} confirming {} against eager: {} interleaved rounds\n", c.name, KnobsText(best.knobs),
               s.rounds);
    auto eager = ke::problem::MakeEagerTimer(worker, {s.min_time_seconds, s.max_time_seconds, false});
    const ke::exec::Confirmation conf = ke::exec::ConfirmSpeedup(eager, platform, problem, best, options, s.rounds);
    if (!conf.done) throw ke::core::Error("confirmation failed: " + conf.message);
    row.kernel = conf.candidate;
    row.eager = conf.baseline;
    row.speedup = conf.speedup;
  } catch (const std::exception& e) {  // one case's failure never ends the benchmark
    row.error = e.what();
  }
  return row;
}

std::string NsText(const ke::core::TimingStats& t, int64_t elements) {
  const double k = 1000.0 / static_cast<double>(elements);
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", t.median_us * k, t.min_us * k, t.max_us * k);
}

std::string RowText(const Row& r) {
  if (!r.error.empty()) return fmt::format("{:<13} error: {}", r.name, r.error);
  return fmt::format("{:<13} {:>8} {:<24} {:<24} {:<22} {:<18} {}: {}", r.name, r.elements, NsText(r.kernel, r.elements),
                     NsText(r.eager, r.elements),
                     fmt::format("{:.2f} [{:.2f}, {:.2f}]", r.speedup.value, r.speedup.ci_low, r.speedup.ci_high),
                     Verdict(r.speedup), r.tmpl, KnobsText(r.knobs));
}

json NsJson(const ke::core::TimingStats& t, int64_t elements) {
  const double k = 1000.0 / static_cast<double>(elements);
  return {{"median", t.median_us * k}, {"min", t.min_us * k}, {"max", t.max_us * k}};
}

json RowJson(const Row& r) {
  json j = {{"case", r.name}, {"kind", r.kind}, {"template", r.tmpl}, {"knobs", r.knobs}, {"drafts", r.drafts}};
  if (!r.error.empty()) {
    j["error"] = r.error;
    return j;
  }
  j["elements"] = r.elements;
  j["kernel_ns_per_element"] = NsJson(r.kernel, r.elements);
  j["eager_ns_per_element"] = NsJson(r.eager, r.elements);
  j["speedup"] = {{"value", r.speedup.value}, {"ci_low", r.speedup.ci_low}, {"ci_high", r.speedup.ci_high}};
  j["verdict"] = Verdict(r.speedup);
  return j;
}

/// Parses the flags into `s`; returns -1 to go on, else the exit code (0 for --help,
/// 2 for bad input).
int ParseFlags(int argc, char** argv, Settings& s, bool& list) {
  CLI::App app{"Per-element speed, one thread, of the CPU templates' inner loops and of the math prelude "
               "against PyTorch's own op (issue 16)."};
  std::string cases;
  app.add_option("--rounds", s.rounds, "interleaved eager/kernel rounds per case (8: an A/A false call 1/2^8)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--min-time", s.min_time_seconds, "timed seconds per measurement, each side, each round")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-time", s.max_time_seconds, "cap of adaptive stopping per measurement, seconds")
      ->check(CLI::PositiveNumber);
  app.add_option("--cases", cases, "comma-separated case names (default: all; --list shows them)");
  app.add_option("--cache-dir", s.cache_dir, "build cache (default: kernelevolve's, e.g. ~/.cache/kernelevolve)");
  app.add_option("--loops-dir", s.loops_dir, "folder of the case problem files")->check(CLI::ExistingDirectory);
  app.add_option("--json", s.json_path, "also write the table as JSON to this file");
  app.add_flag("--list", list, "print the case names and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  std::stringstream in(cases);
  for (std::string name; std::getline(in, name, ',');) {
    if (name.empty()) continue;
    if (std::none_of(kCases.begin(), kCases.end(), [&](const Case& c) { return c.name == name; })) {
      fmt::print(stderr, "error: --cases {}: unknown case (cpu_loop_bench --list shows them)\n", name);
      return 2;
    }
    s.cases.push_back(name);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  bool list = false;
  if (const int rc = ParseFlags(argc, argv, s, list); rc >= 0) return rc;
  if (list) {
    for (const Case& c : kCases) fmt::print("{:<13} {}\n", c.name, c.prelude.empty() ? "template loop" : c.prelude);
    return 0;
  }
  try {
    if (s.cache_dir.empty()) s.cache_dir = ke::cli::DefaultCacheDir();
    ke::cli::EnsureCacheDir(s.cache_dir);
  } catch (const ke::core::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
  const fs::path work_dir = fs::temp_directory_path() / fmt::format("ke_loop_bench_{}", ::getpid());
  fs::create_directories(work_dir);
  ke::platforms::cpu::CpuPlatform platform(s.cache_dir / "cpu", KE_HARNESS_PATH, "g++");

  ke::core::MachineContext machine = ke::core::ProbeLocalMachine();
  std::string torch_version;
  std::vector<Row> rows;
  for (const Case& c : kCases) {
    if (!s.cases.empty() && std::find(s.cases.begin(), s.cases.end(), c.name) == s.cases.end()) continue;
    fmt::print(stderr, "{}: loading bench/loops/{}.py (1 thread)...\n", c.name, c.name);
    rows.push_back(RunCase(c, s, platform, work_dir, torch_version));
    fmt::print(stderr, "{}\n", RowText(rows.back()));
  }
  fs::remove_all(work_dir);

  fmt::print("CPU loop benchmark: ns per element on 1 thread, generated kernel vs eager PyTorch\n");
  fmt::print("cpu: {} ({} logical CPUs, governor {})\n", machine.cpu_model, machine.logical_cores, machine.governor);
  fmt::print("isa: {}\ncompiler: {}\ntorch: {}\nthreads=1, rounds {}, min-time {} s, max-time {} s\n",
             ke::core::HostCpuIsa().Text(), platform.Machine().compiler, torch_version, s.rounds, s.min_time_seconds,
             s.max_time_seconds);
  fmt::print("ns/el: median over rounds of each round's median call / elements of the largest input, [min, max] of "
             "the round medians; speedup: eager/kernel, 95% interval over rounds\n\n");
  fmt::print("{:<13} {:>8} {:<24} {:<24} {:<22} {:<18} {}\n", "case", "elements", "kernel ns/el [min, max]",
             "eager ns/el [min, max]", "speedup [95% CI]", "verdict", "template: knobs");
  for (const Row& r : rows) fmt::print("{}\n", RowText(r));

  if (!s.json_path.empty()) {
    json doc = {{"machine",
                 {{"cpu_model", machine.cpu_model},
                  {"isa", ke::core::CpuIsaToJson(ke::core::HostCpuIsa())},
                  {"compiler", platform.Machine().compiler},
                  {"torch_version", torch_version},
                  {"threads", 1}}},
                {"settings", {{"rounds", s.rounds}, {"min_time_s", s.min_time_seconds}, {"max_time_s", s.max_time_seconds}}},
                {"rows", json::array()}};
    for (const Row& r : rows) doc["rows"].push_back(RowJson(r));
    std::ofstream out(s.json_path);
    out << doc.dump(2) << "\n";
    if (!out) {
      fmt::print(stderr, "error: --json {}: cannot write the file\n", s.json_path.string());
      return 2;
    }
  }
  const bool any_error = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.error.empty(); });
  return any_error ? 1 : 0;
}
