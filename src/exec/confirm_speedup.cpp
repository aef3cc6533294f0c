#include "exec/confirm_speedup.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/status.h"
#include "eval/timing_stats.h"

namespace kernelevolve::exec {

Confirmation ConfirmSpeedup(const std::function<core::TimingStats()>& time_baseline,
                            platforms::Platform& platform, const core::Problem& problem,
                            const core::Candidate& candidate, platforms::RunOptions run_options,
                            int rounds) {
  Confirmation out;
  platforms::BuildResult build = platform.Build(candidate);
  if (build.status != core::Status::kOk) {
    out.message = "rebuild failed: " + build.message;
    return out;
  }
  run_options.time_kernel_only = false;  // the rounds compare drop-in latency only
  std::vector<double> base_medians;
  std::vector<double> cand_medians;
  std::vector<double> clean_ratios;
  for (int r = 0; r < rounds; ++r) {
    core::TimingStats base;
    platforms::RunResult run;
    std::string disturbed;
    for (int attempt = 0; attempt < 2; ++attempt) {
      const auto eager_reason = platform.DegradedDuring([&] { base = time_baseline(); }, run_options.threads);
      run = platform.Run(build, problem, run_options);
      if (run.status != core::Status::kOk || !run.correct || !run.latency.Measured()) {
        out.message = fmt::format("round {}: candidate {}: {}", r + 1, core::StatusName(run.status), run.message);
        return out;
      }
      disturbed = eager_reason ? "eager: " + *eager_reason : run.degraded ? "kernel: " + run.degraded_reason : "";
      if (disturbed.empty() || attempt == 1) break;
      ++out.retaken_rounds;
    }
    if (!disturbed.empty() && out.disturbed_rounds++ == 0) {
      out.disturbed_reason = fmt::format("round {}: {}", r + 1, disturbed);
    }
    base_medians.push_back(base.median_us);
    cand_medians.push_back(run.latency.median_us);
    out.ratios.push_back(eval::RobustSpeedupOf(base, run.latency).value);
    if (disturbed.empty()) clean_ratios.push_back(out.ratios.back());
  }
  out.rounds = rounds;
  const size_t needed = static_cast<size_t>(std::max(kMinCleanRounds, (rounds + 1) / 2));
  out.from_clean_rounds = out.disturbed_rounds == 0 || clean_ratios.size() >= needed;
  out.speedup = eval::SpeedupFromRatios(out.disturbed_rounds > 0 && out.from_clean_rounds ? clean_ratios : out.ratios);
  out.baseline = eval::Summarize(base_medians);
  out.candidate = eval::Summarize(cand_medians);
  out.done = true;
  out.message = "ok";
  return out;
}

}  // namespace kernelevolve::exec
