// Measures the vectorizable math prelude against double-precision libm, built for this
// machine (-march=native) and for baseline x86-64 (SSE2 only), and checks that GCC
// really vectorizes loops calling it on this machine's ISA (the point of the prelude).
#include "operators/template/math_prelude.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

using operators::templates::MathPreludeFor;
using operators::templates::MathPreludeFunctions;
using operators::templates::MathPreludeSource;

const std::vector<std::string> kFunctions = {"ke_exp",     "ke_expm1", "ke_log",      "ke_log1p",
                                             "ke_sigmoid", "ke_tanh",  "ke_softplus", "ke_erf",
                                             "ke_log_v16"};
constexpr size_t kLogV16 = 8;  // its loop asks for 16 lanes (the AVX-512 variant's width)

/// A candidate-ABI shared object: outputs[k][i] = kFunctions[k](inputs[0][i]), one
/// `omp simd` loop per function.
std::string HarnessSource() {
  std::string src =
      "#include <dlpack/dlpack.h>\n#include <cmath>\n#include <cstdint>\n#include <cstring>\n";
  src += MathPreludeSource();
  src +=
      "extern \"C\" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {\n"
      "  const float* x = static_cast<const float*>(in[0].data);\n"
      "  const int64_t n = in[0].shape[0];\n";
  for (size_t k = 0; k < kFunctions.size(); ++k) {
    src += "  {\n    float* __restrict y = static_cast<float*>(out[" + std::to_string(k) +
           "].data);\n";
    src += std::string(k == kLogV16 ? "#pragma omp simd simdlen(16)" : "#pragma omp simd") +
           "\n    for (int64_t i = 0; i < n; ++i) y[i] = " + kFunctions[k] +
           "(x[i]);\n  }\n";
  }
  return src + "  return 0;\n}\n";
}

struct Results {
  std::vector<float> x;
  std::vector<std::vector<float>> y;  // one per function
};

/// The builds every accuracy test runs on: the candidates' flags as they are
/// (-march=native), and the same with -march=x86-64 after them (the last -march wins:
/// SSE2 only, 128-bit vectors, no FMA), where the same source must stay correct.
constexpr const char* kNativeBuild = "native";
constexpr const char* kBaselineBuild = "x86_64_baseline";

class MathPreludeTest : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    source_ = new std::string(HarnessSource());
    native_ = CompileAndLoad(*source_, 0, kVectorizeReport).release();
    baseline_ = CompileAndLoad(*source_, 1, "-march=x86-64 -mtune=generic").release();
  }
  static void TearDownTestSuite() {
    delete native_;
    delete baseline_;
    delete source_;
  }

  void SetUp() override {
    kernel_ = std::string(GetParam()) == kNativeBuild ? native_ : baseline_;
    ASSERT_NE(kernel_->entry, nullptr) << kernel_->log;
  }

  Results Run(std::vector<float> x) const {
    Results r{std::move(x), {}};
    std::vector<int64_t> shape = {static_cast<int64_t>(r.x.size())};
    DLTensor in = FloatTensor(r.x.data(), shape);
    std::vector<DLTensor> outs;
    r.y.assign(kFunctions.size(), std::vector<float>(r.x.size()));
    for (auto& y : r.y) outs.push_back(FloatTensor(y.data(), shape));
    EXPECT_EQ(kernel_->entry(&in, 1, outs.data(), static_cast<int32_t>(outs.size())), 0);
    return r;
  }

  /// A grid over [-110, 110], small magnitudes down to 1e-8 and special values.
  static std::vector<float> Grid() {
    std::vector<float> x;
    for (int i = -11000; i <= 11000; ++i) x.push_back(i * 0.01f);
    for (float m = 1e-8f; m < 1.0f; m *= 1.37f) {
      x.push_back(m);
      x.push_back(-m);
    }
    for (float v : {1e-40f, -1e-40f, 88.72f, 88.73f, -87.33f, -87.34f, -103.9f, 1e30f, -1e30f})
      x.push_back(v);
    return x;
  }

  static std::string* source_;
  static LoadedKernel* native_;
  static LoadedKernel* baseline_;
  LoadedKernel* kernel_ = nullptr;
};

std::string* MathPreludeTest::source_ = nullptr;
LoadedKernel* MathPreludeTest::native_ = nullptr;
LoadedKernel* MathPreludeTest::baseline_ = nullptr;

