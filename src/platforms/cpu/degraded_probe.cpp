#include "platforms/cpu/degraded_probe.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace kernelevolve::platforms::cpu {
namespace {

/// 8 independent chains a = a * m + c; the result escapes through an asm barrier.
void FmaWork(int64_t iterations) {
  double a[8] = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7};
  const double m = 0.999999, c = 1e-6;
  for (int64_t i = 0; i < iterations; ++i) {
    for (double& x : a) x = x * m + c;
    asm volatile("" : "+m"(a));  // keeps the chains from being folded or vectorized away
  }
  asm volatile("" : : "m"(a));
}

}  // namespace

double RunFmaProbeUs(int threads, int64_t iterations) {
  threads = std::max(1, threads);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(FmaWork, iterations);
  FmaWork(iterations);
  for (auto& worker : workers) worker.join();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

std::optional<std::string> DegradedReason(double before_us, double after_us, double reference_us, double threshold) {
  if (before_us <= 0 || after_us <= 0) return std::nullopt;
  const double low = std::min(before_us, after_us), high = std::max(before_us, after_us);
  if (high / low > threshold) {
    return fmt::format("the machine changed speed during the measurement: probe {:.0f} us before, {:.0f} us after "
                       "(slower / faster = {:.2f} > {:.2f})", before_us, after_us, high / low, threshold);
  }
  if (reference_us > 0 && low / reference_us > threshold) {
    return fmt::format("the machine was slow throughout the measurement: probe {:.0f} us, {:.2f}x the fastest "
                       "probe seen ({:.0f} us; threshold {:.2f})", low, low / reference_us, reference_us, threshold);
  }
  return std::nullopt;
}

}  // namespace kernelevolve::platforms::cpu
