// Every generated CUDA template variant for relu, gelu, softmax, sum over a middle
// dim and layer norm compiled by the real nvcc (-arch=sm_90a) through
// platforms::cuda::CudaBuilder, and the builder's error values and cache (label
// integration: one nvcc run per problem for all its variants). Skipped, saying so, when
// nvcc is missing. Nothing runs: there is no GPU here (tests/gpu/cuda_gpu_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "../unit/template_test_util.h"
#include "core/error.h"
#include "operators/template/cuda_reduction.h"
#include "platforms/cuda/cuda_builder.h"

namespace kernelevolve::template_test {
namespace {

namespace fs = std::filesystem;
namespace templates = operators::templates;
namespace cuda = platforms::cuda;

/// nvcc for the compile tests: $CUDACXX, PATH or /usr/local/cuda; empty when none.
std::string NvccOrEmpty() {
  try {
    return cuda::FindNvcc("");
  } catch (const core::InvalidInputError&) {
    return "";
  }
}

/// `source` (a generated .cu file) without its #include lines, its entry point
/// renamed to a plain C++ function, inside `namespace <name>`: many variants then
/// compile in one nvcc run (nvcc's fixed cost per run is most of a small kernel's).
std::string InNamespace(const std::string& source, const std::string& name) {
  std::string body;
  std::istringstream in(source);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#include", 0) == 0) continue;
    const auto entry = line.find("extern \"C\" int kernelevolve_entry");
    if (entry != std::string::npos) line.replace(entry, 10, "");
    body += line + "\n";
  }
  return "namespace " + name + " {\n" + body + "}  // namespace " + name + "\n";
}

/// Every generated variant of `problem` compiled by nvcc -arch=sm_90a: the first as
/// generated (a complete candidate), then all of them in one translation unit.
void CompileEveryVariant(const core::Problem& problem, const std::string& expect_template, size_t min_variants) {
  const std::string nvcc = NvccOrEmpty();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found ($CUDACXX, PATH, /usr/local/cuda/bin): CUDA templates not compiled";
  auto match = templates::MatchCudaTemplate(problem);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), expect_template);
  const fs::path cache = fs::temp_directory_path() / ("ke_cuda_templates_" + std::to_string(::getpid()));
  cuda::CudaBuilder builder(cache, nvcc, "sm_90a");
  const auto settings = match.tmpl->Space().Enumerate();
  EXPECT_GE(settings.size(), min_variants);
  core::Candidate first;
  first.source = match.tmpl->Generate(settings.front());
  const auto single = builder.Build(first);
  ASSERT_EQ(single.status, core::Status::kOk) << single.message << "\n" << single.log;
  EXPECT_TRUE(fs::exists(single.artifact));
  core::Candidate all;
  all.source = "#include <dlpack/dlpack.h>\n#include <cuda_runtime.h>\n#include <cstdint>\n#include <math.h>\n";
  for (size_t k = 0; k < settings.size(); ++k) {
    all.source += "// variant " + settings[k].dump() + "\n";
    all.source += InNamespace(match.tmpl->Generate(settings[k]), "variant_" + std::to_string(k));
  }
  all.source += "extern \"C\" int kernelevolve_entry(const DLTensor*, int32_t, DLTensor*, int32_t) { return 1; }\n";
  const auto build = builder.Build(all);
  EXPECT_EQ(build.status, core::Status::kOk) << build.message << "\n" << build.log;
  fs::remove_all(cache);
}

TEST(CudaCompile, Relu) { CompileEveryVariant(Unary("aten.relu.default", {}, {16, 1000}), "cuda_pointwise", 48); }
TEST(CudaCompile, Gelu) {
  CompileEveryVariant(Unary("aten.gelu.default", {Val("approximate", "none")}, {16, 1000}), "cuda_pointwise", 48);
}
TEST(CudaCompile, Softmax) {
  CompileEveryVariant(Softmax(false, {64, 4096}), "cuda_reduction", 32);
}
TEST(CudaCompile, SumDim) {
  CompileEveryVariant(CapturedCaseWithInputs("sum_mid_dim"), "cuda_reduction", 8);
}
TEST(CudaCompile, LayerNorm) {
  CompileEveryVariant(CapturedCaseWithInputs("layer_norm_affine"), "cuda_reduction", 16);
}

TEST(CudaBuilder, CompileErrorsAreValuesAndObjectsAreCached) {
  const std::string nvcc = NvccOrEmpty();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found ($CUDACXX, PATH, /usr/local/cuda/bin)";
  const fs::path cache = fs::temp_directory_path() / ("ke_cuda_builder_" + std::to_string(::getpid()));
  cuda::CudaBuilder builder(cache, nvcc, "sm_90a");
  EXPECT_NE(builder.Flags().find("-arch=sm_90a"), std::string::npos);
  EXPECT_NE(builder.Version().find("release"), std::string::npos) << builder.Version();
  core::Candidate bad;
  bad.source = "extern \"C\" int kernelevolve_entry() { return undefined_name; }\n";
  const auto failed = builder.Build(bad);
  EXPECT_EQ(failed.status, core::Status::kCompileError);
  EXPECT_NE(failed.message.find("undefined_name"), std::string::npos) << failed.message;
  EXPECT_NE(failed.log.find("error"), std::string::npos);
  core::Candidate none;
  none.source = "int main() { return 0; }\n";
  EXPECT_EQ(builder.Build(none).status, core::Status::kCompileError);
  core::Candidate good;
  good.source = "#include <dlpack/dlpack.h>\n__global__ void k() {}\nextern \"C\" int kernelevolve_entry(const DLTensor*, "
                "int, DLTensor*, int) { k<<<1, 1>>>(); return 0; }\n";
  const auto first = builder.Build(good);
  ASSERT_EQ(first.status, core::Status::kOk) << first.message << first.log;
  const auto second = builder.Build(good);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.artifact, first.artifact);
  fs::remove_all(cache);
}

}  // namespace
}  // namespace kernelevolve::template_test
