// Timing loop of the CPU harness: drop-in latency and kernel-only latency, measured in
// alternating blocks so that frequency or thermal drift affects both alike, with a
// random subset of the timed calls verified (docs/fitness.md).
#pragma once

#include <optional>
#include <string>

#include "core/timing.h"
#include "platforms/cpu/harness_tensors.h"

namespace kernelevolve::platforms::cpu {

/// When to stop measuring one mode (adaptive stopping, issue 4). A mode first times
/// calls until min_time_seconds of timed calls and min_repetitions are reached; from
/// then on it stops as soon as its 95% interval of the median is tight
/// (eval::MedianPreciseEnough with target_relative_half_width; checked after every
/// block of calls), or when the timing loop's wall time reaches max_time_seconds, or at
/// max_repetitions calls. TimingStats::converged tells which: true only for the first.
/// With cache flushing, min_time_seconds counts the loop's wall time (flushes included)
/// instead: a cold call of a microsecond costs a flush of twice the last-level cache
/// (about 20 ms for the 105 MB L3 of a Sapphire Rapids socket), so 0.25 s of timed calls
/// would take thousands of flushes, minutes of wall time.
struct TimingBudget {
  double warmup_seconds = 0.05;    // warm-up per mode (and at least kMinWarmupCalls calls)
  double min_time_seconds = 0.25;  // time at least until the timed calls sum to this...
  int min_repetitions = 10;        // ...and at least this many calls were timed;
  int max_repetitions = 2000;      // stop at this many calls regardless of precision
  /// Wall-time cap of the whole timing loop (both modes, warm-up, flushes and verified
  /// calls included); reached before the interval is tight -> converged = false.
  double max_time_seconds = 2.0;
  double target_relative_half_width = 0.02;  // eval::kTargetRelativeHalfWidth
  /// Also time the kernel-only mode (outputs preallocated). Off for the interleaved
  /// confirmation rounds, which compare drop-in latency alone: half the calls.
  bool kernel_only = true;
};

class CacheFlusher;

/// The stopping rule of one mode: `n` calls timed, `timed_seconds` their sum,
/// `wall_seconds` since the timing loop began, `precise` = eval::MedianPreciseEnough
/// of the samples so far. True at max_repetitions; false before min_repetitions and
/// min_time_seconds; then true once precise or at max_time_seconds of wall time.
bool StopTiming(const TimingBudget& budget, int n, double timed_seconds, double wall_seconds, bool precise);

/// Where the timed calls get their inputs, and how some of them are checked.
/// Every timed call runs on input set 0: one set of buffers, as eager PyTorch is timed
/// in the worker on one set (seed 0's), so both sides see the same cache state (set 0
/// starts with seed 0's values; a verified call may reload it with another seed's).
/// Rotating over the seeds' sets instead made a candidate with 8 MB inputs read 24 MB
/// per round, past the L3, while eager read 8 MB from the L3 (sum over dim 1 of
/// [32, 256, 256] float32: 99 us on one set, 431 us rotating over three, on the 2-vCPU
/// development VM). A verified call (about one in kVerifyEvery, at random, and at
/// least kMinVerifiedCalls per mode) checks the outputs after the call (Verify,
/// untimed; every call's outputs are poisoned first); every other verified call first
/// reloads set 0 with another seed's inputs (Refresh, untimed: same address, new
/// contents, so a kernel memoizing by input address is caught), the others keep the
/// contents (so a kernel that skips work on inputs it has seen is caught).
class CallVerifier {
 public:
  virtual ~CallVerifier() = default;
  /// The timed input set (set 0).
  virtual TensorSet& Inputs() = 0;
  /// Loads fresh contents (another seed's inputs) into the timed input set.
  virtual void Refresh() = 0;
  /// Checks `outputs` of a call on the timed input set; nullopt when correct, else the
  /// rejection reason.
  virtual std::optional<std::string> Verify(const DLTensor* outputs) = 0;
};

inline constexpr int kVerifyEvery = 8;
inline constexpr int kMinVerifiedCalls = 2;

struct TimingOutcome {
  core::TimingStats latency;      // drop-in: outputs posix_memalign'ed and freed per call
  core::TimingStats kernel_only;  // outputs preallocated in `outputs`
  std::optional<std::string> error;      // the kernel failed during timing (rc != 0, threw)
  std::optional<std::string> rejection;  // a verified timed call was wrong
  int verified_calls = 0;                // over both modes
};

/// Times the kernel. Each sample is one call, std::chrono::steady_clock around it, in
/// microseconds; drop-in samples include the allocation and release of every output, as
/// eager PyTorch allocates its results. Before every call the outputs are filled with
/// poison, untimed (so a kernel cannot skip work by finding its previous result still
/// there); a verified call's reload and checking are not timed either. Statistics:
/// eval::Summarize.
/// `flusher`: when not null, Flush() runs before every timed call, untimed (cold
/// caches for every sample; cache_flush.h); warm-up calls are not flushed.
TimingOutcome TimeKernel(EntryFn entry, CallVerifier& verifier, TensorSet& outputs,
                         const TimingBudget& budget, CacheFlusher* flusher = nullptr);

}  // namespace kernelevolve::platforms::cpu
