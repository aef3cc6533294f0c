// The explicit attention spelling, softmax(q k^T * scale + mask) v, read back into the
// attention family's spec (ir/attention_explicit.h) from real captures
// (tests/unit/data/attention/make_cases.py): which spellings match and with what spec
// (causal triu / tril / tril-on-floats, bool masks either way round, 3-d torch.bmm, an
// additive bias, scales on q, k or the scores, none), which are refused (softmax over
// another dim, -1e9, another diagonal, a scale after the mask, dropout, broadcast heads,
// a scaled v, an op after the product, float64, another value head size), and the fused
// CPU kernel of every match against the eager output.
#include <gtest/gtest.h>
#include <omp.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "eval/safetensors.h"
#include "operators/families/attention/attention_template.h"
#include "operators/ir/attention.h"
#include "operators/ir/attention_explicit.h"
#include "operators/template/kernel_template.h"
#include "template_test_util.h"
#include "host_tensor_view.h"

namespace kernelevolve::template_test {
namespace {

namespace families = operators::families;
namespace ir = operators::ir;
namespace templates = operators::templates;

const std::filesystem::path kCases =
    std::filesystem::path(KE_TEST_DATA_DIR) / "unit" / "data" / "attention";

core::OpGraph CaseGraph(const std::string& name) {
  std::ifstream in(kCases / (name + ".json"));
  EXPECT_TRUE(in.good()) << "missing " << name << ".json (run make_cases.py)";
  return core::OpGraphFromJson(nlohmann::json::parse(in));
}

/// What the matcher should read from a match_* case.
struct Expected {
  const char* name;
  int rank;
  bool causal;
  int mask;  // ABI index or -1
  bool mask_bool, mask_inverted;
  double scale;
};

const std::vector<Expected>& Matches() {
  static const std::vector<Expected> cases = {
      {"match_causal_triu", 4, true, -1, false, false, 0.3},
      {"match_causal_not_tril", 4, true, -1, false, false, 0.3},
      {"match_causal_where_keep", 4, true, -1, false, false, 0.3},
      {"match_causal_float_tril", 4, true, -1, false, false, 0.3},
      {"match_pad_mask", 4, false, 3, true, true, 0.25},  // / sqrt(16)
      {"match_keep_mask", 4, false, 3, true, false, 0.25},
      {"match_bmm3d", 3, false, -1, false, false, 1.0 / std::sqrt(20.0)},
      {"match_bmm3d_pad_causal", 3, true, 3, true, true, 0.4},
      {"match_bias_scaled_q", 4, false, 3, false, false, 1.0 / std::sqrt(8.0)},
      {"match_unscaled", 4, false, -1, false, false, 1.0},
      {"match_scaled_k", 4, false, -1, false, false, 0.5},
      {"match_pad_full_rows", 4, false, 3, true, true, 0.25},  // rows of NaN, as eager
  };
  return cases;
}

TEST(AttentionExplicit, ReadsTheCapturedSpellingsBack) {
  for (const Expected& e : Matches()) {
    SCOPED_TRACE(e.name);
    const core::OpGraph graph = CaseGraph(e.name);
    const std::optional<ir::AttentionSpec> spec = ir::MatchAttention(graph);
    ASSERT_TRUE(spec.has_value());
    EXPECT_EQ(spec->rank, e.rank);
    EXPECT_EQ(spec->q, 0);
    EXPECT_EQ(spec->k, 1);
    EXPECT_EQ(spec->v, 2);
    EXPECT_EQ(spec->causal, e.causal);
    EXPECT_EQ(spec->mask, e.mask);
    EXPECT_EQ(spec->mask_bool, e.mask_bool);
    EXPECT_EQ(spec->mask_inverted, e.mask_inverted);
    ASSERT_TRUE(spec->scale.has_value());  // the explicit spelling has no default scale
    EXPECT_NEAR(*spec->scale, e.scale, 1e-12);
    EXPECT_EQ(spec->num_inputs, e.mask >= 0 ? 4 : 3);
    // The template operator picks the attention family for it.
    core::Problem problem;
    problem.name = e.name;
    problem.graph = graph;
    const auto match = templates::MatchTemplate(problem, 2, 8);
    ASSERT_NE(match.tmpl, nullptr) << match.unsupported;
    EXPECT_EQ(match.tmpl->Name(), "attention");
  }
}

TEST(AttentionExplicit, LeavesOtherSpellingsToTheLoopNest) {
  for (const char* name : {"refuse_softmax_dim2", "refuse_fill_minus_1e9", "refuse_triu_diagonal_0",
                           "refuse_tril_diagonal_1", "refuse_scale_after_mask", "refuse_dropout",
                           "refuse_broadcast_heads", "refuse_scaled_v", "refuse_relu_after",
                           "refuse_float64", "refuse_value_head_size"}) {
    SCOPED_TRACE(name);
    const core::OpGraph graph = CaseGraph(name);
    ASSERT_FALSE(graph.nodes.empty());
    EXPECT_FALSE(ir::MatchExplicitAttention(graph).has_value());
    EXPECT_FALSE(ir::MatchAttention(graph).has_value());
  }
  // A refused graph still compiles as it stands (today's path).
  core::Problem problem;
  problem.name = "refuse_triu_diagonal_0";
  problem.graph = CaseGraph(problem.name);
  const auto match = templates::MatchTemplate(problem, 2, 8);
  ASSERT_NE(match.tmpl, nullptr) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "loop_nest");
}

TEST(AttentionExplicit, GraphEditsThatMustNotMatch) {
  // Edits of a matching capture: each removes one condition of the header's list.
  const core::OpGraph base = CaseGraph("match_causal_triu");
  ASSERT_TRUE(ir::MatchExplicitAttention(base).has_value());
  auto edited = [&](const std::string& node, auto edit) {
    core::OpGraph g = base;
    for (auto& n : g.nodes) {
      if (n.name == node) edit(n);
    }
    return ir::MatchExplicitAttention(g).has_value();
  };
  // softmax with half_to_float, the arange of the rows starting at 1 (another diagonal),
  // the comparison's threshold 2, an expand that would broadcast, a mask fill of +inf.
  EXPECT_FALSE(edited("_softmax", [](core::OpNode& n) {
    for (auto& a : n.args) {
      if (a.name == "half_to_float") a.value = true;
    }
  }));
  EXPECT_FALSE(edited("arange_1", [](core::OpNode& n) {
    for (auto& a : n.args) {
      if (a.name == "start") a.value = 1;
    }
  }));
  EXPECT_FALSE(edited("ge", [](core::OpNode& n) {
    for (auto& a : n.args) {
      if (a.name == "other") a.value = 2;
    }
  }));
  EXPECT_FALSE(edited("scalar_tensor", [](core::OpNode& n) {
    for (auto& a : n.args) {
      if (a.name == "s") a.value = "inf";
    }
  }));
  // Two outputs (the scores too).
  core::OpGraph two = base;
  two.outputs.push_back("_softmax");
  EXPECT_FALSE(ir::MatchExplicitAttention(two).has_value());
}

// ---- the fused CPU kernel against eager ------------------------------------------------

TEST(AttentionExplicit, FusedKernelsMatchEager) {
  const std::vector<nlohmann::json> settings = {
      {{"threads", "1"}, {"block_m", 32}, {"block_n", 64}},
      {{"threads", "all"}, {"block_m", 8}, {"block_n", 32}}};
  std::vector<std::string> sources;
  for (const Expected& e : Matches()) {
    const auto match =
        families::MatchAttention(CaseGraph(e.name), true, core::HostCpuIsa().vector_bits / 32);
    ASSERT_TRUE(match.has_value()) << e.name;
    for (const auto& s : settings) sources.push_back(match->tmpl->Generate(s));
  }
  const auto kernels = CompileAll(sources);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(3);
  for (size_t c = 0; c < Matches().size(); ++c) {
    const std::string name = Matches()[c].name;
    for (size_t s = 0; s < settings.size(); ++s) {
      const auto& kernel = kernels[c * settings.size() + s];
      const std::string what = name + " " + settings[s].dump();
      ASSERT_NE(kernel->entry, nullptr) << what << "\n" << kernel->log;
      auto file = eval::ReadSafetensors(kCases / (name + ".safetensors"));
      std::vector<DLTensor> in;
      const int num_inputs = Matches()[c].mask >= 0 ? 4 : 3;  // in.0 .. in.3, in order
      for (int k = 0; k < num_inputs; ++k) {
        for (auto& t : file.tensors) {
          if (t.name == "in." + std::to_string(k)) in.push_back(testing_util::HostView(t));
        }
      }
      ASSERT_EQ(static_cast<int>(in.size()), num_inputs) << what;
      const eval::HostTensor& want = file.Get("out.0");
      eval::HostTensor got = want;
      std::fill(got.bytes.begin(), got.bytes.end(), std::byte{0xff});  // NaN until written
      DLTensor out = testing_util::HostView(got);
      ASSERT_EQ(kernel->entry(in.data(), static_cast<int32_t>(in.size()), &out, 1), 0) << what;
      int bad = 0;
      for (int64_t e = 0; e < want.NumElements(); ++e) {
        const float g = got.Data<float>()[e], w = want.Data<float>()[e];
        if (!Close(g, w, 1e-4) && ++bad <= 3)
          ADD_FAILURE() << what << ": element " << e << " = " << g << ", eager " << w;
      }
      EXPECT_EQ(bad, 0) << what;
    }
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace kernelevolve::template_test
