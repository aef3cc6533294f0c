// Detection of a degraded machine (issue 4): the development VM has 2 vCPUs that at
// times behave like one core (the host steals one). A short, fixed amount of FMA work
// is timed right before and right after a measurement; when the two differ, or both
// are much slower than the fastest probe seen, the measurement is flagged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kernelevolve::platforms::cpu {

/// Iterations of the probe loop per thread: 8 independent multiply-add chains of
/// doubles kept in memory between iterations; 6e5 iterations = 4.8e6 multiply-adds per
/// thread, 2.5-5 ms on one core of the development VM (a 2-vCPU x86-64 VM, measured
/// while shared). Fixed, so that probes are comparable with each other.
inline constexpr int64_t kProbeIterations = 600'000;

/// The probe of issue 4: flag when after/before (or before/after) exceeds 1.3, i.e. the
/// machine lost or gained 30% of its speed during the measurement. A one-core episode
/// on a 2-thread probe doubles its time; ordinary run-to-run spread of the probe on the
/// quiet VM is under 10% (measured).
inline constexpr double kDegradedRatio = 1.3;

/// Runs the probe on `threads` threads (std::thread, each the same fixed work; at least
/// 1) and returns its wall time in microseconds (steady_clock). With as many threads as
/// the candidate uses, a machine that gives them fewer cores than promised shows up as
/// a longer probe.
double RunFmaProbeUs(int threads, int64_t iterations = kProbeIterations);

/// Why a measurement bracketed by probes of `before_us` and `after_us` counts as taken in
/// a degraded state, or nullopt when it does not:
///  - max(before, after) / min(before, after) > threshold: the machine changed speed
///    during the measurement;
///  - reference_us > 0 and min(before, after) / reference_us > threshold: the machine was
///    slow throughout compared with the fastest probe seen (`reference_us`, 0 = none).
/// Non-positive before/after -> nullopt (no probe ran).
std::optional<std::string> DegradedReason(double before_us, double after_us, double reference_us,
                                          double threshold = kDegradedRatio);

}  // namespace kernelevolve::platforms::cpu
