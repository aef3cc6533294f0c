// Compiles the pointwise template's candidates and checks them against scalar
// double-precision references on randn-like and large-magnitude inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "operators/template/kernel_template.h"
#include "operators/template/template_operator.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

const std::vector<int64_t> kShape = {3, 4133};  // 12399 elements: 4 blocks of 4096, odd tails

struct ActivationCase {
  std::string name;
  std::function<std::string(GraphBuilder&, const std::string& x)> build;  // returns the output
  std::function<double(double)> ref;
};

std::string Unary(GraphBuilder& g, const std::string& x, const std::string& target,
                  std::vector<core::OpArg> extra = {}) {
  std::vector<core::OpArg> args = {Ref("self", x)};
  for (auto& a : extra) args.push_back(a);
  return g.Call("y", target, args);
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

const std::vector<ActivationCase>& Activations() {
  static const double kSeluAlpha = 1.6732632423543772, kSeluScale = 1.0507009873554805;
  static const std::vector<ActivationCase> kCases = {
      {"relu", [](auto& g, auto& x) { return Unary(g, x, "aten.relu.default"); },
       [](double x) { return x < 0 ? 0.0 : x; }},
      {"leaky_relu",
       [](auto& g, auto& x) {
         return Unary(g, x, "aten.leaky_relu.default", {Val("negative_slope", 0.01)});
       },
       [](double x) { return x > 0 ? x : 0.01 * x; }},
      {"gelu",
       [](auto& g, auto& x) {
         return Unary(g, x, "aten.gelu.default", {Val("approximate", "none")});
       },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu_tanh",
       [](auto& g, auto& x) {
         return Unary(g, x, "aten.gelu.default", {Val("approximate", "tanh")});
       },
       [](double x) {
         return 0.5 * x * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
       }},
      {"sigmoid", [](auto& g, auto& x) { return Unary(g, x, "aten.sigmoid.default"); }, Sigmoid},
      {"tanh", [](auto& g, auto& x) { return Unary(g, x, "aten.tanh.default"); },
       [](double x) { return std::tanh(x); }},
      {"silu", [](auto& g, auto& x) { return Unary(g, x, "aten.silu.default"); },
       [](double x) { return x * Sigmoid(x); }},
      {"softplus",
       [](auto& g, auto& x) {
         return Unary(g, x, "aten.softplus.default", {Val("beta", 1), Val("threshold", 20)});
       },
       [](double x) { return x > 20 ? x : std::log1p(std::exp(x)); }},
      {"softplus_beta2",
       [](auto& g, auto& x) {
         return Unary(g, x, "aten.softplus.default", {Val("beta", 2.0), Val("threshold", 10)});
       },
       [](double x) { return 2 * x > 10 ? x : std::log1p(std::exp(2 * x)) / 2; }},
      {"elu",
       [](auto& g, auto& x) {
         return Unary(g, x, "aten.elu.default",
                      {Val("alpha", 1.0), Val("scale", 1), Val("input_scale", 1)});
       },
       [](double x) { return x > 0 ? x : std::expm1(x); }},
      {"selu",
       [](auto& g, auto& x) {
         return Unary(g, x, "aten.elu.default",
                      {Val("alpha", kSeluAlpha), Val("scale", kSeluScale), Val("input_scale", 1)});
       },
       [](double x) { return kSeluScale * (x > 0 ? x : kSeluAlpha * std::expm1(x)); }},
      {"hardtanh",
       [](auto& g, auto& x) {
         return Unary(g, x, "aten.hardtanh.default", {Val("min_val", -1.0), Val("max_val", 1.0)});
       },
       [](double x) { return std::min(std::max(x, -1.0), 1.0); }},
      {"hardsigmoid", [](auto& g, auto& x) { return Unary(g, x, "aten.hardsigmoid.default"); },
       [](double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; }},
      {"softsign",
       [](auto& g, auto& x) {
         g.Call("abs_1", "aten.abs.default", {Ref("self", x)});
         g.Call("add", "aten.add.Tensor", {Ref("self", "abs_1"), Val("other", 1), Val("alpha", 1)});
         return g.Call("div", "aten.div.Tensor", {Ref("self", x), Ref("other", "add")});
       },
       [](double x) { return x / (1 + std::fabs(x)); }},
      {"swish",
       [](auto& g, auto& x) {
         g.Call("sigmoid", "aten.sigmoid.default", {Ref("self", x)});
         return g.Call("mul", "aten.mul.Tensor", {Ref("self", x), Ref("other", "sigmoid")});
       },
       [](double x) { return x * Sigmoid(x); }},
  };
  return kCases;
}

core::Problem BuildProblem(const ActivationCase& c) {
  GraphBuilder g(kShape);
  const std::string x = g.Input("x");
  const std::string out = c.build(g, x);
  return g.Finish(out);
}

/// Compiles every candidate (two compilers at a time) and checks candidate k
/// against cases[k]->ref on TestValues with two seeds (scale 2 and scale 30). With
/// `check_vectorized`, also expects every `omp simd` loop of the vectorized variants
/// to be vectorized.
void CheckCandidates(const std::vector<core::Candidate>& candidates,
                     const std::vector<const ActivationCase*>& cases,
                     bool check_vectorized = false) {
  std::vector<std::string> sources;
  for (const auto& c : candidates) sources.push_back(c.source);
  const auto kernels = CompileAll(sources, check_vectorized ? kVectorizeReport : "");
  for (size_t k = 0; k < kernels.size(); ++k) {
    SCOPED_TRACE(cases[k]->name + " " + candidates[k].knobs.dump());
    ASSERT_NE(kernels[k]->entry, nullptr) << kernels[k]->log;
    if (check_vectorized && candidates[k].knobs["simd"] == "on") {
      ExpectSimdLoopsVectorized(candidates[k].source, kernels[k]->log);
    }
    for (uint32_t seed : {1u, 2u}) {
      std::vector<std::vector<float>> in = {TestValues(3 * 4133, seed, seed == 1 ? 2.0f : 30.0f)};
      std::vector<float> out(in[0].size(), -12345.0f);
      ASSERT_EQ(RunKernel(kernels[k]->entry, in, kShape, out), 0);
      int failures = 0;
      for (size_t i = 0; i < out.size() && failures < 3; ++i) {
        const double want = cases[k]->ref(in[0][i]);
        if (!Close(out[i], want)) {
          ++failures;
          ADD_FAILURE() << "x=" << in[0][i] << " got " << out[i] << " want " << want << " (i=" << i
                        << ")";
        }
      }
    }
  }
}

std::vector<core::Candidate> Drafts(const core::Problem& problem, int n) {
  operators::TemplateOperator op;
  operators::OperatorContext context;
  context.problem = &problem;
  context.threads = 2;
  return op.Propose(context, n);
}

/// Draft `index` of every activation (0: the scalar std:: baseline, 1: vectorized
/// prelude with all threads), compiled and checked; vectorized drafts must also
/// really vectorize (the reason the prelude exists).
void CheckDraftOfEveryActivation(size_t index, const std::string& simd) {
  std::vector<core::Candidate> candidates;
  std::vector<const ActivationCase*> cases;
  for (const auto& a : Activations()) {
    const core::Problem p = BuildProblem(a);
    const auto drafts = Drafts(p, static_cast<int>(index) + 1);
    ASSERT_EQ(drafts.size(), index + 1) << a.name;
    EXPECT_EQ(drafts[index].knobs["simd"], simd) << a.name;
    candidates.push_back(drafts[index]);
    cases.push_back(&a);
  }
  CheckCandidates(candidates, cases, simd == "on");
}

TEST(TemplatePointwiseKernel, ScalarBaselineMatchesReferenceForEveryActivation) {
  CheckDraftOfEveryActivation(0, "off");
}

TEST(TemplatePointwiseKernel, VectorizedDraftMatchesReferenceForEveryActivation) {
  CheckDraftOfEveryActivation(1, "on");
}

// Every curated draft (unroll 2/4, 4096/65536 blocks, scalar threaded, ...) plus the
// neighbours of a correct parent, on gelu (erf and exp of the prelude).
TEST(TemplatePointwiseKernel, AllDraftsAndNeighboursMatchReference) {
  const ActivationCase& gelu = Activations()[2];
  ASSERT_EQ(gelu.name, "gelu");
  const core::Problem p = BuildProblem(gelu);
  auto candidates = Drafts(p, 8);
  search::Node parent;
  parent.candidate = candidates[1];
  parent.evaluation.status = core::Status::kOk;
  parent.evaluation.correct = true;
  std::unordered_set<std::string> seen;
  for (const auto& d : candidates) seen.insert(core::ContentHash(d.source));
  operators::TemplateOperator op;
  operators::OperatorContext context;
  context.problem = &p;
  context.threads = 2;
  context.parent = &parent;
  context.seen_hashes = &seen;
  for (auto& nb : op.Propose(context, 3)) candidates.push_back(std::move(nb));
  ASSERT_EQ(candidates.size(), 11u);
  CheckCandidates(candidates, std::vector<const ActivationCase*>(candidates.size(), &gelu), true);
}

// A two-input graph with scalar operands, comparisons and where: multi-input ABI.
TEST(TemplatePointwiseKernel, TwoInputGraphWithWhereAndScalars) {
  GraphBuilder g(kShape);
  g.Input("x");
  g.Input("y");
  g.Call("mul", "aten.mul.Tensor", {Ref("self", "x"), Ref("other", "y")});
  g.Call("sub", "aten.sub.Tensor", {Ref("self", "mul"), Val("other", 0.5), Val("alpha", 2)});
  g.Call("gt", "aten.gt.Scalar", {Ref("self", "x"), Val("other", 0)}, core::DType::kBool);
  g.Call("maximum", "aten.maximum.default", {Ref("self", "sub"), Ref("other", "y")});
  g.Call("exp", "aten.exp.default", {Ref("self", "y")});
  g.Call("clamp", "aten.clamp.default",
         {Ref("self", "exp"), Val("min", nullptr), Val("max", 10.0)});
  g.Call("where", "aten.where.self",
         {Ref("condition", "gt"), Ref("self", "maximum"), Ref("other", "clamp")});
  const core::Problem p = g.Finish("where");
  const auto candidates = Drafts(p, 2);
  ASSERT_EQ(candidates.size(), 2u);
  std::vector<std::string> sources = {candidates[0].source, candidates[1].source};
  const auto kernels = CompileAll(sources);
  for (size_t k = 0; k < kernels.size(); ++k) {
    ASSERT_NE(kernels[k]->entry, nullptr) << kernels[k]->log;
    std::vector<std::vector<float>> in = {TestValues(3 * 4133, 5), TestValues(3 * 4133, 6, 1.0f)};
    std::vector<float> out(in[0].size());
    ASSERT_EQ(RunKernel(kernels[k]->entry, in, kShape, out), 0);
    for (size_t i = 0; i < out.size(); ++i) {
      const double x = in[0][i], y = in[1][i];
      const double want = x > 0 ? std::max(x * y - 1.0, y) : std::min(std::exp(y), 10.0);
      ASSERT_TRUE(Close(out[i], want)) << candidates[k].knobs << " x=" << x << " y=" << y << " got "
                                       << out[i] << " want " << want;
    }
  }
}

TEST(TemplatePointwiseKernel, EntryRejectsMismatchedTensors) {
  const core::Problem p = BuildProblem(Activations()[0]);  // relu
  const auto candidates = Drafts(p, 1);
  const auto kernel = CompileAndLoad(candidates[0].source, 0);
  ASSERT_NE(kernel->entry, nullptr) << kernel->log;
  std::vector<int64_t> shape = {4, 8};
  std::vector<int64_t> other_shape = {4, 7};
  std::vector<float> x(32, -1.0f), y(32, 7.0f);
  x[3] = 2.0f;
  DLTensor in = FloatTensor(x.data(), shape);
  DLTensor out = FloatTensor(y.data(), shape);
  EXPECT_EQ(kernel->entry(&in, 2, &out, 1), 1);
  DLTensor wrong_dtype = in;
  wrong_dtype.dtype = {kDLFloat, 64, 1};
  EXPECT_EQ(kernel->entry(&wrong_dtype, 1, &out, 1), 2);
  DLTensor wrong_count = FloatTensor(y.data(), other_shape);
  EXPECT_EQ(kernel->entry(&in, 1, &wrong_count, 1), 3);
  std::vector<int64_t> transposed = {1, 4};
  DLTensor strided = in;
  strided.strides = transposed.data();
  EXPECT_EQ(kernel->entry(&strided, 1, &out, 1), 4);
  std::vector<int64_t> dense = {8, 1};
  DLTensor explicit_dense = in;
  explicit_dense.strides = dense.data();
  EXPECT_EQ(kernel->entry(&explicit_dense, 1, &out, 1), 0);
  EXPECT_EQ(y[3], 2.0f);
  EXPECT_EQ(y[0], 0.0f);
  // byte_offset is honoured: read from the second row.
  std::vector<int64_t> row = {8};
  DLTensor offset_in = FloatTensor(x.data(), row);
  offset_in.byte_offset = 8 * sizeof(float);
  x[9] = 5.0f;
  DLTensor row_out = FloatTensor(y.data(), row);
  EXPECT_EQ(kernel->entry(&offset_in, 1, &row_out, 1), 0);
  EXPECT_EQ(y[1], 5.0f);
}

// simd_math (the explicit AVX-512 ke_log_v16) exists on 16-lane machines for graphs that
// take a log, and its setting changes the fused function's log call, nothing else.
TEST(TemplatePointwiseKernel, SimdMathKnobSpellsTheLogOfLogGraphsOnSixteenLanes) {
  GraphBuilder g(kShape);
  const std::string x = g.Input("x");
  const std::string a = g.Call("a", "aten.abs.default", {Ref("self", x)});
  const core::Problem log_problem = g.Finish(g.Call("y", "aten.log.default", {Ref("self", a)}));
  const core::Problem relu_problem = BuildProblem(Activations()[0]);
  EXPECT_EQ(operators::templates::MatchTemplate(log_problem, 2, 8).tmpl->Space().Find("math"), nullptr);
  EXPECT_EQ(operators::templates::MatchTemplate(relu_problem, 2, 16).tmpl->Space().Find("math"), nullptr);
  const auto match = operators::templates::MatchTemplate(log_problem, 2, 16);
  ASSERT_NE(match.tmpl->Space().Find("math"), nullptr);
  const nlohmann::json base = {{"simd", "on"}, {"vector_width", 16}, {"threads", "1"}};
  nlohmann::json avx512 = base;
  avx512["math"] = "avx512";
  const std::string portable_src = match.tmpl->Generate(match.tmpl->Space().Canonical(base));
  const std::string avx512_src = match.tmpl->Generate(match.tmpl->Space().Canonical(avx512));
  const auto kernel_of = [](const std::string& s) { return s.substr(s.find("// ---- kernel ---")); };
  EXPECT_NE(kernel_of(portable_src).find("ke_log("), std::string::npos);
  EXPECT_EQ(kernel_of(portable_src).find("ke_log_v16("), std::string::npos);
  EXPECT_NE(kernel_of(avx512_src).find("ke_log_v16("), std::string::npos);
  EXPECT_EQ(kernel_of(avx512_src).find("ke_log("), std::string::npos);
}

// Every setting of the knob space for every activation (about 350 compiles).
TEST(TemplatePointwiseKernel, WholeKnobSpaceForEveryActivation_Slow) {
  if (!SlowTestsEnabled()) GTEST_SKIP() << "set KE_SLOW_TESTS=1 to run";
  for (const auto& a : Activations()) {
    const core::Problem p = BuildProblem(a);
    const auto all = Drafts(p, 100);
    EXPECT_EQ(all.size(), 24u) << a.name;
    CheckCandidates(all, std::vector<const ActivationCase*>(all.size(), &a), true);
  }
}

}  // namespace
}  // namespace kernelevolve::template_test
