// Timing loop of the CPU harness: drop-in latency and kernel-only latency, measured in
// alternating blocks so that frequency or thermal drift affects both alike.
#pragma once

#include <optional>
#include <string>

#include "core/timing.h"
#include "platforms/cpu/harness_tensors.h"

namespace kernelevolve::platforms::cpu {

/// When to stop measuring one mode.
struct TimingBudget {
  double warmup_seconds = 0.05;    // warm-up per mode (and at least kMinWarmupCalls calls)
  double min_time_seconds = 0.25;  // stop once the timed calls sum to this...
  int min_repetitions = 10;        // ...and at least this many calls were timed,
  int max_repetitions = 2000;      // or at this many calls regardless of time
};

struct TimingOutcome {
  core::TimingStats latency;      // drop-in: outputs posix_memalign'ed and freed per call
  core::TimingStats kernel_only;  // outputs preallocated in `outputs`
  std::optional<std::string> error;  // the kernel failed during timing (rc != 0, threw)
};

/// Times the kernel on `inputs` (one seed's fixtures). Each sample is one call,
/// std::chrono::steady_clock around it, in microseconds; drop-in samples include the
/// allocation and release of every output, as eager PyTorch allocates its results.
/// Statistics: eval::Summarize.
TimingOutcome TimeKernel(EntryFn entry, TensorSet& inputs, TensorSet& outputs,
                         const TimingBudget& budget);

}  // namespace kernelevolve::platforms::cpu
