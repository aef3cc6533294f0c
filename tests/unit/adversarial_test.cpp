// Every kernel in tests/adversarial/ cheats in one way; each must be rejected with its
// own reason, through the real builder and sandboxed harness (docs/fitness.md).
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "relu_fixtures.h"
#include "eval/fixture_manifest.h"
#include "eval/safetensors.h"
#include "platforms/cpu/cpu_platform.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

struct Case {
  const char* file;          // under tests/adversarial/
  core::Status status;       // expected status
  const char* reason;        // expected substring of the message
};

std::ostream& operator<<(std::ostream& out, const Case& c) { return out << c.file; }

const Case kCases[] = {
    {"ok_control.cpp", core::Status::kOk, "ok"},
    {"zero_output.cpp", core::Status::kRejectedByCheck, "output.0 is constant (every element equals 0)"},
    {"constant_output.cpp", core::Status::kRejectedByCheck, "is constant"},
    {"cached_first_result.cpp", core::Status::kRejectedByCheck, "a result reused from an earlier call"},
    {"pointer_keyed_cache.cpp", core::Status::kRejectedByCheck, "during timing: output.0 on seed"},
    {"skip_seen_inputs.cpp", core::Status::kRejectedByCheck, "during timing: wrong result on a verified timed call"},
    {"skip_if_output_intact.cpp", core::Status::kOk, "ok"},
    {"heap_trim_probe.cpp", core::Status::kOk, "ok"},
    {"lazy_when_timed.cpp", core::Status::kRejectedByCheck, "during timing: wrong result on a verified timed call"},
    {"mutate_input.cpp", core::Status::kRejectedByCheck, "mutated input input.0"},
    {"write_past_end.cpp", core::Status::kRejectedByCheck, "accessed memory outside output.0: past its end"},
    {"write_before_start.cpp", core::Status::kRejectedByCheck, "wrote outside output.0: 4 byte(s) before its start"},
    {"late_thread_write.cpp", core::Status::kRejectedByCheck, "output.0 changed after the kernel returned"},
    {"leaked_thread.cpp", core::Status::kRejectedByCheck, "more thread(s) running after it returned"},
    {"read_fixture.cpp", core::Status::kRejectedByCheck, "tried to open a file: '"},
    {"fork_raw_syscall.cpp", core::Status::kRejectedByCheck, "tried to spawn a process (fork)"},
    {"exec_raw_syscall.cpp", core::Status::kRejectedByCheck, "tried to execute a program (execve)"},
    {"socket_raw_syscall.cpp", core::Status::kRejectedByCheck, "tried to open a socket (socket)"},
    {"setsid_escape.cpp", core::Status::kRejectedByCheck, "made a forbidden system call (setsid)"},
    {"fork_libc.cpp", core::Status::kRejectedByCheck, "links to a forbidden symbol: fork"},
    {"system_libc.cpp", core::Status::kRejectedByCheck, "links to a forbidden symbol: system"},
    {"cblas_sgemm.cpp", core::Status::kRejectedByCheck, "links to a forbidden symbol: cblas_sgemm"},
    {"torch_call.cpp", core::Status::kRejectedByCheck, "links to a forbidden symbol: at::relu_("},
    {"dlopen_blas.cpp", core::Status::kRejectedByCheck, "links to a forbidden symbol: dlopen"},
};

class AdversarialTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("ke-adversarial-test-" + std::to_string(getpid()));
    fs::create_directories(root_ / "fixtures");
    problem_ = std::make_unique<core::Problem>(kernelevolve::testing_util::WriteReluFixtures(root_ / "fixtures"));
    platform_ = std::make_unique<CpuPlatform>(root_ / "cache", KE_HARNESS_PATH);
  }
  static void TearDownTestSuite() {
    platform_.reset();
    problem_.reset();
    fs::remove_all(root_);
  }

  static std::string ReadKernel(const std::string& file) {
    std::ifstream in(fs::path(KE_TEST_DATA_DIR) / "adversarial" / file);
    std::stringstream text;
    text << in.rdbuf();
    std::string source = text.str();
    const std::string placeholder = "KE_FIXTURE_FILE";
    if (auto at = source.find(placeholder); at != std::string::npos) {
      source.replace(at, placeholder.size(), problem_->fixture_files[0].string());
    }
    return source;
  }

  static inline fs::path root_;
  static inline std::unique_ptr<core::Problem> problem_;
  static inline std::unique_ptr<CpuPlatform> platform_;
};

