#include "cli/compare_command.h"

#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/llm_setup.h"
#include "cli/optimize_command.h"
#include "cli/queue_setup.h"
#include "cli/run_config.h"
#include "cli/run_setup.h"
#include "core/error.h"
#include "cli/paths.h"
#include "report/bench_summary.h"
#include "report/run_summary.h"
#include "search/selection_policy.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

/// Sends std::cout to a file while alive (optimize's summary table of each run).
class CoutToFile {
 public:
  explicit CoutToFile(const fs::path& path) : file_(path), old_(std::cout.rdbuf(file_.rdbuf())) {}
  ~CoutToFile() { std::cout.rdbuf(old_); }
  CoutToFile(const CoutToFile&) = delete;
  CoutToFile& operator=(const CoutToFile&) = delete;

 private:
  std::ofstream file_;
  std::streambuf* old_;
};

OptimizeOptions OptimizeFor(const CompareOptions& c, const fs::path& problem,
                           const std::string& policy, const fs::path& out) {
  OptimizeOptions o;
  o.problem_path = problem;
  o.policy = policy;
  o.budget = c.budget;
  o.time_limit_seconds = c.time_limit_seconds;
  o.sets = c.sets;
  o.threads = c.threads;
  o.seeds = c.seeds;
  o.drafts = c.drafts;
  o.jobs = c.jobs;
  o.queue = c.queue;
  o.seed = c.seed;
  o.min_time_seconds = c.min_time_seconds;
  o.confirm_rounds = c.confirm_rounds;
  o.cache_dir = c.cache_dir;
  o.out_dir = out;
  o.quiet = true;
  o.no_kb = true;  // a run must not warm-start from another policy's kernels
  static_cast<LlmFlags&>(o) = c;  // issue 21: the LLM operator's flags, as optimize takes them
  return o;
}

CompareCell ReadCell(const fs::path& result_path, CompareCell cell) {
  std::ifstream in(result_path);
  if (!in) return cell;
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) return cell;
  if (doc.value("status", "") == "error" && cell.error.empty()) {
    const nlohmann::json error = doc.value("error", nlohmann::json::object());  // {message, log}
    cell.error = error.is_object() ? error.value("message", std::string("the run failed")) : "the run failed";
  }
  cell.evaluations = doc.value("evaluations", 0);
  cell.stop_reason = doc.value("stop_reason", "");
  cell.elapsed_seconds = doc.value("elapsed_seconds", 0.0);
  const nlohmann::json& best = doc.contains("best") ? doc["best"] : nlohmann::json();
  if (best.is_object()) {
    cell.best_speedup = best.value("speedup_vs_eager", 0.0);
    const nlohmann::json confirmed = best.value("confirmed", nlohmann::json::object());
    if (confirmed.value("done", false)) cell.confirmed_speedup = confirmed.value("speedup_vs_eager", 0.0);
  }
  return cell;
}

/// Geometric mean of the speedups, a run without a correct kernel (speedup 0) counted
/// as 1.0: the reference stays the answer (bench's geomean_speedup_all_incorrect_as_1).
/// 0 for no values.
double GeoMeanIncorrectAsOne(std::vector<double> speedups) {
  for (double& v : speedups) v = v > 0 ? v : 1.0;
  return report::GeoMean(speedups);
}

const CompareCell* Find(const std::vector<CompareCell>& cells, const std::string& problem,
                        const std::string& policy) {
  for (const auto& c : cells) {
    if (c.problem == problem && c.policy == policy) return &c;
  }
  return nullptr;
}

}  // namespace

