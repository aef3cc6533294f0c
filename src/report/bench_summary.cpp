#include "report/bench_summary.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kernelevolve::report {
namespace {

using nlohmann::json;

bool Finished(const BenchEntry& e) { return e.outcome != "interrupted"; }

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// A number field of `doc`, or `fallback` when absent or not a number.
double Number(const json& doc, const char* key, double fallback = 0) {
  if (!doc.is_object() || !doc.contains(key) || !doc.at(key).is_number()) return fallback;
  return doc.at(key).get<double>();
}

std::string Text(const json& doc, const char* key) {
  if (!doc.is_object() || !doc.contains(key) || !doc.at(key).is_string()) return "";
  return doc.at(key).get<std::string>();
}

/// Reads a [low, high] pair of numbers (an interval) into *low and *high; leaves them
/// unchanged when `pair` is anything else.
void ReadInterval(const json& pair, double* low, double* high) {
  if (pair.is_array() && pair.size() == 2 && pair[0].is_number() && pair[1].is_number()) {
    *low = pair[0].get<double>();
    *high = pair[1].get<double>();
  }
}

const json& Object(const json& doc, const char* key) {
  static const json kNull;
  if (!doc.is_object() || !doc.contains(key) || !doc.at(key).is_object()) return kNull;
  return doc.at(key);
}

/// The torch.compile figures of BenchTotals (issue 6).
void SummarizeVsCompile(const std::vector<BenchEntry>& entries, BenchTotals& t) {
  std::vector<double> measured;
  std::vector<double> all;
  int fast[3] = {0, 0, 0};
  const double ps[3] = {1.0, 1.5, 2.0};
  for (const auto& e : entries) {
    if (!Finished(e)) continue;
    t.gpu = t.gpu || e.has_gpu;
    const bool counted = e.correct && e.speedup_vs_compile > 0;
    if (counted) measured.push_back(e.speedup_vs_compile);
    all.push_back(counted ? e.speedup_vs_compile : 1.0);
    for (int i = 0; i < 3; ++i) fast[i] += counted && e.speedup_vs_compile > ps[i] ? 1 : 0;
  }
  t.compile_measured = static_cast<int>(measured.size());
  if (t.problems > 0) {
    t.compile_fast_1 = static_cast<double>(fast[0]) / t.problems;
    t.compile_fast_1_5 = static_cast<double>(fast[1]) / t.problems;
    t.compile_fast_2 = static_cast<double>(fast[2]) / t.problems;
  }
  t.compile_geomean_correct = GeoMean(measured);
  t.compile_geomean_all = GeoMean(all);
}

}  // namespace

double GeoMean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}


double FastP(const std::vector<BenchEntry>& entries, double p) {
  int finished = 0;
  int fast = 0;
  for (const auto& e : entries) {
    if (!Finished(e)) continue;
    ++finished;
    if (e.correct && e.speedup > p) ++fast;
  }
  return finished == 0 ? 0 : static_cast<double>(fast) / finished;
}

BenchTotals SummarizeBench(const std::vector<BenchEntry>& entries) {
  BenchTotals t;
  std::vector<double> correct_speedups;
  std::vector<double> all_speedups;
  std::vector<double> memory_fractions;
  for (const auto& e : entries) {
    if (!Finished(e)) continue;
    ++t.problems;
    const bool counted = e.correct && e.speedup > 0;
    if (e.correct) ++t.correct;
    if (counted) correct_speedups.push_back(e.speedup);
    all_speedups.push_back(counted ? e.speedup : 1.0);
    if (e.correct && e.bound == "memory" && e.roofline_fraction > 0) memory_fractions.push_back(e.roofline_fraction);
    if (e.correct && e.ci_low > 0 && e.ci_high > kWideIntervalRatio * e.ci_low) t.wide_interval.push_back(e.problem);
  }
  if (t.problems > 0) t.correct_rate = static_cast<double>(t.correct) / t.problems;
  t.fast_0 = FastP(entries, 0);
  t.fast_1 = FastP(entries, 1.0);
  t.fast_1_5 = FastP(entries, 1.5);
  t.fast_2 = FastP(entries, 2.0);
  t.geomean_speedup_correct = GeoMean(correct_speedups);
  t.geomean_speedup_all = GeoMean(all_speedups);
  t.memory_bound = static_cast<int>(memory_fractions.size());
  t.median_memory_roofline_fraction = Median(memory_fractions);
  SummarizeVsCompile(entries, t);
  return t;
}

