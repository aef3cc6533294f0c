// The "scan" template: matching cumsum / cumprod graphs (with flips, prologues,
// epilogues, bool masks), and compiled candidates against a double-precision scan.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "operators/template/kernel_template.h"
#include "operators/template/scan_template.h"
#include "operators/template/template_operator.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

using operators::templates::MatchScan;
using operators::templates::MatchTemplate;
using operators::templates::ScanMatch;

/// x -> [flip] -> cumsum/cumprod(dim) -> [flip]; "out" is the output.
core::Problem ScanProblem(std::vector<int64_t> shape, int64_t dim, bool prod, bool reverse) {
  GraphBuilder g(std::move(shape));
  std::string x = g.Input("x");
  if (reverse) x = g.Call("flip", "aten.flip.default", {Ref("self", x), Val("dims", {dim})});
  const char* target = prod ? "aten.cumprod.default" : "aten.cumsum.default";
  std::string s = g.Call("scan", target, {Ref("self", x), Val("dim", dim), Val("dtype", nullptr)});
  if (reverse) s = g.Call("flip_1", "aten.flip.default", {Ref("self", s), Val("dims", {dim})});
  return g.Finish(s);
}

/// cumsum(sigmoid(x) * mask, dim) - x: a masked, exclusive-style scan with math.
core::Problem MaskedProblem(std::vector<int64_t> shape, int64_t dim) {
  GraphBuilder g(std::move(shape));
  g.Input("x");
  g.Input("mask");
  g.Graph().nodes.back().dtype = core::DType::kBool;
  g.Call("sig", "aten.sigmoid.default", {Ref("self", "x")});
  g.Call("mul", "aten.mul.Tensor", {Ref("self", "sig"), Ref("other", "mask")});
  g.Call("cumsum", "aten.cumsum.default", {Ref("self", "mul"), Val("dim", dim), Val("dtype", nullptr)});
  g.Call("sub", "aten.sub.Tensor", {Ref("self", "cumsum"), Ref("other", "x"), Val("alpha", 1)});
  return g.Finish("sub");
}

TEST(ScanTemplateMatch, CumsumLastDimIsARowScan) {
  const ScanMatch m = MatchScan(ScanProblem({4, 6}, -1, false, false).graph);
  ASSERT_TRUE(m.spec) << m.unsupported;
  EXPECT_EQ(m.spec->dim, 1);
  EXPECT_EQ(m.spec->outer, 4);
  EXPECT_EQ(m.spec->n, 6);
  EXPECT_EQ(m.spec->inner, 1);
  EXPECT_FALSE(m.spec->reverse);
  const auto match = MatchTemplate(ScanProblem({4, 6}, 1, false, false), 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "scan");
  EXPECT_NE(match.tmpl->Space().Find("algorithm"), nullptr);
  EXPECT_EQ(match.tmpl->Space().Find("math"), nullptr);  // identity prologue/epilogue
}

TEST(ScanTemplateMatch, FlipScanFlipIsAReverseColumnScan) {
  const ScanMatch m = MatchScan(ScanProblem({3, 5, 7}, 1, true, true).graph);
  ASSERT_TRUE(m.spec) << m.unsupported;
  EXPECT_TRUE(m.spec->reverse);
  EXPECT_EQ(m.spec->op, operators::templates::ScanOp::kProd);
  EXPECT_EQ(m.spec->outer, 3);
  EXPECT_EQ(m.spec->inner, 7);
  EXPECT_TRUE(m.spec->prologue_libm.statements.empty());  // the flip is an alias of x
}

