// One measurement slot per machine: timed runs never overlap each other, and (by
// default) never overlap a compile either (docs/search.md, "Parallel evaluation").
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include "exec/local_evaluator.h"
#include "platforms/platform.h"

namespace kernelevolve::exec {

/// What may run beside a timed run.
enum class TimingIsolation {
  /// Nothing: a run waits for the compiles in progress to finish, and no compile starts
  /// while a run waits or runs (runs are preferred, so compiles cannot starve them).
  kExclusive,
  /// Compiles go on beside a run; only runs are serialized. Faster, noisier timings.
  kRunsOnly,
};

/// "exclusive" | "runs-only"; throws InvalidInputError naming --timing-isolation.
TimingIsolation TimingIsolationFromName(const std::string& name);
/// Inverse of TimingIsolationFromName.
std::string TimingIsolationName(TimingIsolation mode);

/// A readers-writer gate: compiles share it, a timed run (correctness check, timing and
/// the paired eager timing all count as a run) holds it alone. Thread-safe.
class MeasurementGate {
 public:
  explicit MeasurementGate(TimingIsolation mode = TimingIsolation::kExclusive) : mode_(mode) {}
  TimingIsolation mode() const { return mode_; }

  /// Blocks (exclusive mode) while a run holds or waits for the slot, then counts one
  /// compile in progress until EndBuild.
  void BeginBuild();
  void EndBuild();
  /// Blocks until no other run holds the slot and (exclusive mode) no compile is in
  /// progress; holds the slot until EndRun. Runs waiting keep new compiles out.
  void BeginRun();
  void EndRun();

  /// RAII holders of the gate: BeginBuild/EndBuild and BeginRun/EndRun.
  class BuildScope {
   public:
    explicit BuildScope(MeasurementGate& gate) : gate_(gate) { gate_.BeginBuild(); }
    ~BuildScope() { gate_.EndBuild(); }
    BuildScope(const BuildScope&) = delete;
    BuildScope& operator=(const BuildScope&) = delete;

   private:
    MeasurementGate& gate_;
  };
  class RunScope {
   public:
    explicit RunScope(MeasurementGate& gate) : gate_(gate) { gate_.BeginRun(); }
    ~RunScope() { gate_.EndRun(); }
    RunScope(const RunScope&) = delete;
    RunScope& operator=(const RunScope&) = delete;

   private:
    MeasurementGate& gate_;
  };

 private:
  TimingIsolation mode_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int builds_active_ = 0;
  int runs_waiting_ = 0;
  bool run_active_ = false;
};

/// A Platform whose Build and Run go through a MeasurementGate; everything else is
/// forwarded. Thread-safe when `inner` is (CpuPlatform is).
class GatedPlatform : public platforms::Platform {
 public:
  /// `inner` and `gate` must outlive this object.
  GatedPlatform(platforms::Platform& inner, MeasurementGate& gate) : inner_(inner), gate_(gate) {}
  std::string Name() const override { return inner_.Name(); }
  platforms::BuildResult Build(const core::Candidate& candidate) override;
  platforms::RunResult Run(const platforms::BuildResult& build, const core::Problem& problem,
                           const platforms::RunOptions& options) override;
  core::MachineContext Machine() const override { return inner_.Machine(); }
  /// The inner platform's probe and `measurement` while holding the gate as a run (the
  /// paired eager timing is a timed run too, and the worker it calls serves one request
  /// at a time; the probes must not overlap a compile either).
  std::optional<std::string> DegradedDuring(const std::function<void()>& measurement, int threads) override;

 private:
  platforms::Platform& inner_;
  MeasurementGate& gate_;
};

}  // namespace kernelevolve::exec
