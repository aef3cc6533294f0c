#include "platforms/cpu/harness_timing.h"

#include <chrono>
#include <cstdlib>
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

/// One timing mode: how a call is made and the samples gathered so far.
class Mode {
 public:
  Mode(EntryFn entry, TensorSet& inputs, TensorSet& outputs, bool drop_in)
      : entry_(entry), inputs_(inputs), outputs_(outputs), drop_in_(drop_in) {
    if (drop_in_) {
      views_.assign(outputs.Views(), outputs.Views() + outputs.Count());
    }
  }

  /// One call; returns its duration in seconds, or sets `error`.
  double Call(std::optional<std::string>* error) {
    if (!drop_in_) {
      auto start = Clock::now();
      auto failure = CallEntry(entry_, inputs_, outputs_.Views(), outputs_.Count());
      double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (failure) *error = failure;
      return seconds;
    }
    auto start = Clock::now();
    for (int i = 0; i < outputs_.Count(); ++i) {
      void* p = nullptr;
      if (posix_memalign(&p, kBufferAlignment, std::max(outputs_.NumBytes(i), kBufferAlignment)) != 0) {
        ExitOutOfMemory();
      }
      views_[static_cast<std::size_t>(i)].data = p;
    }
    auto failure = CallEntry(entry_, inputs_, views_.data(), outputs_.Count());
    for (auto& view : views_) std::free(view.data);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (failure) *error = failure;
    return seconds;
  }

  bool Done(const TimingBudget& budget) const {
    int n = static_cast<int>(samples_us_.size());
    if (n >= budget.max_repetitions) return true;
    return n >= budget.min_repetitions && timed_seconds_ >= budget.min_time_seconds;
  }

  void Warmup(const TimingBudget& budget, std::optional<std::string>* error) {
    double spent = 0;
    for (int calls = 0; !*error && (calls < kMinWarmupCalls || spent < budget.warmup_seconds); ++calls) {
      spent += Call(error);
    }
  }

  void RunBlock(const TimingBudget& budget, std::optional<std::string>* error) {
    double block = 0;
    for (int calls = 0; calls < kBlockCalls && block < kBlockSeconds && !Done(budget); ++calls) {
      double seconds = Call(error);
      if (*error) return;
      block += seconds;
      timed_seconds_ += seconds;
      samples_us_.push_back(seconds * 1e6);
    }
  }

  core::TimingStats Stats() const { return eval::Summarize(samples_us_); }

 private:
  EntryFn entry_;
  TensorSet& inputs_;
  TensorSet& outputs_;
  bool drop_in_;
  std::vector<DLTensor> views_;  // drop-in: fresh data pointers per call
  std::vector<double> samples_us_;
  double timed_seconds_ = 0;
};

}  // namespace

TimingOutcome TimeKernel(EntryFn entry, TensorSet& inputs, TensorSet& outputs,
                         const TimingBudget& budget) {
  TimingOutcome outcome;
  Mode drop_in(entry, inputs, outputs, /*drop_in=*/true);
  Mode kernel_only(entry, inputs, outputs, /*drop_in=*/false);
  drop_in.Warmup(budget, &outcome.error);
  if (!outcome.error) kernel_only.Warmup(budget, &outcome.error);
  while (!outcome.error && (!drop_in.Done(budget) || !kernel_only.Done(budget))) {
    if (!drop_in.Done(budget)) drop_in.RunBlock(budget, &outcome.error);
    if (!outcome.error && !kernel_only.Done(budget)) kernel_only.RunBlock(budget, &outcome.error);
  }
  if (outcome.error) return outcome;
  outcome.latency = drop_in.Stats();
  outcome.kernel_only = kernel_only.Stats();
  return outcome;
}

}  // namespace kernelevolve::platforms::cpu
