// Compiles the softmax_lastdim template's candidates and checks them against a
// double-precision reference on several shapes, including |x| up to 100.
#include <gtest/gtest.h>

#include <cmath>

#include "operators/template/template_operator.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

core::Problem SoftmaxProblem(bool log, std::vector<int64_t> shape, int64_t dim) {
  GraphBuilder g(std::move(shape));
  g.Input("x");
  const char* target = log ? "aten._log_softmax.default" : "aten._softmax.default";
  g.Call("out", target, {Ref("self", "x"), Val("dim", dim), Val("half_to_float", false)});
  return g.Finish("out");
}

std::vector<double> Reference(const std::vector<float>& x, int64_t cols, bool log) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r * cols < x.size(); ++r) {
    const float* row = x.data() + r * cols;
    double m = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, static_cast<double>(row[j]));
    double s = 0;
    for (int64_t j = 0; j < cols; ++j) s += std::exp(row[j] - m);
    for (int64_t j = 0; j < cols; ++j) {
      y[r * cols + j] = log ? row[j] - m - std::log(s) : std::exp(row[j] - m) / s;
    }
  }
  return y;
}

/// Shapes the generated (shape-generic) kernels are run on: rows with vector tails,
/// rows spanning three of the online variant's 1024-element blocks, rows shorter
/// than one vector, 1-D and 3-D tensors.
const std::vector<std::vector<int64_t>>& Shapes() {
  static const std::vector<std::vector<int64_t>> kShapes = {
      {7, 1000}, {3, 2500}, {5, 13}, {37}, {2, 3, 40}};
  return kShapes;
}

/// Inputs for a shape: randn * 3, every third row scaled to |x| ~ 100.
std::vector<float> SoftmaxInputs(const std::vector<int64_t>& shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> x = TestValues(static_cast<size_t>(n), seed, 3.0f);
  const int64_t cols = shape.back();
  for (int64_t i = 0; i < n; ++i) {
    if ((i / cols) % 3 == 1) x[i] = std::max(-100.0f, std::min(100.0f, x[i] * 33.0f));
    if (std::fabs(x[i]) > 100.0f) x[i] = x[i] > 0 ? 100.0f : -100.0f;
  }
  return x;
}

/// Compiles and checks every candidate on every shape of Shapes(); candidates with
/// vectorized math must also have every `omp simd` loop vectorized.
void CheckSoftmaxCandidates(bool log, const std::vector<core::Candidate>& candidates) {
  std::vector<std::string> sources;
  for (const auto& c : candidates) sources.push_back(c.source);
  const auto kernels = CompileAll(sources, kVectorizeReport);
  for (size_t k = 0; k < kernels.size(); ++k) {
    SCOPED_TRACE(std::string(log ? "log_softmax " : "softmax ") + candidates[k].knobs.dump());
    ASSERT_NE(kernels[k]->entry, nullptr) << kernels[k]->log;
    if (candidates[k].knobs["math"] == "vectorized") {
      ExpectSimdLoopsVectorized(candidates[k].source, kernels[k]->log);
    }
    for (const auto& shape : Shapes()) {
      std::vector<std::vector<float>> in = {SoftmaxInputs(shape, 11)};
      std::vector<float> out(in[0].size(), -12345.0f);
      ASSERT_EQ(RunKernel(kernels[k]->entry, in, shape, out), 0);
      const auto want = Reference(in[0], shape.back(), log);
      int failures = 0;
      for (size_t i = 0; i < out.size() && failures < 3; ++i) {
        if (!Close(out[i], want[i])) {
          ++failures;
          ADD_FAILURE() << "shape[0]=" << shape[0] << " i=" << i << " x=" << in[0][i] << " got "
                        << out[i] << " want " << want[i];
        }
      }
    }
  }
}

std::vector<core::Candidate> Propose(const core::Problem& p, int n) {
  operators::TemplateOperator op;
  operators::OperatorContext context;
  context.problem = &p;
  context.threads = 2;
  return op.Propose(context, n);
}

/// The first `n` drafts of softmax or log_softmax: by construction they cover the
/// three variants, both math flavours, 1 and all threads.
void CheckDrafts(bool log, int n) {
  const auto drafts = Propose(SoftmaxProblem(log, {7, 1000}, -1), n);
  ASSERT_EQ(drafts.size(), static_cast<size_t>(n));
  std::set<std::string> variants, maths, threads;
  for (const auto& d : drafts) {
    EXPECT_EQ(d.template_name, "softmax_lastdim");
    variants.insert(d.knobs["algorithm"]);
    maths.insert(d.knobs["math"]);
    threads.insert(d.knobs["threads"]);
  }
  EXPECT_EQ(variants.size(), 3u);
  EXPECT_EQ(maths.size(), 2u);
  EXPECT_EQ(threads.size(), 2u);
  CheckSoftmaxCandidates(log, drafts);
}

TEST(TemplateSoftmaxKernel, SoftmaxDraftsMatchReference) { CheckDrafts(false, 7); }

TEST(TemplateSoftmaxKernel, LogSoftmaxDraftsMatchReference) { CheckDrafts(true, 7); }

TEST(TemplateSoftmaxKernel, RankOneSoftmaxWithDimZero) {
  const auto drafts = Propose(SoftmaxProblem(false, {37}, 0), 1);
  ASSERT_EQ(drafts.size(), 1u);
  CheckSoftmaxCandidates(false, drafts);
}

TEST(TemplateSoftmaxKernel, WholeKnobSpace_Slow) {
  if (!SlowTestsEnabled()) GTEST_SKIP() << "set KE_SLOW_TESTS=1 to run";
  for (bool log : {false, true}) {
    const auto all = Propose(SoftmaxProblem(log, {7, 1000}, -1), 100);
    EXPECT_EQ(all.size(), 24u);
    CheckSoftmaxCandidates(log, all);
  }
}

}  // namespace
}  // namespace kernelevolve::template_test
