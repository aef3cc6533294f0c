#include "problem/eager_timer.h"

#include <algorithm>
#include <vector>

#include "eval/timing_stats.h"
#include "problem/problem_loader.h"

namespace kernelevolve::problem {

std::function<core::TimingStats()> MakeEagerTimer(WorkerClient& worker, const EagerTimerOptions& options) {
  return [&worker, min_time = options.min_time_seconds,
          max_time = std::max(options.max_time_seconds, options.min_time_seconds),
          flush = options.flush_cache]() {
    BaselineTiming bt;
    nlohmann::json r = worker.Call("time_baseline",
                                   {{"warmup_seconds", 0.05},
                                    {"min_time_seconds", min_time},
                                    {"max_time_seconds", max_time},
                                    {"flush_cache", flush},
                                    {"min_repetitions", bt.min_repetitions},
                                    {"max_repetitions", bt.max_repetitions}},
                                   120);
    core::TimingStats stats = eval::Summarize(r.at("samples_us").get<std::vector<double>>());
    stats.converged = eval::MedianPreciseEnough(stats);  // the worker's stopping rule (baseline.py)
    return stats;
  };
}

}  // namespace kernelevolve::problem
