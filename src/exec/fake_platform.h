// A scripted builder and runner for tests and benchmarks: no compiler, no child
// process; outcomes, latencies, noise and failures come from a script.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "platforms/platform.h"

namespace kernelevolve::exec {

/// What the fake platform does with one candidate (FakeScript: candidate -> outcome).
struct FakeOutcome {
  /// kOk: builds, runs, correct. kCompileError: fails at Build. kIncorrect: runs with
  /// wrong outputs. Any other status: the run fails with it (crash, timeout...).
  core::Status status = core::Status::kOk;
  double latency_us = 100;  // true drop-in median latency when kOk (> 0)
};
using FakeScript = std::function<FakeOutcome(const core::Candidate&)>;

/// Noise and real delays of the fake platform.
struct FakePlatformOptions {
  double noise = 0;          // relative standard deviation of each measured median
  uint64_t seed = 0;         // noise seed (per source and attempt: order-independent)
  double build_seconds = 0;  // real sleep in Build (exercises parallel evaluation)
  double run_seconds = 0;    // real sleep in Run
};

/// Platform "fake". Build: kCompileError as scripted, else ok with artifact
/// "fake://<hash>". Run: the scripted status; when kOk, a measured latency of
/// latency_us * (1 + noise * z), z standard normal drawn from (seed, source hash,
/// attempt number of that source), so concurrent evaluation order does not change
/// any figure. Thread-safe; counts what happened for tests.
class FakePlatform : public platforms::Platform {
 public:
  explicit FakePlatform(FakeScript script, FakePlatformOptions options = {});
  std::string Name() const override { return "fake"; }
  platforms::BuildResult Build(const core::Candidate& candidate) override;
  platforms::RunResult Run(const platforms::BuildResult& build, const core::Problem& problem,
                           const platforms::RunOptions& options) override;
  core::MachineContext Machine() const override;

  /// Build and Run calls so far.
  int builds() const { return builds_; }
  int runs() const { return runs_; }
  /// Most runs ever in progress at once.
  int peak_concurrent_runs() const { return peak_runs_; }
  /// Most builds ever in progress at once.
  int peak_concurrent_builds() const { return peak_builds_; }
  /// Times a build and a run were in progress at the same moment.
  int build_run_overlaps() const { return overlaps_; }

 private:
  FakeScript script_;
  FakePlatformOptions options_;
  std::mutex mutex_;
  std::map<std::string, core::Candidate> built_;  // artifact -> candidate
  std::map<std::string, int> attempts_;           // source hash -> runs so far
  std::atomic<int> builds_{0};
  std::atomic<int> runs_{0};
  std::atomic<int> active_builds_{0};
  std::atomic<int> active_runs_{0};
  std::atomic<int> peak_runs_{0};
  std::atomic<int> peak_builds_{0};
  std::atomic<int> overlaps_{0};
};

}  // namespace kernelevolve::exec
