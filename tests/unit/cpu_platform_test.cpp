// Builds and runs real candidate kernels through CpuPlatform (g++ + sandboxed harness)
// on ReLU fixtures written from C++.
#include "relu_fixtures.h"
#include "platforms/cpu/cpu_platform.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "eval/fixture_manifest.h"
#include "eval/safetensors.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

// Shared preamble of every candidate: the ABI header and a flat element count.
constexpr const char* kPrelude = R"(
#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>
static int64_t Numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}
)";

// Wraps `body` (which sees x, y, n) in the entry point.
std::string Kernel(const std::string& body) {
  return std::string(kPrelude) + R"(
extern "C" int kernelevolve_entry(const DLTensor* in, int32_t n_in, DLTensor* out, int32_t n_out) {
  if (n_in != 1 || n_out != 1) return 1;
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = Numel(in[0]);
  )" + body + R"(
  return 0;
}
)";
}

const std::string kCorrectRelu = Kernel(R"(
  static bool said = false;
  if (!said) { std::printf("chatty kernel {not json\n"); std::fflush(stdout); said = true; }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;)");

core::Candidate Source(const std::string& source) {
  core::Candidate candidate;
  candidate.source = source;
  candidate.operator_name = "test";
  return candidate;
}

class CpuPlatformTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("ke-cpu-platform-test-" + std::to_string(getpid()));
    fs::create_directories(root_ / "fixtures");
    problem_ = std::make_unique<core::Problem>(kernelevolve::testing_util::WriteReluFixtures(root_ / "fixtures"));
    platform_ = std::make_unique<CpuPlatform>(root_ / "cache", KE_HARNESS_PATH);
  }
  static void TearDownTestSuite() {
    platform_.reset();
    problem_.reset();
    fs::remove_all(root_);
  }

  static RunOptions QuickOptions() {
    RunOptions options;
    options.warmup_seconds = 0.005;
    options.min_time_seconds = 0.02;
    options.min_repetitions = 5;
    options.max_repetitions = 200;
    options.timeout_seconds = 20;
    options.memory_limit_bytes = 1LL << 30;
    return options;
  }

  static RunResult BuildAndRun(const std::string& source, const RunOptions& options = QuickOptions()) {
    BuildResult build = platform_->Build(Source(source));
    EXPECT_EQ(build.status, core::Status::kOk) << build.message << "\n" << build.log;
    return platform_->Run(build, *problem_, options);
  }

  static inline fs::path root_;
  static inline std::unique_ptr<core::Problem> problem_;
  static inline std::unique_ptr<CpuPlatform> platform_;
};

TEST_F(CpuPlatformTest, CorrectKernelIsOkAndTimed) {
  RunResult result = BuildAndRun(kCorrectRelu);
  ASSERT_EQ(result.status, core::Status::kOk) << result.message << "\n" << result.log_excerpt;
  EXPECT_TRUE(result.correct);
  EXPECT_EQ(result.message, "ok");
  ASSERT_EQ(result.checks.size(), 5u);  // 3 seeds, then the edge cases "large" and "zeros"
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(result.checks[k].seed_index, k < 3 ? k : 0);
    EXPECT_EQ(result.checks[k].edge_case, k < 3 ? "" : (k == 3 ? "large" : "zeros"));
    EXPECT_EQ(result.checks[k].output, "output.0");
    EXPECT_TRUE(result.checks[k].passed);
  }
  EXPECT_GE(result.latency.n, 5);
  EXPECT_GE(result.kernel_only.n, 5);
  EXPECT_GT(result.latency.median_us, 0);
  EXPECT_GT(result.kernel_only.median_us, 0);
  EXPECT_LE(result.latency.ci_low_us, result.latency.median_us);
  // The kernel's printf went to the log, not into the verdict line.
  EXPECT_NE(result.log_excerpt.find("chatty kernel"), std::string::npos);
  EXPECT_GT(result.seconds, 0);
}

TEST_F(CpuPlatformTest, NoMeasureSkipsTiming) {
  RunOptions options = QuickOptions();
  options.measure = false;
  RunResult result = BuildAndRun(kCorrectRelu, options);
  ASSERT_EQ(result.status, core::Status::kOk) << result.message;
  EXPECT_FALSE(result.latency.Measured());
  EXPECT_FALSE(result.kernel_only.Measured());
}

TEST_F(CpuPlatformTest, RebuildIsACacheHit) {
  BuildResult first = platform_->Build(Source(kCorrectRelu + "// cache test\n"));
  BuildResult second = platform_->Build(Source(kCorrectRelu + "// cache test\n"));
  ASSERT_EQ(first.status, core::Status::kOk) << first.message;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_GT(first.seconds, 0);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.seconds, 0);
  EXPECT_EQ(first.artifact, second.artifact);
  EXPECT_EQ(first.source_hash, second.source_hash);
  EXPECT_EQ(first.artifact.filename(), first.source_hash + ".so");
}