void AddCompareCommand(CLI::App& app, CompareOptions& o) {
  auto* cmd = app.add_subcommand(
      "compare", "run every selection policy on every problem with the same budget and tabulate "
                 "the best speedups");
  cmd->add_option("--problems", o.problems, "problem files (.py)")->required()->expected(1, -1);
  cmd->add_option("--policies", o.policies, "comma-separated policies (default: all)")
      ->delimiter(',');
  cmd->add_option("--budget", o.budget, "evaluations per run")->default_val(20);
  cmd->add_option("--time-limit", o.time_limit_seconds, "wall time per run, seconds")->default_val(600);
  cmd->add_option("--set", o.sets, "NAME=VALUE override applied to every problem (repeatable)");
  cmd->add_option("--threads", o.threads, "threads (0: all CPUs)")->default_val(0);
  cmd->add_option("--seeds", o.seeds, "seeded input sets per candidate")->default_val(3);
  cmd->add_option("--drafts", o.drafts, "drafts per run (0: max(3, budget/10))")->default_val(0);
  cmd->add_option("--jobs", o.jobs, "candidates in flight per run")->default_val(1);
  cmd->add_option("--queue", o.queue, "evaluate candidates on `kernelevolve worker`s through a Redis stream: redis://HOST:PORT[/DB] (docs/scale.md)");
  cmd->add_option("--seed", o.seed, "seed of the policies' random choices")->default_val(0);
  cmd->add_option("--min-time", o.min_time_seconds, "timed seconds per measurement")->default_val(0.05);
  cmd->add_option("--confirm-rounds", o.confirm_rounds,
                  "interleaved eager/kernel rounds for each run's best (0: skip)")->default_val(0);
  cmd->add_option("--out", o.out_dir, "output folder (default runs/compare-<UTC time>)");
  cmd->add_option("--cache-dir", o.cache_dir, fmt::format("build cache ({})", kCacheDirDefaultHelp));
  cmd->add_flag("--quiet", o.quiet, "no line per run");
  AddLlmFlags(*cmd, o);  // issue 21
  cmd->footer(
      "A problem that fails to load is an error row; the geomeans cover the problems that loaded,\n"
      "a run without a correct kernel counted as 1.0 (the reference stays the answer).\n"
      "Exit codes (as bench): 0 the comparison ran (whatever each run's outcome); 2 bad input (no such\n"
      "problem file, unknown policy, --out already holding a compare run, unusable --cache-dir);\n"
      "130 interrupted (Ctrl-C).\n");
}

std::string CompareTable(const std::vector<CompareCell>& cells,
                         const std::vector<std::string>& problems,
                         const std::vector<std::string>& policies) {
  bool confirmed = false;
  for (const auto& c : cells) confirmed = confirmed || c.confirmed_speedup > 0;
  std::string out = fmt::format("{:<20}", "problem");
  for (const auto& p : policies) out += fmt::format(" {:>14}", p);
  out += "\n";
  std::vector<std::vector<double>> search(policies.size());
  std::vector<std::vector<double>> confirm(policies.size());
  for (const auto& problem : problems) {
    out += fmt::format("{:<20}", problem);
    for (size_t i = 0; i < policies.size(); ++i) {
      const CompareCell* c = Find(cells, problem, policies[i]);
      const double v = c ? c->best_speedup : 0;
      const double w = c ? c->confirmed_speedup : 0;
      if (c && !c->error.empty()) {  // a broken problem: an error row, out of the geomean
        out += fmt::format(" {:>14}", "error");
        continue;
      }
      search[i].push_back(v);
      confirm[i].push_back(w);
      std::string text = v > 0 ? fmt::format("{:.2f}x", v) : "-";
      if (confirmed && v > 0) text += w > 0 ? fmt::format("/{:.2f}x", w) : "/-";
      out += fmt::format(" {:>14}", text);
    }
    out += "\n";
  }
  auto geomean_row = [&](const std::string& label, const std::vector<std::vector<double>>& columns) {
    std::string row = fmt::format("{:<20}", label);
    for (const auto& column : columns) {
      const double g = GeoMeanIncorrectAsOne(column);
      row += fmt::format(" {:>14}", g > 0 ? fmt::format("{:.2f}x", g) : "-");
    }
    return row + "\n";
  };
  out += geomean_row("geomean", search);
  if (confirmed) {
    out += geomean_row("geomean (confirmed)", confirm);
    out += "cells: best speedup during the search / the same kernel re-measured in interleaved "
           "rounds\n";
  }
  out += "geomeans count a run without a correct kernel (-) as 1.0: the reference stays the answer\n";
  return out;
}

nlohmann::json CompareJson(const CompareOptions& o, const std::vector<CompareCell>& cells,
                           const std::vector<std::string>& problems) {
  nlohmann::json doc = {{"budget", o.budget}, {"policies", o.policies}, {"problems", problems},
                        {"sets", o.sets},     {"seed", o.seed},         {"jobs", o.jobs},
                        {"min_time_seconds", o.min_time_seconds},
                        {"confirm_rounds", o.confirm_rounds}};
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : cells) {
    rows.push_back({{"problem", c.problem},
                    {"policy", c.policy},
                    {"exit_code", c.exit_code},
                    {"best_speedup", c.best_speedup},
                    {"confirmed_speedup", c.confirmed_speedup},
                    {"evaluations", c.evaluations},
                    {"stop_reason", c.stop_reason},
                    {"elapsed_seconds", c.elapsed_seconds},
                    {"run_dir", c.run_dir.string()},
                    {"error", c.error}});
  }
  doc["cells"] = rows;
  nlohmann::json geomean = nlohmann::json::object();
  for (const auto& policy : o.policies) {
    std::vector<double> values;
    for (const auto& problem : problems) {
      const CompareCell* c = Find(cells, problem, policy);
      if (c && !c->error.empty()) continue;  // the problems that loaded
      values.push_back(c ? c->best_speedup : 0);
    }
    geomean[policy] = GeoMeanIncorrectAsOne(values);
  }
  doc["geomean"] = geomean;
  return doc;
}