BenchEntry BenchEntryFromResult(const json& result, BenchEntry e) {
  const std::string status = Text(result, "status");
  e.stop_reason = Text(result, "stop_reason");
  e.evaluations = static_cast<int>(Number(result, "evaluations"));
  e.elapsed_seconds = Number(result, "elapsed_seconds");
  const json& best = Object(result, "best");
  const json& gpu = Object(result, "gpu");  // GPU targets (issue 6)
  e.has_gpu = gpu.is_object();
  if (status == "ok" && best.is_object()) e.speedup_vs_compile = Number(gpu, "best_speedup_vs_torch_compile");
  if (status == "ok" && best.is_object()) {
    e.correct = true;
    e.outcome = "correct";
    e.search_speedup = Number(best, "speedup_vs_eager");
    const json& confirmed = Object(best, "confirmed");
    const json& spread = best.contains("speedup_vs_eager_spread") ? best["speedup_vs_eager_spread"] : json();
    if (confirmed.is_object() && confirmed.value("done", false)) {
      e.speedup_source = "confirmed";
      e.speedup = Number(confirmed, "speedup_vs_eager");
      ReadInterval(confirmed.contains("ci95") ? confirmed["ci95"] : json(), &e.ci_low, &e.ci_high);
      e.clearly_faster = confirmed.value("clearly_faster", false);
    } else {
      e.speedup_source = "search";
      e.speedup = e.search_speedup;
      ReadInterval(spread, &e.ci_low, &e.ci_high);
    }
    const json& roofline = Object(best, "roofline");
    if (roofline.is_object()) {
      e.bound = Text(roofline, "bound").empty() ? "unknown" : Text(roofline, "bound");
      e.roofline_fraction = Number(roofline, "fraction");
    }
  } else if (status == "error") {
    e.outcome = "load_error";
    e.message = Text(Object(result, "error"), "message");
  } else if (status == "no_correct_candidate") {
    const bool unsupported = e.stop_reason.rfind("unsupported", 0) == 0;
    e.outcome = unsupported ? "unsupported" : "no_correct_candidate";
    e.message = unsupported ? e.stop_reason : fmt::format("no correct kernel in {} evaluations", e.evaluations);
    if (!unsupported && !Text(result, "failures").empty()) e.message += ": " + Text(result, "failures");
  } else {
    e.outcome = "error";
    if (e.message.empty()) e.message = "result.json has no usable status";
  }
  if (e.stop_reason == "interrupted") {
    // The best so far of a search cut short is not the problem's result: no speedup is
    // shown or counted for it (the totals leave it out; `bench --resume` finishes it).
    BenchEntry cut;
    cut.problem = e.problem;
    cut.problem_path = e.problem_path;
    cut.problem_hash = e.problem_hash;
    cut.run_dir = e.run_dir;
    cut.exit_code = e.exit_code;
    cut.evaluations = e.evaluations;
    cut.elapsed_seconds = e.elapsed_seconds;
    cut.stop_reason = e.stop_reason;
    cut.has_gpu = e.has_gpu;
    cut.outcome = "interrupted";
    cut.message = fmt::format("continue with `bench --resume` or `kernelevolve resume {}`", e.run_dir.string());
    return cut;
  }
  return e;
}