TEST_F(CpuPlatformTest, WrongResultIsIncorrect) {
  RunResult result = BuildAndRun(Kernel("for (int64_t i = 0; i < n; ++i) y[i] = x[i];"));
  EXPECT_EQ(result.status, core::Status::kIncorrect) << result.message;
  EXPECT_FALSE(result.correct);
  ASSERT_EQ(result.checks.size(), 3u);
  EXPECT_FALSE(result.checks[0].passed);
  EXPECT_GT(result.checks[0].mismatches, 0);
  EXPECT_NE(result.message.find("output.0 differs from the reference on seed 0"), std::string::npos)
      << result.message;
  EXPECT_FALSE(result.latency.Measured());
}

TEST_F(CpuPlatformTest, WrongOnlyOnLargeInputsIsIncorrectOnThatEdgeCase) {
  // Right for standard normal inputs, wrong once |x| > 100 (a saturating shortcut).
  RunResult result = BuildAndRun(Kernel("for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? (x[i] < 100 ? x[i] : 100) : 0;"));
  EXPECT_EQ(result.status, core::Status::kIncorrect) << result.message;
  EXPECT_NE(result.message.find("on edge case 'large' (float inputs scaled by 10000)"), std::string::npos)
      << result.message;
  ASSERT_EQ(result.checks.size(), 4u);  // 3 seeds passed, "large" failed, "zeros" not reached
  EXPECT_TRUE(result.checks[2].passed);
  EXPECT_EQ(result.checks[3].edge_case, "large");
  EXPECT_FALSE(result.checks[3].passed);
  EXPECT_FALSE(result.latency.Measured());
}

TEST_F(CpuPlatformTest, AnEdgeCaseAllowsAMultipleOfEagersOwnErrorAtEachElement) {
  // On "large" eager's own error scale is 10 where the input is positive and 0 where relu
  // clips it (allowance.output.0); its max error is 10 (reference_error). With
  // EAGER_ERROR_MULTIPLE = 8 a kernel may be off by up to 8 x 10 at the positive elements
  // on top of the tolerance, and nothing extra at the clipped ones. The kernel adds
  // `positive` where x > 1000 and `clipped` where x < -1000: only on "large", whose |x|
  // reaches 1e4 (the seeds are standard normal, "zeros" is 0).
  auto run = [&](const std::string& name, double multiple, float allowance, double positive,
                 double clipped) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    const core::Problem problem =
        kernelevolve::testing_util::WriteReluFixtures(dir, 10.0, multiple, allowance);
    BuildResult build = platform_->Build(
        Source(Kernel(fmt::format("for (int64_t i = 0; i < n; ++i) y[i] = (x[i] > 0 ? x[i] : 0.0f) "
                                  "+ (x[i] > 1000 ? {:.2f}f : 0.0f) + "
                                  "(x[i] < -1000 ? {:.2f}f : 0.0f);",
                                  positive, clipped))));
    EXPECT_EQ(build.status, core::Status::kOk) << build.message << "\n" << build.log;
    return platform_->Run(build, problem, QuickOptions());
  };
  // 0.75 x the allowance (8 x 10) at the positive elements: within.
  RunResult within = run("allowance_within", 8.0, 10.0f, 60.0, 0.0);
  EXPECT_EQ(within.status, core::Status::kOk) << within.message;
  ASSERT_EQ(within.checks.size(), 5u);
  EXPECT_EQ(within.checks[3].edge_case, "large");
  EXPECT_TRUE(within.checks[3].passed);
  EXPECT_DOUBLE_EQ(within.checks[3].atol,
                   1e-4);  // the plain tolerance; the allowance is per element
  EXPECT_GT(within.checks[3].max_abs_error, 59.0);

  // An incorrect verdict whose message holds `text`.
  auto expect_incorrect_saying = [](const RunResult& r, const std::string& text) {
    EXPECT_EQ(r.status, core::Status::kIncorrect) << r.message;
    EXPECT_NE(r.message.find(text), std::string::npos) << r.message;
  };

  // 1.5 x the allowance: beyond it, and the message says what the allowance was.
  RunResult beyond = run("allowance_beyond", 8.0, 10.0f, 120.0, 0.0);
  expect_incorrect_saying(beyond, "on edge case 'large'");
  expect_incorrect_saying(beyond,
                          "; the tolerance at each element adds 8 x eager PyTorch's own rounding error there "
                          "(at most 80 on this set)");

  // Off by 0.5 (far below the set's max allowance) where relu clips, where eager is exact.
  RunResult clipped = run("allowance_zero", 8.0, 10.0f, 0.0, 0.5);
  EXPECT_EQ(clipped.status, core::Status::kIncorrect) << clipped.message;
  ASSERT_EQ(clipped.checks.size(), 4u);
  EXPECT_EQ(clipped.checks[3].edge_case, "large");
  EXPECT_GT(clipped.checks[3].mismatches, 0);
  EXPECT_DOUBLE_EQ(clipped.checks[3].max_abs_error, 0.5);

  // EAGER_ERROR_MULTIPLE = 0 (the problem opted out): the dtype's tolerance, and the hint.
  expect_incorrect_saying(run("allowance_off", 0.0, 10.0f, 60.0, 0.0),
                          "eager PyTorch's own float32 result is up to 10 off the float64 reference on this "
                          "set, outside this tolerance too: leave the set out with EDGE_CASES, or remove "
                          "EAGER_ERROR_MULTIPLE = 0, in the problem file (docs/fitness.md)");

  // A multiple but no allowance tensor for the output: no widening, and the hint without
  // the multiple (there is none to turn on).
  expect_incorrect_saying(run("allowance_absent", 8.0, 0.0f, 60.0, 0.0),
                          "outside this tolerance too: leave the set out with EDGE_CASES in the problem file "
                          "(docs/fitness.md)");
}

