// The register transpose printed for generated kernels (codegen/cpp/register_transpose.h),
// compiled with the CPU builder's flags and run on a tile of distinct values at every
// width the kernels use.
#include "operators/codegen/cpp/register_transpose.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

/// An entry that transposes its [lanes, lanes] input into its output through
/// ke_transpose_regs; the helper is pasted twice, as when a GEMM and another family
/// share a translation unit (the guard keeps one definition).
std::string TransposeEntry(int lanes) {
  const std::string helper = operators::codegen::RegisterTransposeCpp(lanes);
  return "#include <dlpack/dlpack.h>\n#include <cstdint>\n" + helper + helper +
         fmt::format(
             "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t, DLTensor* outputs, int32_t) {{\n"
             "  const float* in = static_cast<const float*>(inputs[0].data);\n"
             "  float* out = static_cast<float*>(outputs[0].data);\n"
             "  ke_tf x[{0}];\n"
             "  for (int r = 0; r < {0}; ++r) x[r] = *reinterpret_cast<const ke_tf*>(in + r * {0});\n"
             "  ke_transpose_regs(x);\n"
             "  for (int r = 0; r < {0}; ++r) *reinterpret_cast<ke_tf*>(out + r * {0}) = x[r];\n"
             "  return 0;\n"
             "}}\n",
             lanes);
}

TEST(RegisterTranspose, EveryElementLandsAtItsMirrorPosition) {
  const std::vector<int> widths = {1, 2, 4, 8, 16};
  std::vector<std::string> sources;
  for (int lanes : widths) sources.push_back(TransposeEntry(lanes));
  const auto kernels = CompileAll(sources);
  for (size_t k = 0; k < widths.size(); ++k) {
    const int n = widths[k];
    ASSERT_NE(kernels[k]->entry, nullptr) << n << " lanes\n" << kernels[k]->log;
    std::vector<std::vector<float>> in(1, std::vector<float>(static_cast<size_t>(n * n)));
    for (int i = 0; i < n * n; ++i) in[0][static_cast<size_t>(i)] = static_cast<float>(i);
    std::vector<float> out(static_cast<size_t>(n * n), -1.0f);
    ASSERT_EQ(RunKernel(kernels[k]->entry, in, {n, n}, out), 0);
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) {
        EXPECT_EQ(out[static_cast<size_t>(r * n + c)], static_cast<float>(c * n + r)) << n << " lanes, (" << r << ", " << c << ")";
      }
    }
  }
}

TEST(RegisterTranspose, RefusesWidthsThatAreNotPowersOfTwo) {
  EXPECT_THROW(operators::codegen::RegisterTransposeCpp(6), std::invalid_argument);
  EXPECT_THROW(operators::codegen::RegisterTransposeCpp(0), std::invalid_argument);
  EXPECT_THROW(operators::codegen::RegisterTransposeCpp(128), std::invalid_argument);
}

}  // namespace
}  // namespace kernelevolve::template_test
