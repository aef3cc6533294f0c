// A/A test of the fitness function's timing (issue 4): one kernel timed against itself
// must not be reported as significantly faster (or slower).
//
// Method: writes ReLU fixtures (float32 [256, 4096] = 4 MiB in, 4 MiB out, 3 seeds) and
// builds one vectorizable ReLU with the real CpuBuilder. Then, TRIALS times, runs the
// tool's own confirmation (exec::ConfirmSpeedup): ROUNDS rounds of "A then B", each a
// separate sandboxed kernelevolve-cpu-harness process on the same kernel, where A stands
// in for the eager baseline and B for the candidate; the verdict is SpeedupFromRatios
// over the per-round paired RobustSpeedupOf ratios (A's min / B's min). Beside it, the
// same rounds scored over per-round A/B ratios of the minima (recomputed here, equal to
// the tool's) and of the medians. A trial is a false positive when an
// interval excludes 1.0 (low > 1: "faster"; high < 1: "slower").
// Prints one line per trial, then the false-positive rates, median interval widths, the
// share of runs flagged degraded and of modes that converged.
// Usage: aa_false_positive [TRIALS=50] [ROUNDS=8] [MIN_TIME_S=0.02] [MAX_TIME_S=0.5]
//        [THREADS=1] [--flush]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "eval/fixture_manifest.h"
#include "eval/safetensors.h"
#include "eval/timing_stats.h"
#include "exec/confirm_speedup.h"
#include "platforms/cpu/cpu_platform.h"

namespace ke = kernelevolve;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kRows = 256, kCols = 4096;

const char* kReluSource = R"(#include <dlpack/dlpack.h>
#include <cstdint>
extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {
  const float* __restrict x = static_cast<const float*>(in[0].data);
  float* __restrict y = static_cast<float*>(out[0].data);
  int64_t n = 1;
  for (int i = 0; i < in[0].ndim; ++i) n *= in[0].shape[i];
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
)";

ke::core::Problem WriteFixtures(const fs::path& dir) {
  fs::create_directories(dir);
  ke::core::Problem problem;
  problem.name = "relu_aa";
  problem.fixtures_dir = dir;
  problem.seeds = {0, 1, 2};
  problem.inputs = {{"input.0", ke::core::TensorRole::kInput, {kRows, kCols}, ke::core::DType::kFloat32}};
  problem.outputs = {{"output.0", ke::core::TensorRole::kOutput, {kRows, kCols}, ke::core::DType::kFloat32}};
  ke::eval::FixtureManifest manifest;
  manifest.problem = problem.name;
  manifest.inputs = problem.inputs;
  manifest.outputs = problem.outputs;
  manifest.seeds = problem.seeds;
  for (int seed : problem.seeds) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    ke::eval::HostTensor x{"input.0", ke::core::DType::kFloat32, {kRows, kCols}, {}};
    x.bytes.resize(static_cast<std::size_t>(kRows * kCols) * sizeof(float));
    ke::eval::HostTensor y = x;
    y.name = "output.0";
    for (int64_t i = 0; i < kRows * kCols; ++i) {
      const float v = normal(rng);
      x.MutableData<float>()[i] = v;
      y.MutableData<float>()[i] = v > 0 ? v : 0;
    }
    const fs::path file = dir / fmt::format("seed_{}.safetensors", seed);
    ke::eval::WriteSafetensors(file, {x, y}, {{"seed", std::to_string(seed)}});
    manifest.files.push_back(file);
    problem.fixture_files.push_back(file);
  }
  std::ofstream(dir / "manifest.json") << ke::eval::FixtureManifestToJson(manifest, dir).dump(2);
  return problem;
}

/// Forwards to the CPU platform and keeps every run's result (B's runs happen inside
/// ConfirmSpeedup).
class RecordingPlatform : public ke::platforms::Platform {
 public:
  explicit RecordingPlatform(ke::platforms::Platform& inner) : inner_(inner) {}
  std::string Name() const override { return inner_.Name(); }
  ke::platforms::BuildResult Build(const ke::core::Candidate& c) override { return inner_.Build(c); }
  ke::platforms::RunResult Run(const ke::platforms::BuildResult& b, const ke::core::Problem& p,
                               const ke::platforms::RunOptions& o) override {
    runs.push_back(inner_.Run(b, p, o));
    return runs.back();
  }
  ke::core::MachineContext Machine() const override { return inner_.Machine(); }
  std::vector<ke::platforms::RunResult> runs;

