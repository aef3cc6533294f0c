#include "report/run_summary.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/candidate.h"
#include "core/error.h"
#include "core/status.h"
#include "eval/result_json.h"
#include "eval/roofline.h"
#include "eval/timing_stats.h"

namespace kernelevolve::report {
namespace {

/// The eager measurement `e`'s speedup was scored against.
const core::TimingStats& SpeedupBaseline(const RunSummary& s, const core::Evaluation& e) {
  if (s.speedup_baseline.Measured()) return s.speedup_baseline;
  return e.paired_baseline.Measured() ? e.paired_baseline : s.eager_baseline;
}

nlohmann::json BestJson(const RunSummary& s) {
  const search::Node& n = *s.best;
  const core::Evaluation& e = n.evaluation;
  nlohmann::json best = {
      {"node_id", n.id},
      {"correct", e.correct},
      {"template", n.candidate.template_name},
      {"knobs", n.candidate.knobs},
      {"rationale", n.candidate.rationale},
      {"latency_us", eval::TimingStatsToJson(e.latency)},
      {"kernel_only_us", eval::TimingStatsToJson(e.kernel_only)},
      {"baseline_eager_us", eval::TimingStatsToJson(SpeedupBaseline(s, e))},
      {"speedup_vs_eager", e.speedup_vs_eager.value},
      {"speedup_vs_eager_spread", {e.speedup_vs_eager.ci_low, e.speedup_vs_eager.ci_high}},
      {"speedup_vs_eager_of_medians",
       eval::SpeedupOf(e.paired_baseline.Measured() ? e.paired_baseline : s.eager_baseline, e.latency).value},
      {"source_path", s.best_source_path.string()},
      {"roofline", eval::RooflineToJson(e.roofline)},
  };
  const auto& c = s.confirmation;
  best["confirmed"] = {{"done", c.done},
                       {"message", c.message},
                       {"rounds", c.rounds},
                       {"speedup_vs_eager", c.speedup.value},
                       {"ci95", {c.speedup.ci_low, c.speedup.ci_high}},
                       {"ratios", c.ratios},
                       {"clearly_faster", c.VerifiedFaster()},
                       {"disturbed_rounds", c.disturbed_rounds},
                       {"retaken_rounds", c.retaken_rounds},
                       {"disturbed_reason", c.disturbed_reason},
                       {"from_clean_rounds", c.from_clean_rounds}};
  return best;
}

/// The stop reason in words for the console ("budget" -> "evaluation budget used up").
std::string StopReasonText(const std::string& reason) {
  if (reason == "budget") return "evaluation budget used up";
  if (reason == "time_limit") return "time limit reached";
  if (reason == "exhausted") return "every variant the operator could propose was evaluated";
  if (reason == "stall") return "no improvement for --stall evaluations";
  if (reason == "target_reached") return "target speedup reached";
  if (reason == "interrupted") return "interrupted (resumable)";
  if (reason == "cost_cap") return "LLM cost cap (--max-cost) reached";
  if (reason == "llm_unreachable") return "the LLM server did not answer (see the error line and the llm_calls table)";
  return reason;
}

}  // namespace

nlohmann::json ProblemRooflineJson(const eval::WorkEstimate& work, const core::MachineContext& machine) {
  const eval::MachinePeaks peaks{machine.copy_bandwidth_gbps, machine.peak_gflops};
  // The bound and the peak-speed time of one call: ComputeRoofline at 1 s per call
  // classifies; the time follows from the bounding peak.
  const core::RooflineFigures at_one_second = eval::ComputeRoofline(work, 1.0, peaks);
  double roofline_time_us = 0;
  if (at_one_second.bound == "memory") {
    roofline_time_us = static_cast<double>(work.bytes) / (peaks.copy_bandwidth_gbps * 1e9) * 1e6;
  } else if (at_one_second.bound == "compute" && peaks.peak_gflops > 0) {
    roofline_time_us = work.flops / (peaks.peak_gflops * 1e9) * 1e6;
  }
  return {{"bytes_per_call", work.bytes},
          {"flops_per_call", work.flops},
          {"arithmetic_intensity", at_one_second.arithmetic_intensity},
          {"assumed_ops", work.assumed_ops},
          {"copy_bandwidth_gbps", peaks.copy_bandwidth_gbps},
          {"peak_gflops", peaks.peak_gflops},
          {"machine_balance", eval::MachineBalance(peaks)},
          {"bound", at_one_second.bound},
          {"roofline_time_us", roofline_time_us}};
}

nlohmann::json ResultJson(const RunSummary& s) {
  nlohmann::json doc = {
      {"problem", s.problem},
      {"problem_path", s.problem_path},
      {"target", s.target},
      {"status", s.status},
      {"stop_reason", s.stop_reason},
      {"evaluations", s.evaluations},
      {"elapsed_seconds", s.elapsed_seconds},
      {"overrides", s.overrides},
      {"baseline_eager_us", eval::TimingStatsToJson(s.eager_baseline)},
      {"phase_seconds", s.phases.ToJson()},
      {"machine", core::MachineToJson(s.machine)},
      {"database", s.database_path.string()},
  };
  if (!s.error.empty()) doc["error"] = {{"message", s.error}, {"log", s.error_log}};
  doc["best"] = s.best ? BestJson(s) : nlohmann::json(nullptr);
  if (!s.best) {
    // What went wrong, as the summary table says it (bench shows it per problem).
    std::string failures = FailureSummary(s.nodes);
    const auto first = failures.find_first_not_of(' ');
    failures = first == std::string::npos ? "" : failures.substr(first);
    while (!failures.empty() && failures.back() == '\n') failures.pop_back();
    if (!failures.empty()) doc["failures"] = failures;
  }
  if (!s.warm_start.is_null()) doc["warm_start"] = s.warm_start;  // knowledge base (issue 8)
  if (s.work) doc["roofline"] = ProblemRooflineJson(*s.work, s.machine);  // issue 5
  return doc;
}

namespace {

/// std::strerror(errno), or "unknown reason" when errno is 0.
std::string ErrnoText() { return errno != 0 ? std::strerror(errno) : "unknown reason"; }

}  // namespace

void WriteTextAtomic(const std::filesystem::path& path, const std::string& text) {
  auto tmp = path;
  tmp += ".tmp";
  {
    // errno after a failed open or write names the reason (permission, no space, no
    // such folder); std::ofstream itself keeps none.
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw core::IoError(fmt::format("cannot write {}: {}", tmp.string(), ErrnoText()));
    out << text;
    if (!out.flush()) throw core::IoError(fmt::format("cannot write {}: {}", tmp.string(), ErrnoText()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw core::IoError(fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), ec.message()));
}

void WriteJsonAtomic(const std::filesystem::path& path, const nlohmann::json& doc) {
  WriteTextAtomic(path, doc.dump(2) + "\n");
}

std::string PeakAboveNote(const core::RooflineFigures& r, const core::MachineContext& machine, bool gpu) {
  // No kernel outruns the CPU's FMA peak; a GPU's torch.mm peak is cuBLAS's, which a
  // kernel may beat. 1.2: the FMA probe's own run-to-run spread stays well inside it.
  if (gpu || r.bound != "compute" || r.fraction <= 1.2) return "";
  return fmt::format(
      "note: {:.0f}% of the FMA peak is more than this machine can do: that peak ({:.0f} GFLOP/s{}) was likely "
      "measured while the machine was busy (re-measure with --remeasure-machine), or the kernel skips work the "
      "FLOP estimate counts (a triangular mask; docs/measuring.md)\n",
      100 * r.fraction, machine.peak_gflops,
      machine.peaks_measured_utc.empty() ? "" : ", measured " + machine.peaks_measured_utc);
}

std::string FailureSummary(const std::vector<search::Node>& nodes) {
  std::map<std::string, int> counts;
  const search::Node* example = nullptr;
  for (const auto& n : nodes) {
    const core::Evaluation& e = n.evaluation;
    if (e.correct) continue;
    const core::Status status = e.status == core::Status::kOk ? core::Status::kIncorrect : e.status;
    ++counts[std::string(core::StatusName(status))];
    if (!example || (example->evaluation.message.empty() && !e.message.empty())) example = &n;
  }
  if (counts.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [status, count] : counts) parts.push_back(fmt::format("{} {}", count, status));
  std::string message = example->evaluation.message;
  if (message.size() > 300) message = message.substr(0, 300) + "...";
  return fmt::format("  {}; e.g. node {} ({}): {}\n", fmt::join(parts, ", "), example->id,
                     example->candidate.template_name.empty() ? example->candidate.operator_name
                                                              : example->candidate.template_name,
                     message.empty() ? "(no message)" : message);
}

std::string ConfirmedVerdict(const exec::Confirmation& c) {
  if (!c.from_clean_rounds) return "not verified (machine disturbed)";
  return c.VerifiedFaster() ? "verified faster" : "not clearly faster";
}

std::string ConfirmedLine(const exec::Confirmation& c) {
  if (!c.done) return "";
  std::string rounds = fmt::format("{} interleaved rounds", c.rounds);
  std::string verdict = ConfirmedVerdict(c);
  if (!c.from_clean_rounds) {
    verdict = fmt::format("not verified: the machine was disturbed in {} of {} rounds, even after a retake ({})",
                          c.disturbed_rounds, c.rounds, c.disturbed_reason);
  } else if (c.disturbed_rounds > 0) {
    rounds += fmt::format(" ({} the machine probe flagged left out: {})", c.disturbed_rounds, c.disturbed_reason);
  }
  return fmt::format("confirmed: {:.2f}x vs eager, 95% interval [{:.2f}, {:.2f}] over {} -> {}\n", c.speedup.value,
                     c.speedup.ci_low, c.speedup.ci_high, rounds, verdict);
}

std::string DisagreementWarning(const core::Speedup& search, const exec::Confirmation& confirmation) {
  const double found = search.value;
  const double confirmed = confirmation.speedup.value;
  if (!confirmation.done || !(found > 0) || !(confirmed > 0)) return "";
  const double apart = std::max(found / confirmed, confirmed / found);
  if (apart <= kDisagreementRatio) return "";
  // A confirmation the machine probe found disturbed is no better evidence than the search.
  const char* advice = confirmation.from_clean_rounds && confirmation.disturbed_rounds == 0
                           ? "trust the confirmed figure, or rerun on a quiet machine"
                           : "the probe flagged confirmation rounds too, so neither figure holds: rerun on a quiet "
                             "machine";
  return fmt::format(
      "warning: the search measured {:.2f}x and the interleaved confirmation {:.2f}x ({:.1f}x apart): the machine "
      "was disturbed while one of them ran; {}\n",
      found, confirmed, apart, advice);
}

std::string LargeSpeedupWarning(double speedup) {
  if (!(speedup > kLargeSpeedup)) return "";
  return fmt::format(
      "warning: {:.0f}x over eager PyTorch is more than kernels usually gain; on a busy machine eager can be "
      "disturbed in every timing of a run (docs/measuring.md): check it with `kernelevolve eval` on a quiet "
      "machine\n",
      speedup);
}

std::string SummaryTable(const RunSummary& s, int max_rows) {
  std::string out = fmt::format("\n{} on {}: {} evaluations in {:.1f} s, stopped: {}\n",
                                s.problem, s.target, s.evaluations, s.elapsed_seconds, StopReasonText(s.stop_reason));
  if (!s.machine.isa.level.empty()) out += fmt::format("machine: {}\n", core::MachineSummary(s.machine));
  out += fmt::format("eager PyTorch ({}): median {:.1f} us [{:.1f}, {:.1f}] (n={})\n\n",
                     s.target == "cpu"  ? fmt::format("{} threads", s.machine.threads)
                     : s.gpu_interpret ? std::string(kInterpretWording)
                                       : std::string("on the GPU"),
                     s.eager_baseline.median_us, s.eager_baseline.ci_low_us,
                     s.eager_baseline.ci_high_us, s.eager_baseline.n);
  const auto& b = s.eager_baseline;
  const auto& used = s.speedup_baseline;
  if (used.Measured() && b.Measured()) {
    out += fmt::format("speedups use eager's fastest call in the run: {:.1f} us (its fastest call at load: {:.1f} us)\n",
                       used.min_us, b.min_us);
    if (used.min_us > 0 && b.min_us / used.min_us > kDisagreementRatio) {
      out += fmt::format("warning: eager's fastest call at load was {:.1f}x slower than later in the run: the machine "
                         "was busy when the problem was loaded\n", b.min_us / used.min_us);
    }
    out += "\n";
  }
  if (b.Measured() && b.p10_us > 0 && b.p90_us / b.p10_us > 1.5) {
    out += fmt::format(
        "warning: eager timings spread widely (p90/p10 = {:.1f}); the machine looks busy, so "
        "speedups are uncertain: rerun on a quiet machine, with --threads 1 or with "
        "--omp-wait-policy passive, or trust only the confirmed interval\n\n",
        b.p90_us / b.p10_us);
  }
  std::vector<const search::Node*> rows;
  for (const auto& n : s.nodes) rows.push_back(&n);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->evaluation.fitness > b->evaluation.fitness;
  });
  out += fmt::format("{:>5} {:>6} {:<16} {:<17} {:>12} {:>12} {:>9} {:>18}  {}\n", "node", "parent",
                     "template", "status", "median us", "kernel us", "speedup", "roofline", "knobs");
  int shown = 0;
  for (const auto* n : rows) {
    if (shown++ >= max_rows) break;
    const auto& e = n->evaluation;
    std::string speed = e.fitness > 0 ? fmt::format("{:.2f}x", e.fitness) : "-";
    std::string median = e.latency.Measured() ? fmt::format("{:.1f}", e.latency.median_us) : "-";
    std::string kernel = e.kernel_only.Measured() ? fmt::format("{:.1f}", e.kernel_only.median_us) : "-";
    std::string parent = n->parent_id >= 0 ? std::to_string(n->parent_id)
                         : core::IsWarmStartSeed(n->candidate) ? "prior" : "root";
    out += fmt::format("{:>5} {:>6} {:<16} {:<17} {:>12} {:>12} {:>9} {:>18}  {}\n", n->id, parent,
                       n->candidate.template_name, core::StatusName(e.status), median, kernel,
                       speed, eval::RooflineShort(e.roofline), n->candidate.knobs.dump());
  }
  if (static_cast<int>(rows.size()) > max_rows) {
    out += fmt::format("  ... {} more in {}\n", rows.size() - max_rows, s.database_path.string());
  }
  out += "\n";
  if (s.status == "error") {
    out += fmt::format("error: {}\n", s.error);
  } else if (!s.best) {
    out += "no correct candidate found\n" + FailureSummary(s.nodes);
  } else {
    const auto& e = s.best->evaluation;
    out += fmt::format("best: node {} ({}), {:.2f}x vs eager [{:.2f}, {:.2f}] during the search\n",
                       s.best->id, s.best->candidate.template_name, e.speedup_vs_eager.value,
                       e.speedup_vs_eager.ci_low, e.speedup_vs_eager.ci_high);
    const auto& c = s.confirmation;
    if (c.done) {
      out += ConfirmedLine(c);
    } else {
      out += fmt::format("confirmation not done: {}\n",
                         c.message.empty() ? "skipped (--confirm-rounds 0 or interrupted)" : c.message);
    }
    out += DisagreementWarning(e.speedup_vs_eager, c);
    out += LargeSpeedupWarning(c.done ? c.speedup.value : e.speedup_vs_eager.value);
    if (e.roofline.Known()) {
      // GPU targets measure a torch.mm peak (cli/gpu_target.h), the CPU an FMA loop.
      const bool gpu = s.target != "cpu";
      out += fmt::format("roofline: {} ({:.1f} GB/s, {:.2f} GFLOP/s kernel-only; {} copy {:.1f} GB/s, "
                         "{} {:.0f} GFLOP/s)\n",
                         eval::RooflineShort(e.roofline), e.roofline.achieved_gbps, e.roofline.achieved_gflops,
                         gpu ? "device" : "machine", s.machine.copy_bandwidth_gbps,
                         gpu ? "torch.mm peak" : "FMA peak", s.machine.peak_gflops);
      out += PeakAboveNote(e.roofline, s.machine, gpu);
    }
    out += fmt::format("kernel: {}\n", s.best_source_path.string());
  }
  return out;
}

}  // namespace kernelevolve::report