TEST_F(CpuPlatformTest, ASeedAllowanceWidensTheSeedCheckOnlyWhereEagerRounds) {
  // The worker writes seed allowances for float16 / bfloat16 outputs (session.py
  // _half_seed_allowance); the harness reads them as it reads an edge set's. Here each
  // seed's file gets a scale of 0.01 where x > 0 and 0 where relu clips: with
  // EAGER_ERROR_MULTIPLE = 8 a kernel may be off by 0.08 at the positive elements only.
  auto run = [&](const std::string& name, const std::string& positive, const std::string& clipped) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    const core::Problem problem = kernelevolve::testing_util::WriteReluFixtures(dir, 0.0, 8.0, 0.0f);
    eval::FixtureManifest manifest = eval::ReadFixtureManifest(dir / "manifest.json");
    manifest.edge_cases.clear();  // the seeds alone: "large" has no allowance
    for (const auto& path : manifest.files) {
      std::vector<eval::HostTensor> tensors = eval::ReadSafetensors(path).tensors;
      eval::HostTensor scale = tensors.at(1);
      scale.name = eval::AllowanceTensorName("output.0");
      for (int64_t i = 0; i < scale.NumElements(); ++i) {
        scale.MutableData<float>()[i] = tensors.at(0).Data<float>()[i] > 0 ? 0.01f : 0.0f;
      }
      tensors.push_back(scale);
      eval::WriteSafetensors(path, tensors);
      manifest.seed_allowance.push_back({"output.0"});
    }
    std::ofstream(dir / "manifest.json") << eval::FixtureManifestToJson(manifest, dir).dump();
    BuildResult build = platform_->Build(Source(Kernel(
        "for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] + " + positive + " : " + clipped + ";")));
    EXPECT_EQ(build.status, core::Status::kOk) << build.message << "\n" << build.log;
    return platform_->Run(build, problem, QuickOptions());
  };
  RunResult within = run("seed_allowance_within", "0.05f", "0.0f");
  EXPECT_EQ(within.status, core::Status::kOk) << within.message;
  ASSERT_FALSE(within.checks.empty());
  EXPECT_TRUE(within.checks[0].passed);
  EXPECT_GT(within.checks[0].max_abs_error, 0.049);

  RunResult beyond = run("seed_allowance_beyond", "0.1f", "0.0f");
  EXPECT_EQ(beyond.status, core::Status::kIncorrect) << beyond.message;
  EXPECT_NE(beyond.message.find("on seed 0"), std::string::npos) << beyond.message;
  EXPECT_NE(beyond.message.find("; the tolerance at each element adds 8 x eager PyTorch's own rounding error there "
                                "(at most 0.08 on this set)"),
            std::string::npos)
      << beyond.message;

  // Off by 0.01 where relu clips: eager is exact there, so no slack.
  RunResult clipped = run("seed_allowance_clipped", "0.0f", "0.01f");
  EXPECT_EQ(clipped.status, core::Status::kIncorrect) << clipped.message;
}