TEST_P(AdversarialTest, IsRejectedWithItsOwnReason) {
  const Case& c = GetParam();
  core::Candidate candidate;
  candidate.source = ReadKernel(c.file);
  ASSERT_FALSE(candidate.source.empty()) << "cannot read tests/adversarial/" << c.file;
  candidate.operator_name = "adversarial";
  BuildResult build = platform_->Build(candidate);
  ASSERT_TRUE(build.status == core::Status::kOk || build.status == core::Status::kRejectedByCheck)
      << build.message << "\n" << build.log;
  RunOptions options;
  options.warmup_seconds = 0.002;
  options.min_time_seconds = 0.01;
  options.min_repetitions = 40;
  options.max_repetitions = 400;
  options.timeout_seconds = 20;
  options.memory_limit_bytes = 2LL << 30;
  options.threads = 2;
  RunResult result = platform_->Run(build, *problem_, options);
  EXPECT_EQ(core::StatusName(result.status), core::StatusName(c.status))
      << result.message << "\n" << result.log_excerpt;
  EXPECT_NE(result.message.find(c.reason), std::string::npos)
      << "expected '" << c.reason << "' in: " << result.message << "\n" << result.log_excerpt;
  EXPECT_FALSE(result.correct && c.status != core::Status::kOk);
}

// A loose per-problem tolerance (manifest "tolerance", from the problem's TOLERANCE)
// lets an approximate kernel pass, but never a constant one.
TEST_F(AdversarialTest, LooseToleranceStillRejectsConstantOutput) {
  const fs::path dir = root_ / "loose";
  fs::create_directories(dir);
  for (const auto& file : problem_->fixture_files) fs::copy_file(file, dir / file.filename());
  eval::FixtureManifest manifest = eval::ReadFixtureManifest(problem_->fixtures_dir / "manifest.json");
  for (auto& file : manifest.files) file = dir / file.filename();
  manifest.tolerance_overrides[core::DType::kFloat32] = core::Tolerance{10.0, 0.0};
  std::ofstream(dir / "manifest.json") << eval::FixtureManifestToJson(manifest, dir).dump(2);
  core::Problem loose = *problem_;
  loose.fixtures_dir = dir;

  RunOptions options;
  options.measure = false;
  core::Candidate candidate;
  candidate.source = ReadKernel("zero_output.cpp");
  RunResult zeros = platform_->Run(platform_->Build(candidate), loose, options);
  EXPECT_EQ(zeros.status, core::Status::kRejectedByCheck) << zeros.message;
  EXPECT_NE(zeros.message.find("is constant"), std::string::npos) << zeros.message;

  candidate.source = ReadKernel("ok_control.cpp");
  const std::string exact = "for (int64_t i = 0; i < n; ++i) y[i] = scratch[i];";
  candidate.source.replace(candidate.source.find(exact), exact.size(),
                           "for (int64_t i = 0; i < n; ++i) y[i] = scratch[i] + 0.5f;");
  RunResult approximate = platform_->Run(platform_->Build(candidate), loose, options);
  EXPECT_EQ(approximate.status, core::Status::kOk) << approximate.message;
  RunResult strict = platform_->Run(platform_->Build(candidate), *problem_, options);
  EXPECT_EQ(strict.status, core::Status::kIncorrect) << strict.message;
}

INSTANTIATE_TEST_SUITE_P(Kernels, AdversarialTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) {
                           std::string name = info.param.file;
                           return name.substr(0, name.find('.'));
                         });

}  // namespace
}  // namespace kernelevolve::platforms::cpu
