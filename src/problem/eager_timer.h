// Times the loaded problem's eager PyTorch reference through the worker, once per call.
#pragma once

#include <functional>

#include "core/timing.h"
#include "problem/worker_client.h"

namespace kernelevolve::problem {

/// How one eager measurement runs (the worker's time_baseline request, baseline.py):
/// 0.05 s warm-up, then timed calls for at least `min_time_seconds` and until the
/// median's 95% interval is within 2% of it or `max_time_seconds` passed (the
/// candidates' stopping rule); `flush_cache` writes 2x the last-level cache before
/// every timed call.
struct EagerTimerOptions {
  double min_time_seconds = 0.2;
  double max_time_seconds = 2.0;
  bool flush_cache = false;
};

/// A timer of eager PyTorch for `worker`, whose problem must already be loaded
/// (problem::LoadProblem); `worker` must outlive it. Each call returns the summary
/// (microseconds per call) of one fresh measurement, `converged` set by the
/// candidates' rule (eval::MedianPreciseEnough). Throws WorkerError or
/// WorkerLostError when the worker fails (120 s limit per call).
std::function<core::TimingStats()> MakeEagerTimer(WorkerClient& worker, const EagerTimerOptions& options);

}  // namespace kernelevolve::problem