int RunCompare(const CompareOptions& options) {
  CompareOptions o = options;
  if (o.policies.empty()) o.policies = search::PolicyNames();
  if (o.out_dir.empty()) o.out_dir = fs::path("runs") / fmt::format("compare-{}", UtcStamp());
  if (o.cache_dir.empty()) o.cache_dir = DefaultCacheDir();
  std::vector<std::string> names;
  for (const auto& p : o.problems) {
    if (!fs::is_regular_file(p)) {
      throw core::InvalidInputError(fmt::format("{}: no such problem file", p.string()));
    }
    names.push_back(p.stem().string());
  }
  for (const auto& policy : o.policies) {
    OptimizeOptions check = OptimizeFor(o, o.problems.front(), policy, o.out_dir);
    ValidateSearchFlags(check);  // unknown policy: fail before the first run
    ResolveFixturesMode(check);  // issue 22: KE_FIXTURES unknown, or device on --target cpu
    ValidateLlmFlags(check);     // issue 21: models, keys, prompts
    ValidateQueueFlags(check);   // issue 22: --queue parses and Redis answers
  }
  EnsureCacheDir(o.cache_dir);  // an unusable --cache-dir fails before any run
  bool earlier_compare = fs::exists(o.out_dir / "compare.json");
  for (size_t i = 0; i < names.size() && !earlier_compare; ++i) {
    for (const auto& policy : o.policies) {
      earlier_compare = earlier_compare || fs::exists(o.out_dir / fmt::format("{}-{}", names[i], policy));
    }
  }
  if (earlier_compare) {  // as bench: never mix an earlier comparison's runs into this table
    throw core::InvalidInputError(
        fmt::format("--out {}: already holds a compare run; choose another directory", o.out_dir.string()));
  }
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) throw core::InvalidInputError(fmt::format("--out {}: cannot create it: {}", o.out_dir.string(), ec.message()));
  std::vector<CompareCell> cells;
  int status = 0;
  double llm_cost_usd = 0;  // issue 21: the comparison's LLM spending so far
  for (size_t i = 0; i < o.problems.size() && status == 0; ++i) {
    std::string load_error;  // set when the problem failed to load: its other policies are skipped
    for (const auto& policy : o.policies) {
      CompareCell cell;
      cell.problem = names[i];
      cell.policy = policy;
      if (!load_error.empty()) {
        cell.error = load_error;
        cells.push_back(cell);
        continue;
      }
      cell.run_dir = o.out_dir / fmt::format("{}-{}", names[i], policy);
      OptimizeOptions run = OptimizeFor(o, o.problems[i], policy, cell.run_dir);
      fs::create_directories(cell.run_dir);
      try {
        CoutToFile redirect(cell.run_dir / "summary.txt");
        cell.exit_code = RunOptimize(run);
      } catch (const std::exception& e) {
        cell.exit_code = dynamic_cast<const core::InvalidInputError*>(&e) != nullptr ? 2 : 3;
        cell.error = e.what();
      }
      cell = ReadCell(cell.run_dir / "result.json", cell);
      if (cell.exit_code >= 128) status = cell.exit_code;  // interrupted: stop, as bench does
      if (!cell.error.empty()) {
        fmt::print(stderr, "compare: {} with {}: {}\n", names[i], policy, cell.error);
        if (cell.evaluations == 0) load_error = cell.error;
      } else if (!o.quiet) {
        std::string llm;
        if (!o.llm.empty()) {
          const double cost = LlmCostOfRun(cell.run_dir / "result.json");
          llm_cost_usd += cost;
          llm = fmt::format(" | llm ${:.4f}, ${:.4f} so far", cost, llm_cost_usd);
        }
        fmt::print(stderr, "{:<14} {:<13} best {:>6}  {} evaluations, {:.0f} s, stopped by {}{}\n",
                   cell.problem, policy,
                   cell.best_speedup > 0 ? fmt::format("{:.2f}x", cell.best_speedup) : "-",
                   cell.evaluations, cell.elapsed_seconds, cell.stop_reason, llm);
      }
      cells.push_back(cell);
      if (status != 0) break;
    }
  }
  const std::string table = CompareTable(cells, names, o.policies);
  report::WriteTextAtomic(o.out_dir / "compare.txt", table);
  report::WriteJsonAtomic(o.out_dir / "compare.json", CompareJson(o, cells, names));
  std::cout << fmt::format("\nbest speedup vs eager reached by each policy (budget {}, search-time "
                           "measurements):\n\n",
                           o.budget)
            << table << fmt::format("\nwritten: {}\n", (o.out_dir / "compare.json").string());
  return status;
}

}  // namespace kernelevolve::cli