TEST(ScanTemplateMatch, MaskedScanReadsABoolInputAndHasMath) {
  const ScanMatch m = MatchScan(MaskedProblem({4, 6}, 1).graph);
  ASSERT_TRUE(m.spec) << m.unsupported;
  ASSERT_EQ(m.spec->inputs.size(), 2u);
  EXPECT_TRUE(m.spec->inputs[1].is_bool);
  EXPECT_EQ(m.spec->prologue_libm.statements.size(), 2u);  // sigmoid, mul
  EXPECT_EQ(m.spec->epilogue_libm.statements.size(), 1u);  // sub
  const auto match = MatchTemplate(MaskedProblem({4, 6}, 1), 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_NE(match.tmpl->Space().Find("math"), nullptr);
}

TEST(ScanTemplateMatch, UnsupportedGraphsSayWhy) {
  // The scan template's own reasons; MatchTemplate then gives the graph to the loop
  // nest when the Core ATen lowering takes it (checked at the end).
  auto reason = [](const core::Problem& p) {
    const auto m = operators::templates::MatchScanTemplate(p, 1);
    return m ? m->unsupported : std::string("not a scan graph");
  };
  core::Problem p = ScanProblem({4, 6}, 1, false, true);
  p.graph.nodes[1].args[1].value = nlohmann::json::array({0});  // flip along dim 0
  EXPECT_EQ(reason(p).rfind("unsupported_op: aten.flip.default", 0), 0u)
      << reason(p);

  p = ScanProblem({4, 6}, 1, false, true);
  p.graph.outputs = {"scan"};  // the scan of a flip, not flipped back
  EXPECT_NE(reason(p).find("not flipped back"), std::string::npos);

  p = ScanProblem({4, 6}, 1, false, false);
  p.graph.nodes[1].target = "aten.logcumsumexp.default";
  EXPECT_EQ(reason(p), "unsupported_op: aten.logcumsumexp.default (the scan "
                                             "template handles cumsum and cumprod)");

  p = ScanProblem({4, 6}, 1, false, false);
  p.graph.nodes[1].args[2].value = "float64";
  EXPECT_EQ(reason(p).rfind("unsupported_op: aten.cumsum.default (dtype=", 0),
            0u);

  p = ScanProblem({4, 6}, 1, false, false);
  p.graph.nodes[1].args[1].value = 2;
  EXPECT_NE(reason(p).find("out of range"), std::string::npos);

  // Epilogue mixing the reversed scan with the unflipped input.
  GraphBuilder g({4, 6});
  g.Input("x");
  g.Call("flip", "aten.flip.default", {Ref("self", "x"), Val("dims", {1})});
  g.Call("scan", "aten.cumsum.default", {Ref("self", "flip"), Val("dim", 1), Val("dtype", nullptr)});
  g.Call("add", "aten.add.Tensor", {Ref("self", "scan"), Ref("other", "x"), Val("alpha", 1)});
  EXPECT_NE(reason(g.Finish("add")).find("flipped differently"),
            std::string::npos);
  const auto nest = MatchTemplate(g.Finish("add"), 1);
  ASSERT_TRUE(nest.tmpl) << nest.unsupported;
  EXPECT_EQ(nest.tmpl->Name(), "loop_nest");
  // logcumsumexp has no lowering either: the lowering's reason names the node.
  p = ScanProblem({4, 6}, 1, false, false);
  p.graph.nodes[1].target = "aten.logcumsumexp.default";
  EXPECT_EQ(MatchTemplate(p, 1).unsupported.rfind("unsupported_op: aten.logcumsumexp.default (node ", 0), 0u)
      << MatchTemplate(p, 1).unsupported;
}

TEST(ScanTemplateMatch, SafeValuesAndBaselineDraft) {
  const auto match = MatchTemplate(MaskedProblem({4, 6}, 1), 2);
  ASSERT_TRUE(match.tmpl);
  const auto& space = match.tmpl->Space();
  EXPECT_EQ(space.Find("accumulator")->safe_value, "float64");
  EXPECT_EQ(space.Find("threads")->safe_value, "1");
  EXPECT_EQ(space.Find("math")->safe_value, "libm");
  EXPECT_EQ(space.Find("algorithm")->safe_value, "sequential");
  const nlohmann::json baseline = {
      {"accumulator", "float64"}, {"math", "libm"}, {"threads", "1"}, {"algorithm", "sequential"}};
  EXPECT_EQ(match.tmpl->Drafts().front(), baseline);
}

// ---- compiled kernels ---------------------------------------------------------

/// Runs `entry` on float inputs plus one optional bool input (last); returns rc.
int RunScan(platforms::cpu::EntryFn entry, std::vector<std::vector<float>>& floats,
            std::vector<uint8_t>* mask, std::vector<int64_t> shape, std::vector<float>& out) {
  std::vector<DLTensor> in;
  for (auto& v : floats) in.push_back(FloatTensor(v.data(), shape));
  if (mask != nullptr) {
    DLTensor t = FloatTensor(nullptr, shape);
    t.data = mask->data();
    t.dtype = {kDLUInt, 8, 1};
    in.push_back(t);
  }
  DLTensor o = FloatTensor(out.data(), shape);
  return entry(in.data(), static_cast<int32_t>(in.size()), &o, 1);
}

/// Double-precision reference: out[i] = epi(scan of pro over dim, i).
std::vector<double> Reference(const std::vector<int64_t>& shape, int64_t dim, bool prod,
                              bool reverse, const std::function<double(size_t)>& pro,
                              const std::function<double(double, size_t)>& epi) {
  int64_t outer = 1, n = shape[dim], inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) < dim) outer *= shape[d];
    if (static_cast<int64_t>(d) > dim) inner *= shape[d];
  }
  std::vector<double> y(outer * n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < inner; ++c) {
      double acc = prod ? 1 : 0;
      for (int64_t k = 0; k < n; ++k) {
        const size_t i = (o * n + (reverse ? n - 1 - k : k)) * inner + c;
        acc = prod ? acc * pro(i) : acc + pro(i);
        y[i] = epi(static_cast<float>(acc), i);
      }
    }
  }
  return y;
}

struct Case {
  core::Problem problem;
  std::vector<std::vector<int64_t>> shapes;  // run shapes (same rank as the problem)
  int64_t dim;
  bool prod;
  bool reverse;
  bool masked;  // MaskedProblem
};

