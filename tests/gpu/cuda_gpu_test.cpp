// The CUDA C++ platform on a real GPU (label gpu; skipped without one or without
// nvcc; scripts/gpu_check.sh runs it): a template-generated relu checked and timed,
// an illegal address replacing the runner, side-stream work rejected, a non-zero
// return code as runtime_error, and `optimize --target cuda` on relu and softmax.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../unit/template_test_util.h"
#include "core/error.h"
#include "gpu_platform_test.h"
#include "operators/template/cuda_reduction.h"
#include "platforms/cuda/cuda_platform.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;
using platforms::cuda::CudaPlatform;

// relu with a configurable index offset (a huge one is an illegal address) and stream.
std::string ReluCu(const std::string& offset, bool side_stream) {
  return fmt::format(R"(#include <dlpack/dlpack.h>
#include <cuda_runtime.h>
#include <cstdint>
__global__ void relu(const float* x, float* y, int64_t n) {{
  const int64_t i = blockIdx.x * 256LL + threadIdx.x;
  if (i < n) {{
    {spin}
    y[i {offset}] = x[i] > 0.0f ? x[i] : 0.0f;
  }}
}}
extern "C" int kernelevolve_entry(const DLTensor* in, int32_t ni, DLTensor* out, int32_t no) {{
  if (ni != 1 || no != 1) return 1;
  int64_t n = 1;
  for (int d = 0; d < in[0].ndim; ++d) n *= in[0].shape[d];
  cudaStream_t stream = 0;
  {make_stream}
  relu<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<const float*>(in[0].data), static_cast<float*>(out[0].data), n);
  if (cudaGetLastError() != cudaSuccess) return 1001;
  return 0;
}}
)",
                     fmt::arg("offset", offset), fmt::arg("spin", side_stream ? "for (int k = 0; k < 50; ++k) __nanosleep(1000000);" : ""),
                     fmt::arg("make_stream", side_stream ? "cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);" : ""));
}

class CudaGpuTest : public gpu_test::GpuPlatformTest<CudaPlatform> {
 protected:
  CudaGpuTest() : GpuPlatformTest("ke_cuda_gpu", "no usable GPU or no nvcc: ") {}
  std::unique_ptr<CudaPlatform> MakePlatform(const fs::path& cache_dir,
                                             const problem::WorkerOptions& runner) override {
    return std::make_unique<CudaPlatform>(cache_dir, runner, "", 300);
  }
  void SetUp() override {
    GpuPlatformTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!platform_->Device().cuda) GTEST_SKIP() << "no CUDA GPU";
  }
  platforms::RunResult Run(const std::string& source) {
    core::Candidate candidate;
    candidate.source = source;
    const auto build = platform_->Build(candidate);
    EXPECT_EQ(build.status, core::Status::kOk) << build.message << "\n" << build.log;
    return platform_->Run(build, problem_, options_);
  }
};

TEST_F(CudaGpuTest, TemplateReluIsCheckedAndTimed) {
  template_test::GraphBuilder g({8, 1000});
  g.Call("y", "aten.relu.default", {template_test::Ref("self", g.Input("x"))});
  auto match = operators::templates::MatchCudaTemplate(g.Finish("y", 1));
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  for (const auto& knobs : match.tmpl->Drafts()) {
    const platforms::RunResult r = Run(match.tmpl->Generate(knobs));
    ASSERT_EQ(r.status, core::Status::kOk) << knobs.dump() << ": " << r.message << "\n" << r.log_excerpt;
    EXPECT_TRUE(r.correct);
    EXPECT_TRUE(r.kernel_only.Measured());
  }
  EXPECT_NE(platform_->Machine().compiler.find("nvcc"), std::string::npos);
}

TEST_F(CudaGpuTest, IllegalAddressReplacesTheRunner) {
  const platforms::RunResult bad = Run(ReluCu("+ (1LL << 40)", false));
  EXPECT_EQ(bad.status, core::Status::kRuntimeError) << bad.message;
  EXPECT_NE(bad.message.find("sticky CUDA error"), std::string::npos) << bad.message;
  const platforms::RunResult good = Run(ReluCu("", false));
  EXPECT_EQ(good.status, core::Status::kOk) << good.message << "\n" << good.log_excerpt;
  EXPECT_EQ(platform_->RunnerStarts(), 2);
}

TEST_F(CudaGpuTest, WorkLeftOnASideStreamIsRejected) {
  const platforms::RunResult r = Run(ReluCu("", true));
  EXPECT_EQ(r.status, core::Status::kRejectedByCheck) << r.message;
}

TEST_F(CudaGpuTest, NonZeroReturnIsRuntimeError) {
  std::string src = ReluCu("", false);
  const std::string ok_return = "return 1001;\n  return 0;";
  src.replace(src.find(ok_return), ok_return.size(), "return 1001;\n  return 4;");
  const platforms::RunResult r = Run(src);
  EXPECT_EQ(r.status, core::Status::kRuntimeError);
  EXPECT_NE(r.message.find("not dense row-major"), std::string::npos) << r.message;
}

/// `kernelevolve optimize --target cuda` through the binary; returns result.json.
nlohmann::json Optimize(const fs::path& out, const std::string& problem, const std::string& sets) {
  const std::string cmd = fmt::format(
      "{} optimize {}/../problems/level1/{} --target cuda {} --budget 4 --seeds 2 --confirm-rounds 0 --no-kb "
      "--quiet --out {} > {}/stdout.txt 2> {}/stderr.txt",
      KE_BINARY_PATH, KE_TEST_DATA_DIR, problem, sets, out.string(), out.parent_path().string(),
      out.parent_path().string());
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  std::ifstream in(out / "result.json");
  return in ? nlohmann::json::parse(in) : nlohmann::json::object();
}

TEST_F(CudaGpuTest, OptimizeTargetCudaOnReluAndSoftmax) {
  platform_.reset();  // the binary starts its own runner
  for (const auto& [problem, sets] : {std::pair<std::string, std::string>{"relu.py", "--set batch_size=64 --set dim=4096"},
                                      {"softmax.py", "--set batch_size=256 --set dim=1024"}}) {
    SCOPED_TRACE(problem);
    const fs::path out = dir_ / problem / "run";
    fs::create_directories(out.parent_path());
    const nlohmann::json result = Optimize(out, problem, sets);
    EXPECT_EQ(result.value("status", ""), "ok") << result.dump(2);
    EXPECT_EQ(result["gpu"].value("target", ""), "cuda");
    EXPECT_TRUE(fs::exists(out / "best_kernel.cu"));
  }
}

}  // namespace
}  // namespace kernelevolve
