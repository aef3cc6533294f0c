#include "platforms/cpu/harness_timing.h"

#include <chrono>
#include <cstdlib>
#include <random>
#include <vector>

#include "eval/timing_stats.h"

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
  Mode(EntryFn entry, CallVerifier& verifier, TensorSet& outputs, bool drop_in, std::mt19937& rng)
      : entry_(entry), verifier_(verifier), outputs_(outputs), drop_in_(drop_in), rng_(rng) {
    views_.assign(outputs.Views(), outputs.Views() + outputs.Count());
  }

  /// One call on the next input set; returns its timed duration in seconds.
  double Call(bool verify, CallStatus* status) {
    const int set = static_cast<int>(calls_++ % verifier_.NumInputSets());
    TensorSet& inputs = verifier_.InputSet(set);
    if (verify) {
      verifier_.Refresh(set);
      if (!drop_in_) outputs_.FillPoison();
      ++verified_;
    }
    double seconds = 0;
    auto start = Clock::now();
    if (drop_in_) {
      for (int i = 0; i < outputs_.Count(); ++i) {
        void* p = nullptr;
        if (posix_memalign(&p, kBufferAlignment, std::max(outputs_.NumBytes(i), kBufferAlignment)) != 0) {
          ExitOutOfMemory();
        }
        views_[static_cast<std::size_t>(i)].data = p;
      }
      if (verify) {
        seconds += Seconds(start, Clock::now());
        outputs_.FillPoison(views_.data());
        start = Clock::now();
      }
    }
    DLTensor* out = drop_in_ ? views_.data() : outputs_.Views();
    status->error = CallEntry(entry_, inputs, out, outputs_.Count());
    seconds += Seconds(start, Clock::now());
    if (verify && !status->error) status->rejection = verifier_.Verify(set, out);
    if (drop_in_) {
      start = Clock::now();
      for (auto& view : views_) std::free(view.data);
      seconds += Seconds(start, Clock::now());
    }
    return seconds;
  }

  bool Done(const TimingBudget& budget) const {
    int n = static_cast<int>(samples_us_.size());
    if (n >= budget.max_repetitions) return true;
    return n >= budget.min_repetitions && timed_seconds_ >= budget.min_time_seconds;
  }

  void Warmup(const TimingBudget& budget, CallStatus* status) {
    double spent = 0;
    for (int calls = 0; !status->Failed() && (calls < kMinWarmupCalls || spent < budget.warmup_seconds); ++calls) {
      spent += Call(false, status);
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
  }

  /// Verified calls until at least kMinVerifiedCalls were made (their time is sampled).
  void TopUpVerified(CallStatus* status) {
    while (!status->Failed() && verified_ < kMinVerifiedCalls) Record(Call(true, status));
  }

  core::TimingStats Stats() const { return eval::Summarize(samples_us_); }
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
  std::vector<DLTensor> views_;  // drop-in: fresh data pointers per call
  std::vector<double> samples_us_;
  double timed_seconds_ = 0;
  int64_t calls_ = 0;
  int verified_ = 0;
};

}  // namespace

TimingOutcome TimeKernel(EntryFn entry, CallVerifier& verifier, TensorSet& outputs, const TimingBudget& budget) {
  TimingOutcome outcome;
  // Random positions: a kernel cannot tell which calls are checked by counting them.
  std::mt19937 rng(std::random_device{}());
  Mode drop_in(entry, verifier, outputs, /*drop_in=*/true, rng);
  Mode kernel_only(entry, verifier, outputs, /*drop_in=*/false, rng);
  CallStatus status;
  drop_in.Warmup(budget, &status);
  if (!status.Failed()) kernel_only.Warmup(budget, &status);
  while (!status.Failed() && (!drop_in.Done(budget) || !kernel_only.Done(budget))) {
    if (!drop_in.Done(budget)) drop_in.RunBlock(budget, &status);
    if (!status.Failed() && !kernel_only.Done(budget)) kernel_only.RunBlock(budget, &status);
  }
  drop_in.TopUpVerified(&status);
  kernel_only.TopUpVerified(&status);
  outcome.verified_calls = drop_in.Verified() + kernel_only.Verified();
  outcome.error = status.error;
  outcome.rejection = status.rejection;
  if (status.Failed()) return outcome;
  outcome.latency = drop_in.Stats();
  outcome.kernel_only = kernel_only.Stats();
  return outcome;
}

}  // namespace kernelevolve::platforms::cpu
