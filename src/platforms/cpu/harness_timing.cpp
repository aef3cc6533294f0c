#include "platforms/cpu/harness_timing.h"

#include <chrono>
#include <cstdlib>
#include <random>
#include <vector>

#include "eval/timing_stats.h"
#include "platforms/cpu/cache_flush.h"

namespace kernelevolve::platforms::cpu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMinWarmupCalls = 2;
// A block of one mode ends after this much timed time or this many calls, whichever
// comes first; then the other mode runs a block. Short blocks interleave the modes
// finely without paying a switch per call.
constexpr double kBlockSeconds = 0.01;
constexpr int kBlockCalls = 64;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

/// What went wrong in one call, if anything.
struct CallStatus {
  std::optional<std::string> error;
  std::optional<std::string> rejection;
  bool Failed() const { return error || rejection; }
};

/// One timing mode: how a call is made and the samples gathered so far.
class Mode {
 public:
  Mode(EntryFn entry, CallVerifier& verifier, TensorSet& outputs, bool drop_in, std::mt19937& rng,
       CacheFlusher* flusher, Clock::time_point loop_start)
      : entry_(entry), verifier_(verifier), outputs_(outputs), drop_in_(drop_in), rng_(rng), flusher_(flusher),
        loop_start_(loop_start) {
    views_.assign(outputs.Views(), outputs.Views() + outputs.Count());
  }

  /// One call on input set 0; returns its timed duration in seconds. `flush`: flush
  /// the caches first (untimed). The outputs are poisoned before every call (untimed),
  /// not only before verified ones: the inputs repeat from call to call, so a kernel
  /// could otherwise return at once whenever it finds its previous result still in
  /// its output (the drop-in allocator hands back the block it freed), computing only
  /// on the poisoned, verified calls.
  double Call(bool verify, CallStatus* status, bool flush = true) {
    TensorSet& inputs = verifier_.Inputs();  // set 0, as eager PyTorch is timed (CallVerifier)
    if (verify) {
      // Alternately new contents at the same address (catches memoizing by address)
      // and the same contents (catches skipping work on inputs seen before).
      if (verified_ % 2 == 0) verifier_.Refresh();
      ++verified_;
    }
    double seconds = 0;
    if (drop_in_) {
      const auto start = Clock::now();
      for (int i = 0; i < outputs_.Count(); ++i) {
        void* p = nullptr;
        if (posix_memalign(&p, kBufferAlignment, std::max(outputs_.NumBytes(i), kBufferAlignment)) != 0) {
          ExitOutOfMemory();
        }
        views_[static_cast<std::size_t>(i)].data = p;
      }
      seconds += Seconds(start, Clock::now());
      outputs_.FillPoison(views_.data());
    } else {
      outputs_.FillPoison();
    }
    if (flush && flusher_ != nullptr) flusher_->Flush();
    auto start = Clock::now();
    DLTensor* out = drop_in_ ? views_.data() : outputs_.Views();
    status->error = CallEntry(entry_, inputs, out, outputs_.Count());
    seconds += Seconds(start, Clock::now());
    if (verify && !status->error) status->rejection = verifier_.Verify(out);
    if (drop_in_) {
      start = Clock::now();
      for (auto& view : views_) std::free(view.data);
      seconds += Seconds(start, Clock::now());
    }
    return seconds;
  }

  /// The stopping rule of TimingBudget. The precision test uses the state after the
  /// last completed block (UpdatePrecision), so calls are not re-sorted one by one.
  bool Done(const TimingBudget& budget) const {
    const double wall = Seconds(loop_start_, Clock::now());
    // Flushing: the minimum time is of wall time (TimingBudget says why).
    return StopTiming(budget, static_cast<int>(samples_us_.size()),
                      flusher_ != nullptr ? wall : timed_seconds_, wall, converged_);
  }

  void UpdatePrecision(const TimingBudget& budget) {
    converged_ = eval::MedianPreciseEnough(eval::Summarize(samples_us_), budget.target_relative_half_width);
  }