/// Largest |got - want| / (abs_floor + |want|) over finite references.
double WorstError(const Results& r, size_t k, double (*ref)(double), double abs_floor,
                  bool (*domain)(float) = nullptr) {
  double worst = 0;
  for (size_t i = 0; i < r.x.size(); ++i) {
    if (domain != nullptr && !domain(r.x[i])) continue;
    const double want = ref(r.x[i]);
    if (!std::isfinite(want) || std::fabs(want) > 3.4e38) continue;
    // Results below 2^-125.5 (~1.7e-38, denormals included): ke_exp flushes them to 0.
    if (std::fabs(want) < 1.7e-38 && std::fabs(want) > 0) continue;
    worst = std::max(worst, std::fabs(r.y[k][i] - want) / (abs_floor + std::fabs(want)));
  }
  return worst;
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double Softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }
double Exp(double x) { return std::exp(x); }
double Expm1(double x) { return std::expm1(x); }
double Log(double x) { return std::log(x); }
double Log1p(double x) { return std::log1p(x); }
double Tanh(double x) { return std::tanh(x); }
double Erf(double x) { return std::erf(x); }

TEST(MathPreludeVectorization, EveryLoopVectorizesOnThisMachinesIsa) {
  const std::string source = HarnessSource();
  const auto kernel = CompileAndLoad(source, 2, kVectorizeReport);
  ASSERT_NE(kernel->entry, nullptr) << kernel->log;
  ExpectSimdLoopsVectorized(source, kernel->log);
}

// Built for AVX-512 (x86-64-v4) on any machine (compiled and loaded, never run): the
// 16-lane ke_log_v16 loop vectorizes with 64-byte vectors, which GCC can only do by
// calling the variant _ZGVeN16v_ke_log_v16_scalar (a call has no other vector form).
TEST(MathPreludeVectorization, LogV16LoopCallsTheAvx512VariantOnX86_64V4) {
  const std::string source = HarnessSource();
  const auto kernel = CompileAndLoad(source, 3, std::string(kVectorizeReport) + " -march=x86-64-v4");
  ASSERT_NE(kernel->entry, nullptr) << kernel->log;
  std::istringstream src(source);
  int line_no = 0, v16_line = 0;
  for (std::string line; std::getline(src, line);) {
    ++line_no;
    if (line.find("= ke_log_v16(x[i])") != std::string::npos) v16_line = line_no;
  }
  ASSERT_GT(v16_line, 0);
  EXPECT_NE(kernel->log.find(":" + std::to_string(v16_line) + ":"), std::string::npos) << kernel->log;
  bool wide = false;
  std::istringstream log(kernel->log);
  for (std::string line; std::getline(log, line);) {
    if (line.find(":" + std::to_string(v16_line) + ":") != std::string::npos && ReportedVectorBytes(line) == 64)
      wide = true;
  }
  EXPECT_TRUE(wide) << kernel->log;
}

TEST_P(MathPreludeTest, ErrorsAgainstDoubleLibm) {
  const Results r = Run(Grid());
  EXPECT_LT(WorstError(r, 0, Exp, 0), 3e-7);    // relative
  EXPECT_LT(WorstError(r, 1, Expm1, 0), 5e-7);  // relative, also near 0
  EXPECT_LT(WorstError(r, 3, Log1p, 0, [](float x) { return x > -1; }), 5e-7);
  EXPECT_LT(WorstError(r, 4, Sigmoid, 1), 3e-7);  // ~absolute
  EXPECT_LT(WorstError(r, 5, Tanh, 0), 5e-7);     // relative, also near 0
  EXPECT_LT(WorstError(r, 6, Softplus, 1), 5e-7);
  EXPECT_LT(WorstError(r, 7, Erf, 1), 3e-7);  // rational fit: < 4e-7 absolute near +-1
  // ... and relative near 0 (erf(x) ~ 2x/sqrt(pi): no cancellation)
  EXPECT_LT(WorstError(r, 7, Erf, 1e-30, [](float x) { return std::fabs(x) < 0.5f; }), 3e-7);
  std::vector<float> positive = Grid();
  for (auto& v : positive) v = std::fabs(v);
  const Results p = Run(positive);
  EXPECT_LT(WorstError(p, 2, Log, 1e-30, [](float x) { return x > 0; }), 3e-7);
  EXPECT_LT(WorstError(p, kLogV16, Log, 1e-30, [](float x) { return x > 0; }), 3e-7);
}

// ke_log_v16 on whole 16-lane vectors (the loop's remainder is the scalar ke_log): its
// AVX-512 variant where the machine has one, else ke_log.
TEST_P(MathPreludeTest, LogV16KeepsSpecialValuesInEveryLane) {
  const std::vector<float> specials = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f,
                                       1.0f, 1e-40f, 1.5f, 0.75f, 3.4e38f, 1.17549435e-38f};
  std::vector<float> x;
  while (x.size() < 64) x.insert(x.end(), specials.begin(), specials.end());
  x.resize(64);
  const Results r = Run(x);
  const auto& y = r.y[kLogV16];
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i];
    if (v == 0.0f) {
      EXPECT_EQ(y[i], -INFINITY) << "lane " << i << " x = " << v;
    } else if (std::isnan(v) || v < 0) {
      EXPECT_TRUE(std::isnan(y[i])) << "lane " << i << " x = " << v;
    } else if (v == INFINITY) {
      EXPECT_EQ(y[i], INFINITY) << "lane " << i;
    } else if (v == 1.0f) {
      EXPECT_EQ(y[i], 0.0f) << "lane " << i;
    } else {
      const double want = std::log(static_cast<double>(v));
      EXPECT_NEAR(y[i], want, 3e-7 * std::fabs(want)) << "lane " << i << " x = " << v;
    }
  }
}