/// Compiles every candidate and checks it on every shape of the case; returns the
/// loaded kernels.
std::vector<std::unique_ptr<LoadedKernel>> CheckCandidates(
    const Case& c, const std::vector<core::Candidate>& candidates) {
  std::vector<std::string> sources;
  for (const auto& cand : candidates) sources.push_back(cand.source);
  auto kernels = CompileAll(sources, kVectorizeReport);
  for (size_t k = 0; k < kernels.size(); ++k) {
    SCOPED_TRACE(candidates[k].knobs.dump());
    if (kernels[k]->entry == nullptr) {
      ADD_FAILURE() << kernels[k]->log;
      continue;
    }
    const bool simd = candidates[k].knobs.value("algorithm", "") == "simd" ||
                      candidates[k].knobs.value("loop_order", "") == "row";
    if (simd && !c.masked) ExpectSimdLoopsVectorized(candidates[k].source, kernels[k]->log);
    const double tol = candidates[k].knobs["accumulator"] == "float32" ? 1e-3 : 1e-4;
    for (const auto& shape : c.shapes) {
      int64_t numel = 1;
      for (int64_t d : shape) numel *= d;
      std::vector<std::vector<float>> in = {TestValues(numel, 7, 1.0f)};
      for (auto& v : in[0]) v = c.prod ? 1.0f + 0.05f * std::tanh(v) : std::tanh(v);
      std::vector<uint8_t> mask(numel);
      for (int64_t i = 0; i < numel; ++i) mask[i] = (i * 7919 % 13) < 8 ? 1 : 0;
      std::vector<float> out(numel, NAN);
      EXPECT_EQ(RunScan(kernels[k]->entry, in, c.masked ? &mask : nullptr, shape, out), 0);
      const auto& x = in[0];
      auto pro = [&](size_t i) -> double {
        return c.masked ? (1.0 / (1.0 + std::exp(-static_cast<double>(x[i])))) * mask[i] : x[i];
      };
      auto epi = [&](double s, size_t i) { return c.masked ? s - x[i] : s; };
      const auto want = Reference(shape, c.dim, c.prod, c.reverse, pro, epi);
      int failures = 0;
      for (int64_t i = 0; i < numel && failures < 3; ++i) {
        if (!Close(out[i], want[i], tol)) {
          ++failures;
          ADD_FAILURE() << "shape[0]=" << shape[0] << " i=" << i << " got " << out[i] << " want "
                        << want[i];
        }
      }
    }
  }
  return kernels;
}

std::vector<core::Candidate> Propose(const core::Problem& p, int n) {
  operators::TemplateOperator op;
  operators::OperatorContext context;
  context.problem = &p;
  context.threads = 2;
  return op.Propose(context, n);
}

TEST(ScanTemplateKernel, RowCumsumDraftsMatchReference) {
  // n = 20000 spans three 8192-element blocks (and a partial one).
  Case c{ScanProblem({5, 300}, 1, false, false), {{5, 300}, {3, 20000}, {2, 1}}, 1, false, false,
         false};
  const auto drafts = Propose(c.problem, 6);  // sequential, simd, blocked; float and double
  ASSERT_EQ(drafts.size(), 6u);
  CheckCandidates(c, drafts);
}

TEST(ScanTemplateKernel, ReverseCumprodAlongAMiddleDim) {
  Case c{ScanProblem({3, 40, 33}, 1, true, true), {{3, 40, 33}, {2, 7, 5000}}, 1, true, true,
         false};
  const auto drafts = Propose(c.problem, 5);  // column and row orders, tiles, float, 1 thread
  ASSERT_EQ(drafts.size(), 5u);
  CheckCandidates(c, drafts);
}

TEST(ScanTemplateKernel, ReverseBlockedRowCumsum) {
  Case c{ScanProblem({4, 3000}, -1, false, true), {{4, 3000}, {1, 20000}}, 1, false, true, false};
  const auto match = MatchTemplate(c.problem, 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  std::vector<core::Candidate> candidates;
  for (const nlohmann::json knobs : {
           nlohmann::json{{"algorithm", "blocked"}, {"block", 1024}, {"threads", "all"}},
           nlohmann::json{{"algorithm", "simd"}, {"threads", "1"}},
           nlohmann::json{{"algorithm", "sequential"}, {"accumulator", "float32"}}}) {
    core::Candidate cand;
    cand.knobs = match.tmpl->Space().Canonical(knobs);
    cand.source = match.tmpl->Generate(cand.knobs);
    candidates.push_back(cand);
  }
  CheckCandidates(c, candidates);
}

TEST(ScanTemplateKernel, MaskedExclusiveScanWithBoolInput) {
  Case c{MaskedProblem({6, 500}, 1), {{6, 500}, {2, 9000}}, 1, false, false, true};
  const auto drafts = Propose(c.problem, 4);
  ASSERT_EQ(drafts.size(), 4u);
  const auto kernels = CheckCandidates(c, drafts);
  // A shape of another rank makes the kernel refuse (rc 3).
  ASSERT_NE(kernels[0]->entry, nullptr);
  std::vector<std::vector<float>> in = {std::vector<float>(12, 1.0f)};
  std::vector<uint8_t> mask(12, 1);
  std::vector<float> out(12);
  EXPECT_EQ(RunScan(kernels[0]->entry, in, &mask, {3, 2, 2}, out), 3);
}

}  // namespace
}  // namespace kernelevolve::template_test
