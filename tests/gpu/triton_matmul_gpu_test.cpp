// The matmul peak and the triton_matmul template on a real GPU (label gpu; skipped
// without one; scripts/gpu_check.sh runs it): the torch.mm peak measured once and
// read back from gpu_peaks.json, and `optimize --target triton` on a bfloat16 gemm
// problem (the interpreter cannot check bfloat16 tl.dot) with every draft correct.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "platforms/triton/triton_platform.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TritonMatmulGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("TRITON_INTERPRET");
    dir_ = fs::temp_directory_path() /
           fmt::format("ke_matmul_gpu_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(TritonMatmulGpuTest, MatmulPeakIsMeasuredOnceAndCached) {
  problem::WorkerOptions runner;
  runner.log_path = dir_ / "gpu_runner.log";
  std::unique_ptr<platforms::triton::TritonPlatform> platform;
  try {
    platform = std::make_unique<platforms::triton::TritonPlatform>(dir_ / "cache", runner, 300);
  } catch (const core::InvalidInputError& e) {
    GTEST_SKIP() << "no usable GPU: " << e.what();
  }
  const auto peaks = platform->MatmulPeakTflops();
  ASSERT_TRUE(peaks.count("float16") && peaks.count("bfloat16") && peaks.count("float32"))
      << peaks.size();
  EXPECT_GT(peaks.at("float16"), peaks.at("float32"));  // tensor cores vs FMA units
  EXPECT_GT(peaks.at("float32"), 1.0);
  const auto doc = nlohmann::json::parse(Slurp(dir_ / "cache" / "gpu_peaks.json"));
  const std::string device = platform->Device().device_name;
  EXPECT_DOUBLE_EQ(doc.at(device).at("matmul_tflops").at("float16").get<double>(),
                   peaks.at("float16"));
  // A second platform on the same cache reads the figures instead of measuring.
  auto cached = doc;
  cached[device]["matmul_tflops"]["float16"] = 1234.5;
  std::ofstream(dir_ / "cache" / "gpu_peaks.json") << cached.dump();
  platform = std::make_unique<platforms::triton::TritonPlatform>(dir_ / "cache", runner, 300);
  EXPECT_DOUBLE_EQ(platform->MatmulPeakTflops().at("float16"), 1234.5);
}

TEST_F(TritonMatmulGpuTest, OptimizeBf16LinearReluEveryDraftIsCorrect) {
  if (std::system("nvidia-smi -L >/dev/null 2>&1") != 0) GTEST_SKIP() << "no nvidia-smi";
  const std::string cmd = fmt::format(
      "cd '{}' && KE_REFERENCE_DEVICE=cuda '{}' optimize problems/gpu_gemm/matmul_bias_relu.py "
      "--target triton "
      "--set M=512 --set N=384 --set K=320 --budget 4 --no-kb --seeds 2 --confirm-rounds 0 "
      "--profile-top 0 "
      "--cache-dir '{}' --out '{}' >'{}' 2>&1",
      fs::path(KE_TEST_DATA_DIR).parent_path().string(), KE_BINARY_PATH, (dir_ / "cache").string(),
      (dir_ / "out").string(), (dir_ / "log.txt").string());
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Slurp(dir_ / "log.txt");
  const auto doc = nlohmann::json::parse(Slurp(dir_ / "out" / "result.json"));
  EXPECT_EQ(doc.at("best").at("template"), "triton_matmul");
  EXPECT_EQ(doc.at("evaluations"), 4);
  // Every draft correct: four "triton_matmul    ok" rows in the console table.
  const std::string log = Slurp(dir_ / "log.txt");
  int ok_rows = 0;
  for (size_t at = log.find(" triton_matmul "); at != std::string::npos;
       at = log.find(" triton_matmul ", at + 1)) {
    ok_rows += log.compare(log.find_first_not_of(' ', at + 15), 3, "ok ") == 0;
  }
  EXPECT_EQ(ok_rows, 4) << log;
  EXPECT_GT(doc.at("gpu").at("peak_gflops").get<double>(), 0);
  EXPECT_GT(doc.at("roofline").at("peak_gflops").get<double>(), 0);
}

}  // namespace
}  // namespace kernelevolve