BenchEntry BenchEntryFromJson(const json& doc) {
  BenchEntry e;
  e.problem = Text(doc, "problem");
  e.problem_path = Text(doc, "problem_path");
  e.problem_hash = Text(doc, "problem_hash");
  e.run_dir = Text(doc, "run_dir");
  e.outcome = Text(doc, "outcome");
  e.correct = doc.is_object() && doc.value("correct", false);
  e.speedup = Number(doc, "speedup");
  ReadInterval(doc.is_object() && doc.contains("ci") ? doc["ci"] : json(), &e.ci_low, &e.ci_high);
  e.speedup_source = Text(doc, "speedup_source");
  e.search_speedup = Number(doc, "search_speedup");
  e.clearly_faster = doc.is_object() && doc.value("clearly_faster", false);
  const json& roofline = Object(doc, "roofline");
  e.bound = Text(roofline, "bound").empty() ? "unknown" : Text(roofline, "bound");
  e.roofline_fraction = Number(roofline, "fraction");
  e.evaluations = static_cast<int>(Number(doc, "evaluations"));
  e.elapsed_seconds = Number(doc, "elapsed_seconds");
  e.stop_reason = Text(doc, "stop_reason");
  e.message = Text(doc, "message");
  e.exit_code = static_cast<int>(Number(doc, "exit_code", -1));
  e.speedup_vs_compile = Number(doc, "speedup_vs_torch_compile");
  e.has_gpu = doc.is_object() && doc.value("has_gpu", false);
  static const std::set<std::string> kOutcomes = {"correct", "no_correct_candidate", "unsupported",
                                                  "load_error", "error", "interrupted"};
  if (e.problem.empty() || !kOutcomes.count(e.outcome)) {  // caller checks the name
    e.outcome = "error";
    e.speedup = 0;
  }
  e.correct = e.correct && e.outcome == "correct";  // only a "correct" outcome is a result
  return e;
}

json BenchEntryToJson(const BenchEntry& e) {
  return {{"problem", e.problem},
          {"problem_path", e.problem_path},
          {"problem_hash", e.problem_hash},
          {"run_dir", e.run_dir.string()},
          {"outcome", e.outcome},
          {"correct", e.correct},
          {"speedup", e.speedup},
          {"ci", {e.ci_low, e.ci_high}},
          {"speedup_source", e.speedup_source},
          {"search_speedup", e.search_speedup},
          {"clearly_faster", e.clearly_faster},
          {"roofline", {{"bound", e.bound}, {"fraction", e.roofline_fraction}}},
          {"evaluations", e.evaluations},
          {"elapsed_seconds", e.elapsed_seconds},
          {"stop_reason", e.stop_reason},
          {"message", e.message},
          {"exit_code", e.exit_code},
          {"speedup_vs_torch_compile", e.speedup_vs_compile},
          {"has_gpu", e.has_gpu}};
}

json BenchTotalsToJson(const BenchTotals& t) {
  return {{"problems", t.problems},
          {"correct", t.correct},
          {"correct_rate", t.correct_rate},
          {"fast_0", t.fast_0},
          {"fast_1", t.fast_1},
          {"fast_1.5", t.fast_1_5},
          {"fast_2", t.fast_2},
          {"geomean_speedup_correct", t.geomean_speedup_correct},
          {"geomean_speedup_all_incorrect_as_1", t.geomean_speedup_all},
          {"memory_bound_problems", t.memory_bound},
          {"median_memory_roofline_fraction", t.median_memory_roofline_fraction},
          {"wide_interval_problems", t.wide_interval},
          {"vs_torch_compile",
           t.gpu ? json{{"measured", t.compile_measured},
                        {"fast_0", t.fast_0},
                        {"fast_1", t.compile_fast_1},
                        {"fast_1.5", t.compile_fast_1_5},
                        {"fast_2", t.compile_fast_2},
                        {"share_faster", t.compile_fast_1},
                        {"geomean_speedup_correct", t.compile_geomean_correct},
                        {"geomean_speedup_all_incorrect_as_1", t.compile_geomean_all}}
                 : json(nullptr)}};
}

