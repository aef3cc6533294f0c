#include "exec/confirm_speedup.h"

#include <fmt/format.h>

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
  for (int r = 0; r < rounds; ++r) {
    core::TimingStats base = time_baseline();
    platforms::RunResult run = platform.Run(build, problem, run_options);
    if (run.status != core::Status::kOk || !run.correct || !run.latency.Measured()) {
      out.message = fmt::format("round {}: candidate {}: {}", r + 1,
                                core::StatusName(run.status), run.message);
      return out;
    }
    base_medians.push_back(base.median_us);
    cand_medians.push_back(run.latency.median_us);
    out.ratios.push_back(eval::RobustSpeedupOf(base, run.latency).value);
  }
  out.rounds = rounds;
  out.speedup = eval::SpeedupFromRatios(out.ratios);
  out.baseline = eval::Summarize(base_medians);
  out.candidate = eval::Summarize(cand_medians);
  out.done = true;
  out.message = "ok";
  return out;
}

}  // namespace kernelevolve::exec
