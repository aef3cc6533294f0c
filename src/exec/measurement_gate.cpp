#include "exec/measurement_gate.h"

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::exec {

TimingIsolation TimingIsolationFromName(const std::string& name) {
  if (name == "exclusive") return TimingIsolation::kExclusive;
  if (name == "runs-only") return TimingIsolation::kRunsOnly;
  throw core::InvalidInputError(
      fmt::format("--timing-isolation {}: expected exclusive or runs-only", name));
}

std::string TimingIsolationName(TimingIsolation mode) {
  return mode == TimingIsolation::kExclusive ? "exclusive" : "runs-only";
}

void MeasurementGate::BeginBuild() {
  std::unique_lock lock(mutex_);
  if (mode_ == TimingIsolation::kExclusive) {
    changed_.wait(lock, [&] { return !run_active_ && runs_waiting_ == 0; });
  }
  ++builds_active_;
}

void MeasurementGate::EndBuild() {
  {
    std::lock_guard lock(mutex_);
    --builds_active_;
  }
  changed_.notify_all();
}

void MeasurementGate::BeginRun() {
  std::unique_lock lock(mutex_);
  ++runs_waiting_;
  changed_.wait(lock, [&] {
    return !run_active_ && (mode_ == TimingIsolation::kRunsOnly || builds_active_ == 0);
  });
  --runs_waiting_;
  run_active_ = true;
}

void MeasurementGate::EndRun() {
  {
    std::lock_guard lock(mutex_);
    run_active_ = false;
  }
  changed_.notify_all();
}

platforms::BuildResult GatedPlatform::Build(const core::Candidate& candidate) {
  MeasurementGate::BuildScope scope(gate_);
  return inner_.Build(candidate);
}

platforms::RunResult GatedPlatform::Run(const platforms::BuildResult& build,
                                        const core::Problem& problem,
                                        const platforms::RunOptions& options) {
  MeasurementGate::RunScope scope(gate_);
  return inner_.Run(build, problem, options);
}

std::optional<std::string> GatedPlatform::DegradedDuring(const std::function<void()>& measurement, int threads) {
  MeasurementGate::RunScope scope(gate_);
  return inner_.DegradedDuring(measurement, threads);
}

}  // namespace kernelevolve::exec
