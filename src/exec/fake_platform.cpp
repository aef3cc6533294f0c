#include "exec/fake_platform.h"

#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "core/status.h"

namespace kernelevolve::exec {
namespace {

void SleepSeconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

void RaisePeak(std::atomic<int>& peak, int value) {
  int seen = peak.load();
  while (value > seen && !peak.compare_exchange_weak(seen, value)) {
  }
}

/// Standard normal from two uniform draws (Box-Muller), from a generator seeded by
/// (seed, source hash, attempt): the same figure whatever the evaluation order.
double NormalDraw(uint64_t seed, const std::string& hash, int attempt) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(std::hash<std::string>{}(hash)),
                    static_cast<uint32_t>(attempt)};
  std::mt19937_64 rng(seq);
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
  const double u2 = static_cast<double>(rng() >> 11) / 9007199254740992.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

core::TimingStats Stats(double median_us) {
  core::TimingStats s;
  s.n = 20;
  s.median_us = s.mean_us = median_us;
  s.stdev_us = 0.01 * median_us;
  s.min_us = s.p10_us = 0.98 * median_us;
  s.max_us = s.p90_us = 1.02 * median_us;
  s.ci_low_us = 0.99 * median_us;
  s.ci_high_us = 1.01 * median_us;
  return s;
}

}  // namespace

FakePlatform::FakePlatform(FakeScript script, FakePlatformOptions options)
    : script_(std::move(script)), options_(options) {}

platforms::BuildResult FakePlatform::Build(const core::Candidate& candidate) {
  const int active = ++active_builds_;
  RaisePeak(peak_builds_, active);
  if (active_runs_ > 0) ++overlaps_;
  ++builds_;
  SleepSeconds(options_.build_seconds);
  platforms::BuildResult build;
  build.source_hash = core::ContentHash(candidate.source);
  const FakeOutcome outcome = script_(candidate);
  if (outcome.status == core::Status::kCompileError) {
    build.status = core::Status::kCompileError;
    build.message = "error: scripted compile failure";
    build.log = "fake.cpp:1:1: error: scripted compile failure\n";
  } else {
    build.status = core::Status::kOk;
    build.message = "ok";
    build.artifact = "fake://" + build.source_hash;
    std::lock_guard lock(mutex_);
    built_[build.artifact.string()] = candidate;
  }
  build.seconds = options_.build_seconds;
  if (active_runs_ > 0) ++overlaps_;
  --active_builds_;
  return build;
}

platforms::RunResult FakePlatform::Run(const platforms::BuildResult& build,
                                       const core::Problem& problem,
                                       const platforms::RunOptions& options) {
  (void)problem;
  const int active = ++active_runs_;
  RaisePeak(peak_runs_, active);
  if (active_builds_ > 0) ++overlaps_;
  ++runs_;
  SleepSeconds(options_.run_seconds);
  platforms::RunResult run;
  run.seconds = options_.run_seconds;
  core::Candidate candidate;
  int attempt = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = built_.find(build.artifact.string());
    if (build.status == core::Status::kOk && it != built_.end()) candidate = it->second;
    attempt = attempts_[build.source_hash]++;
  }
  const FakeOutcome outcome = script_(candidate);
  run.status = outcome.status;
  if (build.status != core::Status::kOk) {
    run.status = build.status;
    run.message = "not run: " + build.message;
  } else if (outcome.status == core::Status::kOk) {
    run.correct = true;
    run.message = "ok";
    const double z = NormalDraw(options_.seed, build.source_hash, attempt);
    const double measured = outcome.latency_us * std::max(0.05, 1.0 + options_.noise * z);
    if (options.measure) {
      run.latency = Stats(measured);
      run.kernel_only = Stats(0.9 * measured);
    }
  } else if (outcome.status == core::Status::kIncorrect) {
    run.message = "output.0 differs from the reference (scripted)";
  } else {
    run.message = "scripted " + std::string(core::StatusName(outcome.status));
  }
  if (active_builds_ > 0) ++overlaps_;
  --active_runs_;
  return run;
}

core::MachineContext FakePlatform::Machine() const {
  core::MachineContext machine;
  machine.cpu_model = "fake";
  machine.logical_cores = 1;
  machine.compiler = "fake";
  return machine;
}

}  // namespace kernelevolve::exec