std::string BenchTable(const std::vector<BenchEntry>& entries, const BenchTotals& t) {
  size_t name_width = 18;  // the problem column fits the longest name
  for (const auto& e : entries) name_width = std::max(name_width, e.problem.size());
  std::string out = fmt::format("{:<{}} {:<21} {:>8} {:>17} {:<9} {:>16} {:>5} {:>7}{}\n", "problem", name_width,
                                "outcome", "speedup", "interval", "from", "roofline", "evals", "time s",
                                t.gpu ? fmt::format(" {:>10}", "vs compile") : "");
  for (const auto& e : entries) {
    const std::string speedup = e.correct ? fmt::format("{:.2f}x", e.speedup) : "-";
    const std::string interval = e.correct ? fmt::format("[{:.2f}, {:.2f}]", e.ci_low, e.ci_high) : "";
    std::string roofline = "-";
    if (e.correct && e.bound == "memory") roofline = fmt::format("{:.0f}% copy bw", 100 * e.roofline_fraction);
    // GPU rows: of the matmul peak (cli::PeakDtype); CPU rows: of the FMA loop's.
    if (e.correct && e.bound == "compute") {
      roofline = fmt::format("{:.0f}% {} peak", 100 * e.roofline_fraction, e.has_gpu ? "mm" : "FMA");
    }
    std::string vs_compile;
    if (t.gpu) vs_compile = fmt::format(" {:>10}", e.correct && e.speedup_vs_compile > 0
                                                       ? fmt::format("{:.2f}x", e.speedup_vs_compile) : "-");
    out += fmt::format("{:<{}} {:<21} {:>8} {:>17} {:<9} {:>16} {:>5} {:>7.0f}{}\n", e.problem, name_width, e.outcome,
                       speedup, interval, e.speedup_source, roofline, e.evaluations, e.elapsed_seconds, vs_compile);
    if (!e.correct && !e.message.empty()) out += fmt::format("{:<{}} {}\n", "", name_width, e.message.substr(0, 110));
  }
  out += fmt::format("\n{} problems, {} correct ({:.1f}%): fast_0 {:.3f}, fast_1 {:.3f}, fast_1.5 {:.3f}, fast_2 {:.3f}\n",
                     t.problems, t.correct, 100 * t.correct_rate, t.fast_0, t.fast_1, t.fast_1_5, t.fast_2);
  if (t.problems == 0) {
    out += "geomean speedup vs eager: none, no problem finished\n";
  } else if (t.correct == 0) {
    out += fmt::format("geomean speedup vs eager: none over correct problems (none of the {} is correct); 1.00x over "
                       "all with incorrect ones counted as 1.0 (the reference is the answer)\n", t.problems);
  } else {
    out += fmt::format("geomean speedup vs eager: {:.2f}x over the {} correct problems; {:.2f}x over all {} with "
                       "incorrect ones counted as 1.0 (the reference is the answer)\n",
                       t.geomean_speedup_correct, t.correct, t.geomean_speedup_all, t.problems);
  }
  if (t.gpu) {
    out += fmt::format("vs torch.compile: faster on {:.1f}% of the problems; fast_1 {:.3f}, fast_1.5 {:.3f}, fast_2 "
                       "{:.3f}; geomean {:.2f}x over the {} correct problems with a torch.compile time, {:.2f}x over "
                       "all {} (incorrect or unmeasured as 1.0)\n",
                       100 * t.compile_fast_1, t.compile_fast_1, t.compile_fast_1_5, t.compile_fast_2,
                       t.compile_geomean_correct, t.compile_measured, t.compile_geomean_all, t.problems);
  }
  if (t.memory_bound > 0) {
    out += fmt::format("median roofline fraction of the {} memory-bound problems: {:.0f}% of copy bandwidth\n",
                       t.memory_bound, 100 * t.median_memory_roofline_fraction);
  } else {
    out += "median roofline fraction: no correct memory-bound problem with roofline figures\n";
  }
  if (!t.wide_interval.empty()) {
    out += fmt::format("warning: {} problem(s) measured with an interval wider than {:.0f}x ({}); the machine was "
                       "noisy while they ran, so their speedups are uncertain (re-run them, or raise "
                       "--confirm-rounds)\n",
                       t.wide_interval.size(), kWideIntervalRatio, fmt::join(t.wide_interval, ", "));
  }
  return out;
}

}  // namespace kernelevolve::report