  void Warmup(const TimingBudget& budget, CallStatus* status) {
    double spent = 0;
    for (int calls = 0; !status->Failed() && (calls < kMinWarmupCalls || spent < budget.warmup_seconds); ++calls) {
      spent += Call(false, status, /*flush=*/false);
    }
  }

  void RunBlock(const TimingBudget& budget, CallStatus* status) {
    double block = 0;
    for (int calls = 0; calls < kBlockCalls && block < kBlockSeconds && !Done(budget); ++calls) {
      bool verify = std::uniform_int_distribution<int>(1, kVerifyEvery)(rng_) == 1;
      Record(Call(verify, status));
      if (status->Failed()) return;
      block += samples_us_.back() * 1e-6;
    }
    UpdatePrecision(budget);
  }

  /// Verified calls until at least kMinVerifiedCalls were made (their time is sampled).
  void TopUpVerified(CallStatus* status) {
    while (!status->Failed() && verified_ < kMinVerifiedCalls) Record(Call(true, status));
  }

  /// converged: the precision target held when the mode stopped (the verified top-up
  /// calls, if any, are included in the figures).
  core::TimingStats Stats() const {
    core::TimingStats stats = eval::Summarize(samples_us_);
    stats.converged = converged_;
    return stats;
  }
  int Verified() const { return verified_; }

 private:
  void Record(double seconds) {
    timed_seconds_ += seconds;
    samples_us_.push_back(seconds * 1e6);
  }

  EntryFn entry_;
  CallVerifier& verifier_;
  TensorSet& outputs_;
  bool drop_in_;
  std::mt19937& rng_;
  CacheFlusher* flusher_;
  Clock::time_point loop_start_;
  bool converged_ = false;
  std::vector<DLTensor> views_;  // drop-in: fresh data pointers per call
  std::vector<double> samples_us_;
  double timed_seconds_ = 0;
  int verified_ = 0;
};

}  // namespace

bool StopTiming(const TimingBudget& budget, int n, double timed_seconds, double wall_seconds, bool precise) {
  if (n >= budget.max_repetitions) return true;
  if (n < budget.min_repetitions || timed_seconds < budget.min_time_seconds) return false;
  return precise || wall_seconds >= budget.max_time_seconds;
}

TimingOutcome TimeKernel(EntryFn entry, CallVerifier& verifier, TensorSet& outputs, const TimingBudget& budget,
                         CacheFlusher* flusher) {
  TimingOutcome outcome;
  // Random positions: a kernel cannot tell which calls are checked by counting them.
  std::mt19937 rng(std::random_device{}());
  const auto loop_start = Clock::now();
  Mode drop_in(entry, verifier, outputs, /*drop_in=*/true, rng, flusher, loop_start);
  Mode kernel_only(entry, verifier, outputs, /*drop_in=*/false, rng, flusher, loop_start);
  CallStatus status;
  const bool both = budget.kernel_only;
  drop_in.Warmup(budget, &status);
  if (both && !status.Failed()) kernel_only.Warmup(budget, &status);
  while (!status.Failed() && (!drop_in.Done(budget) || (both && !kernel_only.Done(budget)))) {
    if (!drop_in.Done(budget)) drop_in.RunBlock(budget, &status);
    if (both && !status.Failed() && !kernel_only.Done(budget)) kernel_only.RunBlock(budget, &status);
  }
  drop_in.TopUpVerified(&status);
  if (both) kernel_only.TopUpVerified(&status);
  outcome.verified_calls = drop_in.Verified() + kernel_only.Verified();
  outcome.error = status.error;
  outcome.rejection = status.rejection;
  if (status.Failed()) return outcome;
  outcome.latency = drop_in.Stats();
  if (both) outcome.kernel_only = kernel_only.Stats();
  return outcome;
}

}  // namespace kernelevolve::platforms::cpu
