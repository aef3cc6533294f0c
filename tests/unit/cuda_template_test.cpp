// The CUDA C++ templates (cuda_pointwise, cuda_reduction): generated sources and
// template choice for --target cuda. Every variant is compiled by nvcc in
// tests/integration/cuda_compile_test.cpp; the kernels run only on a GPU
// (tests/gpu/cuda_gpu_test.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "core/error.h"
#include "operators/template/cuda_common.h"
#include "operators/template/cuda_pointwise.h"
#include "operators/template/cuda_reduction.h"
#include "operators/template/template_operator.h"
#include "operators/template/triton_softmax.h"
#include "platforms/cuda/cuda_builder.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

namespace fs = std::filesystem;
namespace templates = operators::templates;
namespace cuda = platforms::cuda;

TEST(CudaTemplate, ArchFromCapability) {
  EXPECT_EQ(cuda::ArchForCapability("9.0"), "sm_90a");
  EXPECT_EQ(cuda::ArchForCapability("8.0"), "sm_80");
  EXPECT_EQ(cuda::ArchForCapability("10.0"), "sm_100");
  EXPECT_EQ(cuda::ArchForCapability(""), "sm_90a");
  EXPECT_THROW(cuda::ArchForCapability("nine"), core::InvalidInputError);
}

TEST(CudaTemplate, DeviceMathReplacesStdNamespace) {
  EXPECT_EQ(templates::ToDeviceMath("std::exp(x) + std::min(a, b)"), "kecu::exp(x) + kecu::min(a, b)");
  EXPECT_NE(templates::CudaMathNamespace(false).find("return expf(x)"), std::string::npos);
  EXPECT_NE(templates::CudaMathNamespace(true).find("return __expf(x)"), std::string::npos);
  EXPECT_EQ(templates::CudaMathNamespace(false).find("__expf"), std::string::npos);
}

TEST(CudaTemplate, PointwiseSpellsTheFusedGraphInCuda) {
  auto match = templates::MatchTemplateForTarget("cuda", Unary("aten.gelu.default", {Val("approximate", "none")},
                                                               {4, 33}), 1);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "cuda_pointwise");
  const auto drafts = match.tmpl->Drafts();
  ASSERT_EQ(drafts.size(), 3u);
  const std::string src = match.tmpl->Generate(drafts.front());
  for (const char* want : {"kecu::erf(", "__global__ void __launch_bounds__(kBlock) ke_pointwise(",
                           "constexpr int kBlock = 256;", "reinterpret_cast<const float4*>(in0)[j]",
                           "ke_pointwise<4><<<grid, kBlock>>>(in0, out, n);", "return 1000 + static_cast<int>(err)",
                           "extern \"C\" int kernelevolve_entry(", "ke_check_device_tensor(inputs[t], kDLFloat, 32)"}) {
    EXPECT_NE(src.find(want), std::string::npos) << want << "\n" << src;
  }
  EXPECT_EQ(src.find("std::"), std::string::npos) << src;
  EXPECT_EQ(src.find("__expf"), std::string::npos);
  // Every setting gives its own source: 4 blocks x 2 widths x 3 items x 2 math.
  std::set<std::string> sources;
  for (const auto& knobs : match.tmpl->Space().Enumerate()) sources.insert(match.tmpl->Generate(knobs));
  EXPECT_EQ(sources.size(), 4u * 2 * 3 * 2);
  EXPECT_THROW(match.tmpl->Generate({{"num_warps", 3}}), core::InvalidInputError);
}

TEST(CudaTemplate, SoftmaxGetsTheReductionTemplateWithOnlineVariant) {
  auto match = templates::MatchTemplateForTarget("cuda", Softmax(true, {6, 50}), 1);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "cuda_reduction");
  ASSERT_TRUE(match.tmpl->Space().Find("algorithm"));
  const std::string two_pass = match.tmpl->Generate({{"mode", "block"}, {"num_warps", 8}});
  EXPECT_NE(two_pass.find("constexpr int64_t O = 6, R = 50, I = 1;"), std::string::npos) << two_pass;
  EXPECT_NE(two_pass.find("ke_row_reduce<kThreadsPerRow>("), std::string::npos);
  EXPECT_NE(two_pass.find("KeMax()"), std::string::npos);
  EXPECT_NE(two_pass.find("KeSum()"), std::string::npos);
  const std::string online = match.tmpl->Generate({{"mode", "warp"}, {"num_warps", 4}, {"algorithm", "online"}});
  EXPECT_NE(online.find("ke_online_merge<kThreadsPerRow>(m, s);"), std::string::npos) << online;
  EXPECT_NE(online.find("(x[r] - m) - kecu::log(s)"), std::string::npos);
  EXPECT_NE(online.find("constexpr int kThreadsPerRow = 32;"), std::string::npos);
  EXPECT_EQ(online.find("std::"), std::string::npos);
}

TEST(CudaTemplate, InnerDimsUseOneThreadPerRowAndTailsAreRefused) {
  auto sum = templates::MatchCudaTemplate(CapturedCaseWithInputs("sum_mid_dim"));
  ASSERT_TRUE(sum.tmpl) << sum.unsupported;
  for (const auto& knobs : sum.tmpl->Space().Enumerate()) EXPECT_EQ(knobs.at("mode"), "thread");
  EXPECT_TRUE(sum.tmpl->Space().Find("accumulator"));
  const std::string src = sum.tmpl->Generate(sum.tmpl->Drafts().front());
  EXPECT_NE(src.find("constexpr int64_t O = 6, R = 37, I = 5;"), std::string::npos) << src;
  // A sum of everything is one row (O = I = 1) reduced by one block.
  auto full = templates::MatchCudaTemplate(CapturedCaseWithInputs("full_sum_chunks"));
  ASSERT_TRUE(full.tmpl) << full.unsupported;
  EXPECT_NE(full.tmpl->Generate(full.tmpl->Drafts().front()).find("O = 1, R = 15000, I = 1;"), std::string::npos);
  // cross_entropy: per-row losses, then their mean (a tail reduction).
  auto tail = templates::MatchCudaTemplate(CapturedCaseWithInputs("cross_entropy"));
  EXPECT_FALSE(tail.tmpl);
  EXPECT_NE(tail.unsupported.find("reduction to a scalar"), std::string::npos) << tail.unsupported;
}

TEST(CudaTemplate, OperatorProposesCudaDrafts) {
  const core::Problem problem = Unary("aten.relu.default", {}, {8, 64});
  operators::TemplateOperator op("cuda");
  EXPECT_FALSE(op.Unsupported(problem));
  operators::OperatorContext context;
  context.problem = &problem;
  const auto drafts = op.Propose(context, 3);
  ASSERT_EQ(drafts.size(), 3u);
  for (const auto& c : drafts) {
    EXPECT_EQ(c.template_name, "cuda_pointwise");
    EXPECT_NE(c.source.find("kernelevolve_entry"), std::string::npos);
  }
}

}  // namespace
}  // namespace kernelevolve::template_test