TEST_P(MathPreludeTest, SaturatesAndKeepsSpecialValues) {
  const Results r =
      Run({100.0f, -100.0f, 89.0f, -105.0f, 0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1.0f});
  const auto& exp = r.y[0];
  EXPECT_EQ(exp[0], INFINITY);  // overflow gives inf, like std::exp
  EXPECT_EQ(exp[1], 0.0f);      // e^-100 ~ 3.7e-44 is a denormal: flushed to 0
  EXPECT_EQ(exp[2], INFINITY);
  EXPECT_EQ(exp[3], 0.0f);
  EXPECT_EQ(exp[4], 1.0f);
  EXPECT_EQ(exp[6], 0.0f);
  EXPECT_TRUE(std::isnan(exp[7]));
  // Around the flush threshold: exact zero below it, normal and accurate above it.
  const Results edge = Run({-87.0f, -86.98f, -86.9f, 88.72f, 88.376f});
  EXPECT_EQ(edge.y[0][0], 0.0f);  // e^-87 ~ 1.65e-38 < 2^-125.5
  for (size_t i = 1; i < edge.x.size(); ++i) {
    const double want = std::exp(static_cast<double>(edge.x[i]));
    EXPECT_NEAR(edge.y[0][i], want, 3e-7 * want) << "x = " << edge.x[i];
  }
  const auto& log = r.y[2];
  EXPECT_EQ(log[4], -INFINITY);
  EXPECT_EQ(log[5], INFINITY);
  EXPECT_TRUE(std::isnan(log[9]));
  EXPECT_NEAR(log[8], std::log(1e-40), 1e-4);  // denormal input
  const auto& sigmoid = r.y[4];
  EXPECT_EQ(sigmoid[0], 1.0f);
  EXPECT_EQ(sigmoid[1], 0.0f);
  const auto& tanh = r.y[5];
  EXPECT_EQ(tanh[0], 1.0f);
  EXPECT_EQ(tanh[1], -1.0f);
  EXPECT_EQ(tanh[5], 1.0f);
  EXPECT_EQ(tanh[6], -1.0f);
  const auto& softplus = r.y[6];
  EXPECT_EQ(softplus[0], 100.0f);
  EXPECT_NEAR(softplus[1], std::exp(-100.0), 1e-30);
  const auto& erf = r.y[7];
  EXPECT_EQ(erf[0], 1.0f);
  EXPECT_EQ(erf[1], -1.0f);
  for (size_t k = 0; k < kFunctions.size(); ++k)
    EXPECT_TRUE(std::isnan(r.y[k][7])) << kFunctions[k];
}

INSTANTIATE_TEST_SUITE_P(Builds, MathPreludeTest, ::testing::Values(kNativeBuild, kBaselineBuild),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(MathPrelude, IncludesOnlyWhatTheCodeCallsPlusDependencies) {
  EXPECT_EQ(MathPreludeFor("return x + 1.0f;"), "");
  const std::string tanh = MathPreludeFor("y = ke_tanh(x);");
  EXPECT_NE(tanh.find("ke_tanh("), std::string::npos);
  EXPECT_EQ(tanh.find("ke_exp("), std::string::npos);  // a rational fit: calls nothing
  const std::string expm1 = MathPreludeFor("y = ke_expm1(x);");
  EXPECT_NE(expm1.find("ke_expm1("), std::string::npos);
  EXPECT_NE(expm1.find("ke_exp("), std::string::npos);
  EXPECT_NE(expm1.find("ke_bits_to_float("), std::string::npos);
  EXPECT_EQ(expm1.find("ke_log("), std::string::npos);
  EXPECT_EQ(expm1.find("ke_erf("), std::string::npos);
  const std::string all = MathPreludeSource();
  for (const auto& f : MathPreludeFunctions()) EXPECT_NE(all.find(f + "("), std::string::npos) << f;
  // Callees come before callers; every function is always inlined (a large entry
  // otherwise calls them per element, unvectorized).
  const std::string head = "static inline __attribute__((always_inline)) float ";
  EXPECT_LT(all.find(head + "ke_exp("), all.find(head + "ke_expm1("));
  EXPECT_LT(all.find(head + "ke_log1p("), all.find(head + "ke_softplus("));
  for (const auto& f : MathPreludeFunctions()) {
    const bool defined_inline = all.find(head + f + "(") != std::string::npos ||
                                all.find("static inline __attribute__((always_inline)) int32_t " + f + "(") !=
                                    std::string::npos;
    EXPECT_TRUE(defined_inline) << f;
  }
}

}  // namespace
}  // namespace kernelevolve::template_test
