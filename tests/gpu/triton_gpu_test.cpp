// The Triton platform on a real GPU (label gpu; skipped without one, never run by
// scripts/test.sh; scripts/gpu_check.sh runs it): CUDA-event timing, the device copy
// bandwidth, a sticky CUDA error replacing the runner, side-stream work rejected.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "../integration/triton_candidates.h"
#include "core/error.h"
#include "gpu_platform_test.h"
#include "platforms/triton/triton_platform.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;
using platforms::triton::TritonPlatform;

constexpr const char* kSideStream = R"(
import torch

_side = torch.cuda.Stream()


def kernelevolve_entry(inputs, outputs):
    _side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(_side):
        torch.cuda._sleep(50_000_000)
        outputs[0].copy_(torch.relu(inputs[0]))
)";

class TritonGpuTest : public gpu_test::GpuPlatformTest<TritonPlatform> {
 protected:
  TritonGpuTest() : GpuPlatformTest("ke_triton_gpu", "no usable GPU: ") {}
  std::unique_ptr<TritonPlatform> MakePlatform(const fs::path& cache_dir,
                                               const problem::WorkerOptions& runner) override {
    return std::make_unique<TritonPlatform>(cache_dir, runner, 300);
  }

  platforms::RunResult Run(const std::string& source) {
    core::Candidate candidate;
    candidate.source = source;
    return platform_->Run(platform_->Build(candidate), problem_, options_);
  }
};

TEST_F(TritonGpuTest, CorrectKernelIsCheckedAndTimedOnTheDevice) {
  ASSERT_TRUE(platform_->Device().cuda);
  const platforms::RunResult r = Run(triton_test::ReluSource());
  ASSERT_EQ(r.status, core::Status::kOk) << r.message << "\n" << r.log_excerpt;
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(r.checks.size(), 3u + 2u);  // 3 seeds and the "large" and "zeros" edge cases
  EXPECT_TRUE(r.kernel_only.Measured());
  EXPECT_GT(r.kernel_only.median_us, 0);
  EXPECT_GT(platform_->CopyBandwidthGbps(), 100);  // any datacenter GPU copies far faster
  EXPECT_EQ(Run(triton_test::WrongSource()).status, core::Status::kIncorrect);
}

TEST_F(TritonGpuTest, IllegalAddressReplacesTheRunner) {
  const platforms::RunResult bad = Run(triton_test::ReluSource(" * 100000000"));
  EXPECT_EQ(bad.status, core::Status::kRuntimeError) << bad.message;
  EXPECT_NE(bad.message.find("sticky CUDA error"), std::string::npos) << bad.message;
  const platforms::RunResult good = Run(triton_test::ReluSource());
  EXPECT_EQ(good.status, core::Status::kOk) << good.message << "\n" << good.log_excerpt;
  EXPECT_EQ(platform_->RunnerStarts(), 2);
}

TEST_F(TritonGpuTest, WorkLeftOnASideStreamIsRejected) {
  const platforms::RunResult r = Run(kSideStream);
  EXPECT_EQ(r.status, core::Status::kRejectedByCheck) << r.message;
  EXPECT_NE(r.message.find("another stream"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace kernelevolve