 private:
  ke::platforms::Platform& inner_;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Counts of one scoring rule over the trials.
struct Tally {
  int faster = 0, slower = 0;
  std::vector<double> widths;
  void Add(const ke::core::Speedup& s) {
    faster += s.ci_low > 1.0;
    slower += s.ci_high < 1.0;
    widths.push_back(s.ci_high - s.ci_low);
  }
  void Print(const char* name, int trials) const {
    fmt::print("{:<34} faster {:>2}/{} ({:4.1f}%)  slower {:>2}/{} ({:4.1f}%)  false positives {:4.1f}%  "
               "median interval width {:.4f}\n",
               name, faster, trials, 100.0 * faster / trials, slower, trials, 100.0 * slower / trials,
               100.0 * (faster + slower) / trials, Median(widths));
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool flush = false;
  std::erase_if(args, [&](const std::string& a) { return a == "--flush" ? (flush = true) : false; });
  const int trials = args.size() > 0 ? std::atoi(args[0].c_str()) : 50;
  const int rounds = args.size() > 1 ? std::atoi(args[1].c_str()) : 8;
  ke::platforms::RunOptions options;
  options.min_time_seconds = args.size() > 2 ? std::atof(args[2].c_str()) : 0.02;
  options.max_time_seconds = args.size() > 3 ? std::atof(args[3].c_str()) : 0.5;
  options.threads = args.size() > 4 ? std::atoi(args[4].c_str()) : 1;
  options.warmup_seconds = 0.02;
  options.flush_cache = flush;

  const fs::path dir = fs::temp_directory_path() / fmt::format("ke_aa_{}", ::getpid());
  ke::core::Problem problem = WriteFixtures(dir / "fixtures");
  ke::platforms::cpu::CpuPlatform platform(dir / "cache", KE_HARNESS_PATH);
  ke::core::Candidate kernel;
  kernel.source = kReluSource;
  const ke::platforms::BuildResult build = platform.Build(kernel);
  if (build.status != ke::core::Status::kOk) {
    fmt::print(stderr, "build failed: {}\n{}\n", build.message, build.log);
    return 1;
  }
  fmt::print("A/A: ReLU float32 [{}, {}], {} trials x {} rounds (A B A B ...), min-time {} s, max-time {} s, "
             "{} thread(s), cache flush {}\n\n",
             kRows, kCols, trials, rounds, options.min_time_seconds, options.max_time_seconds, options.threads,
             flush ? "on" : "off");
  fmt::print("{:>5}  {:<30} {:<30} {:<30}\n", "trial", "tool (fastest A so far)", "per-round minima", "per-round medians");

  Tally tool, minima, medians;
  int runs = 0, degraded = 0, modes = 0, converged = 0;
  std::vector<double> half_widths, samples;  // per mode: CI half-width / median, n
  RecordingPlatform recorder(platform);
  for (int t = 0; t < trials; ++t) {
    recorder.runs.clear();
    // A and B alternate through one recorder: runs 0, 2, 4, ... are A; 1, 3, 5, ... B.
    auto time_a = [&]() { return recorder.Run(build, problem, options).latency; };
    ke::exec::Confirmation c = ke::exec::ConfirmSpeedup(time_a, recorder, problem, kernel, options, rounds);
    if (!c.done) {
      fmt::print(stderr, "trial {}: {}\n", t + 1, c.message);
      return 1;
    }
    std::vector<double> min_ratios, median_ratios;
    for (std::size_t i = 0; i + 1 < recorder.runs.size(); i += 2) {
      const auto& a = recorder.runs[i].latency;
      const auto& b = recorder.runs[i + 1].latency;
      min_ratios.push_back(ke::eval::RobustSpeedupOf(a, b).value);
      median_ratios.push_back(a.median_us / b.median_us);
    }
    for (const auto& r : recorder.runs) {
      ++runs;
      degraded += r.degraded;
      modes += 2;
      converged += r.latency.converged + r.kernel_only.converged;
      for (const auto* m : {&r.latency, &r.kernel_only}) {
        half_widths.push_back((m->ci_high_us - m->ci_low_us) / 2 / m->median_us);
        samples.push_back(static_cast<double>(m->n));
      }
    }
    const ke::core::Speedup by_min = ke::eval::SpeedupFromRatios(min_ratios);
    const ke::core::Speedup by_median = ke::eval::SpeedupFromRatios(median_ratios);
    tool.Add(c.speedup);
    minima.Add(by_min);
    medians.Add(by_median);
    auto show = [](const ke::core::Speedup& s) {
      return fmt::format("{:.3f} [{:.3f}, {:.3f}]{}", s.value, s.ci_low, s.ci_high,
                         s.ci_low > 1 ? " F" : s.ci_high < 1 ? " S" : "");
    };
    fmt::print("{:>5}  {:<30} {:<30} {:<30}\n", t + 1, show(c.speedup), show(by_min), show(by_median));
    std::fflush(stdout);
  }
  fmt::print("\n");
  tool.Print("tool (ConfirmSpeedup)", trials);
  minima.Print("per-round minima ratio", trials);
  medians.Print("per-round medians ratio", trials);
  fmt::print("harness runs {}, flagged degraded {} ({:.1f}%); timing modes converged (CI half-width <= 2%) "
             "{}/{} ({:.1f}%)\n",
             runs, degraded, 100.0 * degraded / std::max(1, runs), converged, modes,
             100.0 * converged / std::max(1, modes));
  fmt::print("per mode: median CI half-width {:.1f}% of the median, median sample count {:.0f}\n",
             100.0 * Median(half_widths), Median(samples));
  fs::remove_all(dir);
  return 0;
}