TEST_F(CpuPlatformTest, EarlierResultOnAnEdgeCaseIsRejectedAsReused) {
  // Replays the previous call's output when the input starts with 0 (the "zeros" set,
  // checked right after "large").
  RunResult result = BuildAndRun(Kernel(R"(
  static std::vector<float> last;
  if (x[0] == 0.0f && static_cast<int64_t>(last.size()) == n) {
    for (int64_t i = 0; i < n; ++i) y[i] = last[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
    last.assign(y, y + n);
  })"));
  EXPECT_EQ(result.status, core::Status::kRejectedByCheck) << result.message;
  EXPECT_NE(result.message.find("output.0 on edge case 'zeros' is the result for edge case 'large'"), std::string::npos)
      << result.message;
}

TEST_F(CpuPlatformTest, UnwrittenOutputIsIncorrect) {
  RunResult result = BuildAndRun(Kernel("for (int64_t i = 0; i < n / 2; ++i) y[i] = x[i] > 0 ? x[i] : 0;"));
  EXPECT_EQ(result.status, core::Status::kIncorrect) << result.message;
  ASSERT_FALSE(result.checks.empty());
  EXPECT_EQ(result.checks[0].mismatches, 4000);
  EXPECT_EQ(result.checks[0].first_mismatch, 4000);
}

TEST_F(CpuPlatformTest, SegfaultIsACrash) {
  // The address comes from runtime data so the compiler cannot turn it into a trap.
  RunResult result = BuildAndRun(Kernel("*reinterpret_cast<volatile int*>(in[0].byte_offset + 16) = 1;"));
  EXPECT_EQ(result.status, core::Status::kCrash) << result.message;
  EXPECT_EQ(result.message, "killed by SIGSEGV");
}

TEST_F(CpuPlatformTest, InfiniteLoopTimesOut) {
  RunOptions options = QuickOptions();
  options.timeout_seconds = 2;
  RunResult result = BuildAndRun(Kernel("volatile int spin = 0; for (;;) { spin = spin + 1; }"), options);
  EXPECT_EQ(result.status, core::Status::kTimeout) << result.message;
  EXPECT_LT(result.seconds, 5);
}

TEST_F(CpuPlatformTest, HugeAllocationIsOutOfMemoryOrCrash) {
  RunResult result = BuildAndRun(Kernel(R"(
  std::vector<char> big(size_t(100) << 30);
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = 1;
  y[0] = big[4096];)"));
  EXPECT_TRUE(result.status == core::Status::kOutOfMemory || result.status == core::Status::kCrash)
      << core::StatusName(result.status) << ": " << result.message;
  EXPECT_LT(result.seconds, 10);
}

TEST_F(CpuPlatformTest, NonZeroReturnIsARuntimeError) {
  RunResult result = BuildAndRun(Kernel("return 5;"));
  EXPECT_EQ(result.status, core::Status::kRuntimeError);
  EXPECT_NE(result.message.find("kernel returned 5"), std::string::npos) << result.message;
}

TEST_F(CpuPlatformTest, ThrownExceptionIsARuntimeError) {
  RunResult result = BuildAndRun(Kernel("throw std::runtime_error(\"no kernel today\");"));
  EXPECT_EQ(result.status, core::Status::kRuntimeError);
  EXPECT_NE(result.message.find("std::runtime_error: no kernel today"), std::string::npos) << result.message;
}

TEST_F(CpuPlatformTest, CompileErrorCarriesTheFirstErrorLine) {
  BuildResult build = platform_->Build(Source("int broken() { return undeclared_name; }\n"));
  EXPECT_EQ(build.status, core::Status::kCompileError);
  EXPECT_NE(build.message.find("error:"), std::string::npos) << build.message;
  EXPECT_NE(build.message.find("undeclared_name"), std::string::npos) << build.message;
  // Named by its line, not by the cache's hashed file name.
  EXPECT_EQ(build.message.rfind("line 1:", 0), 0u) << build.message;
  EXPECT_EQ(build.message.find(build.source_hash), std::string::npos) << build.message;
  EXPECT_LE(build.log.size(), 16u * 1024u);
  EXPECT_TRUE(build.artifact.empty());
  RunResult result = platform_->Run(build, *problem_, QuickOptions());
  EXPECT_EQ(result.status, core::Status::kCompileError);
}

TEST_F(CpuPlatformTest, MissingEntryPointIsRejected) {
  RunResult result = BuildAndRun(std::string(kPrelude) + "extern \"C\" int some_other_name() { return 0; }\n");
  EXPECT_EQ(result.status, core::Status::kRejectedByCheck);
  EXPECT_NE(result.message.find("kernelevolve_entry"), std::string::npos) << result.message;
}

TEST_F(CpuPlatformTest, WritingToAnInputIsRejected) {
  RunResult result = BuildAndRun(Kernel(R"(
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  const_cast<float*>(x)[0] = 42.0f;)"));
  EXPECT_EQ(result.status, core::Status::kRejectedByCheck);
  EXPECT_EQ(result.message, "mutated input input.0");
}

TEST_F(CpuPlatformTest, MachineReportsTheCompiler) {
  core::MachineContext machine = platform_->Machine();
  EXPECT_EQ(machine.compiler, platform_->Builder().CompilerVersion());
  EXPECT_FALSE(machine.compiler.empty());
  EXPECT_GT(machine.logical_cores, 0);
}

}  // namespace
}  // namespace kernelevolve::platforms::cpu
