// The CPU's attention family (families/attention, codegen/cpp/attention_cpp.h) and the
// loop-nest lowering of the same node (lower_core_heavy.cpp): which captured graphs the
// matcher takes (F.scaled_dot_product_attention as the CPU capture records it: plain,
// causal, a float mask, a bool mask as where(mask, 0, -inf), a given scale), and the
// kernels compiled and run in-process against a float64 reference: sizes that are no
// multiple of the blocks or of the vector width, causal with L < S and L > S, a mask
// broadcast over batch and heads, a query row whose every key is masked (0, as PyTorch).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "operators/families/attention/attention_template.h"
#include "operators/families/loop_nest/loop_nest_template.h"
#include "operators/ir/attention.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

namespace families = operators::families;

constexpr const char* kSdpa = "aten._scaled_dot_product_flash_attention_for_cpu.default";

struct Sizes {
  int64_t b, h, l, s, e;
};

/// What the graph holds: the mask ("" none, "float" additive, "bool"), its shape, causal,
/// the scale (0: null, PyTorch's default), dropout, which result is the output.
struct Form {
  std::string mask;
  std::vector<int64_t> mask_shape;
  bool causal = false;
  std::optional<double> scale;  // nullopt: null (PyTorch's default 1 / sqrt(E))
  double dropout = 0;
  int output = 0;
  std::string extra_call;  // a call the family does not take, appended after the output
};

core::OpNode Placeholder(const std::string& name, int abi, std::vector<int64_t> shape, core::DType dtype) {
  core::OpNode n;
  n.name = name;
  n.kind = core::OpNodeKind::kPlaceholder;
  n.abi_index = abi;
  n.shape = std::move(shape);
  n.dtype = dtype;
  return n;
}

core::OpNode Call(const std::string& name, const std::string& target, std::vector<core::OpArg> args,
                  std::vector<int64_t> shape, core::DType dtype = core::DType::kFloat32) {
  core::OpNode n;
  n.name = name;
  n.target = target;
  n.args = std::move(args);
  n.shape = std::move(shape);
  n.dtype = dtype;
  return n;
}

/// The graph make_fx records for F.scaled_dot_product_attention on the CPU (the
/// worker's capture; a bool mask arrives as where(mask, scalar_tensor(0), scalar_tensor(-inf))).
core::OpGraph SdpaGraph(const Sizes& z, const Form& f) {
  core::OpGraph g;
  g.nodes.push_back(Placeholder("q", 0, {z.b, z.h, z.l, z.e}, core::DType::kFloat32));
  g.nodes.push_back(Placeholder("k", 1, {z.b, z.h, z.s, z.e}, core::DType::kFloat32));
  g.nodes.push_back(Placeholder("v", 2, {z.b, z.h, z.s, z.e}, core::DType::kFloat32));
  core::OpArg mask = Val("attn_mask", nullptr);
  if (!f.mask.empty()) {
    const bool is_bool = f.mask == "bool";
    g.nodes.push_back(Placeholder("m", 3, f.mask_shape, is_bool ? core::DType::kBool : core::DType::kFloat32));
    mask = Ref("attn_mask", "m");
    if (is_bool) {
      g.nodes.push_back(Call("zero", "aten.scalar_tensor.default", {Val("s", 0.0)}, {}));
      g.nodes.push_back(Call("minus_inf", "aten.scalar_tensor.default", {Val("s", "-inf")}, {}));
      g.nodes.push_back(Call("where", "aten.where.self",
                             {Ref("condition", "m"), Ref("self", "zero"), Ref("other", "minus_inf")}, f.mask_shape));
      mask = Ref("attn_mask", "where");
    }
  }
  g.nodes.push_back(Call("sdpa", kSdpa,
                         {Ref("query", "q"), Ref("key", "k"), Ref("value", "v"), Val("dropout_p", f.dropout),
                          Val("is_causal", f.causal), mask,
                          f.scale ? Val("scale", *f.scale) : Val("scale", nullptr)},
                         {z.b, z.h, z.l, z.e}));
  g.nodes.push_back(Call("getitem", "getitem", {Ref("self", "sdpa"), Val("index", 0)}, {z.b, z.h, z.l, z.e}));
  g.nodes.push_back(Call("getitem_1", "getitem", {Ref("self", "sdpa"), Val("index", 1)}, {z.b, z.h, z.l}));
  g.outputs = {f.output == 0 ? "getitem" : "getitem_1"};
  if (!f.extra_call.empty()) {
    g.nodes.push_back(Call("extra", f.extra_call, {Ref("self", "getitem")}, {z.b, z.h, z.l, z.e}));
    g.outputs = {"extra"};
  }
  return g;
}

/// Inputs of one case: q, k, v and the mask (floats; a bool mask as 0 / 1).
struct Case {
  std::string name;
  Sizes z;
  std::vector<int64_t> mask_shape;  // empty: no mask
  std::vector<float> q, k, v, mask;
};

Case MakeCase(const std::string& name, Sizes z, std::vector<int64_t> mask_shape, bool bool_mask, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Case c{name, z, std::move(mask_shape), {}, {}, {}, {}};
  auto fill = [&](std::vector<float>& x, int64_t n) {
    x.resize(static_cast<size_t>(n));
    for (auto& value : x) value = normal(gen);
  };
  fill(c.q, z.b * z.h * z.l * z.e);
  fill(c.k, z.b * z.h * z.s * z.e);
  fill(c.v, z.b * z.h * z.s * z.e);
  if (!c.mask_shape.empty()) {
    int64_t n = 1;
    for (int64_t d : c.mask_shape) n *= d;
    fill(c.mask, n);
    if (bool_mask) {
      for (auto& m : c.mask) m = m > -0.5f ? 1.0f : 0.0f;
      // The first query row of the mask sees no key at all.
      const int64_t s = c.mask_shape.back();
      for (int64_t j = 0; j < s; ++j) c.mask[static_cast<size_t>(j)] = 0.0f;
    }
  }
  return c;
}

/// The mask's element for (b, h, i, j): right-aligned broadcast to [B, H, L, S].
double MaskAt(const Case& c, int64_t b, int64_t h, int64_t i, int64_t j) {
  const int64_t full[4] = {b, h, i, j};
  const size_t rank = c.mask_shape.size();
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t size = c.mask_shape[d];
    offset = offset * size + (size == 1 ? 0 : full[4 - rank + d]);
  }
  return c.mask[static_cast<size_t>(offset)];
}

/// softmax(scale q k^T + mask) v in float64; a row with no key gives 0.
std::vector<double> Reference(const Case& c, const Form& f) {
  const Sizes& z = c.z;
  const double scale = f.scale ? *f.scale : 1.0 / std::sqrt(static_cast<double>(z.e));
  std::vector<double> out(static_cast<size_t>(z.b * z.h * z.l * z.e), 0.0);
  std::vector<double> w(static_cast<size_t>(z.s));
  for (int64_t b = 0; b < z.b; ++b) {
    for (int64_t h = 0; h < z.h; ++h) {
      const int64_t bh = b * z.h + h;
      for (int64_t i = 0; i < z.l; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < z.s; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < z.e; ++e) {
            dot += static_cast<double>(c.q[static_cast<size_t>((bh * z.l + i) * z.e + e)]) *
                   c.k[static_cast<size_t>((bh * z.s + j) * z.e + e)];
          }
          double s = dot * scale;
          if (f.mask == "float") s += MaskAt(c, b, h, i, j);
          if (f.mask == "bool" && MaskAt(c, b, h, i, j) == 0) s = -std::numeric_limits<double>::infinity();
          if (f.causal && j > i) s = -std::numeric_limits<double>::infinity();
          w[static_cast<size_t>(j)] = s;
          mx = std::max(mx, s);
        }
        if (std::isinf(mx)) continue;
        double sum = 0;
        for (auto& x : w) sum += (x = std::exp(x - mx));
        for (int64_t e = 0; e < z.e; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < z.s; ++j) acc += w[static_cast<size_t>(j)] * c.v[static_cast<size_t>((bh * z.s + j) * z.e + e)];
          out[static_cast<size_t>((bh * z.l + i) * z.e + e)] = acc / sum;
        }
      }
    }
  }
  return out;
}

/// Runs `entry` on the case; returns its code and fills `y`.
int RunAttention(platforms::cpu::EntryFn entry, Case& c, const Form& f, std::vector<float>& y) {
  const Sizes& z = c.z;
  std::vector<int64_t> qs = {z.b, z.h, z.l, z.e}, ks = {z.b, z.h, z.s, z.e}, ys = qs;
  y.assign(static_cast<size_t>(z.b * z.h * z.l * z.e), std::nanf(""));
  std::vector<DLTensor> in = {FloatTensor(c.q.data(), qs), FloatTensor(c.k.data(), ks), FloatTensor(c.v.data(), ks)};
  std::vector<uint8_t> bytes(c.mask.begin(), c.mask.end());
  if (!c.mask_shape.empty()) {
    DLTensor m = FloatTensor(c.mask.data(), c.mask_shape);
    if (f.mask == "bool") {
      m.data = bytes.data();
      m.dtype = {kDLUInt, 8, 1};
    }
    in.push_back(m);
  }
  DLTensor out = FloatTensor(y.data(), ys);
  return entry(in.data(), static_cast<int32_t>(in.size()), &out, 1);
}

void ExpectMatches(platforms::cpu::EntryFn entry, Case& c, const Form& f, const std::string& what) {
  std::vector<float> y;
  ASSERT_EQ(RunAttention(entry, c, f, y), 0) << what;
  const std::vector<double> ref = Reference(c, f);
  int bad = 0;
  for (size_t n = 0; n < ref.size(); ++n) {
    if (!Close(y[n], ref[n]) && ++bad <= 3) {
      ADD_FAILURE() << what << ": element " << n << " = " << y[n] << ", reference " << ref[n];
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

// ---- the matcher -------------------------------------------------------------------

TEST(AttentionFamily, TakesTheCapturedAttentionForms) {
  const Sizes z{2, 3, 8, 8, 4};
  const auto plain = operators::ir::MatchAttention(SdpaGraph(z, {}));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->q, 0);
  EXPECT_EQ(plain->v, 2);
  EXPECT_EQ(plain->mask, -1);
  EXPECT_FALSE(plain->scale.has_value());
  EXPECT_EQ(plain->num_inputs, 3);

  Form causal_scaled;
  causal_scaled.causal = true;
  causal_scaled.scale = 0.25;
  const auto cs = operators::ir::MatchAttention(SdpaGraph(z, causal_scaled));
  ASSERT_TRUE(cs.has_value());
  EXPECT_TRUE(cs->causal);
  EXPECT_EQ(cs->scale, 0.25);
  // A given scale of 0 is a scale (uniform weights), not "not given".
  Form zero;
  zero.scale = 0.0;
  const auto zs = operators::ir::MatchAttention(SdpaGraph(z, zero));
  ASSERT_TRUE(zs.has_value());
  EXPECT_EQ(zs->scale, 0.0);

  Form boolean{"bool", {8, 8}};
  const auto bm = operators::ir::MatchAttention(SdpaGraph(z, boolean));
  ASSERT_TRUE(bm.has_value());
  EXPECT_EQ(bm->mask, 3);
  EXPECT_TRUE(bm->mask_bool);
  EXPECT_EQ(bm->num_inputs, 4);

  Form additive{"float", {2, 1, 8, 8}};
  const auto fm = operators::ir::MatchAttention(SdpaGraph(z, additive));
  ASSERT_TRUE(fm.has_value());
  EXPECT_FALSE(fm->mask_bool);

  // As a template: the family, named, with its drafts.
  const auto match = families::MatchAttention(SdpaGraph(z, boolean), true, 8);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->tmpl->Name(), "attention");
  EXPECT_EQ(match->tmpl->Drafts().size(), 3u);
}

TEST(AttentionFamily, LeavesOtherGraphsToTheLoopNest) {
  const Sizes z{1, 2, 8, 8, 4};
  Form dropout;
  dropout.dropout = 0.1;
  EXPECT_FALSE(operators::ir::MatchAttention(SdpaGraph(z, dropout)).has_value());
  Form logsumexp;
  logsumexp.output = 1;
  EXPECT_FALSE(operators::ir::MatchAttention(SdpaGraph(z, logsumexp)).has_value());
  Form followed;
  followed.extra_call = "aten.relu.default";
  EXPECT_FALSE(operators::ir::MatchAttention(SdpaGraph(z, followed)).has_value());
  core::OpGraph f64 = SdpaGraph(z, {});
  f64.nodes[0].dtype = core::DType::kFloat64;
  EXPECT_FALSE(operators::ir::MatchAttention(f64).has_value());
  // Grouped-query attention (k and v with fewer heads than q) and another value head size.
  core::OpGraph gqa = SdpaGraph(z, {});
  gqa.nodes[1].shape[1] = 1;
  gqa.nodes[2].shape[1] = 1;
  EXPECT_FALSE(operators::ir::MatchAttention(gqa).has_value());
  core::OpGraph ev = SdpaGraph(z, {});
  ev.nodes[2].shape[3] = 6;
  EXPECT_FALSE(operators::ir::MatchAttention(ev).has_value());
}

// ---- the fused kernels ---------------------------------------------------------------

/// Settings spanning the knobs (compiling every one of the 32 would take minutes).
std::vector<nlohmann::json> Settings() {
  return {{{"threads", "1"}, {"block_m", 32}, {"block_n", 64}},
          {{"threads", "all"}, {"block_m", 8}, {"block_n", 32}},
          {{"threads", "all"}, {"block_m", 64}, {"block_n", 256}},
          {{"threads", "1"}, {"block_m", 16}, {"block_n", 128}}};
}

/// Every setting at the host's vector width and, where that is wider, at AVX2's 8 lanes
/// too (the register tiles differ: 24 or 12 accumulators).
void CheckFamily(const Form& f, std::vector<Case> cases) {
  const int host_lanes = core::HostCpuIsa().vector_bits / 32;
  std::vector<std::string> sources, names;
  for (int lanes : host_lanes > 8 ? std::vector<int>{host_lanes, 8} : std::vector<int>{host_lanes}) {
    const auto match = families::MatchAttention(SdpaGraph(cases.front().z, f), true, lanes);
    ASSERT_TRUE(match.has_value());
    for (const auto& s : Settings()) {
      sources.push_back(match->tmpl->Generate(s));
      names.push_back(fmt::format("{} lanes {}", s.dump(), lanes));
    }
  }
  const auto kernels = CompileAll(sources);
  const int saved = omp_get_max_threads();
  for (size_t k = 0; k < kernels.size(); ++k) {
    ASSERT_NE(kernels[k]->entry, nullptr) << names[k] << "\n" << kernels[k]->log;
    for (int threads : {1, 3}) {
      omp_set_num_threads(threads);
      for (Case& c : cases) ExpectMatches(kernels[k]->entry, c, f, names[k] + ", case " + c.name);
    }
  }
  omp_set_num_threads(saved);
}

TEST(AttentionFamily, CausalMatchesTheReferenceAtAnySize) {
  Form f;
  f.causal = true;
  // L < S, L > S, head sizes below and past one vector, one row, one key.
  CheckFamily(f, {MakeCase("37x53x20", {1, 2, 37, 53, 20}, {}, false, 1),
                  MakeCase("70x30x8", {2, 1, 70, 30, 8}, {}, false, 2),
                  MakeCase("1x1x4", {1, 1, 1, 1, 4}, {}, false, 3),
                  MakeCase("129x129x64", {1, 1, 129, 129, 64}, {}, false, 4)});
}

TEST(AttentionFamily, BoolMaskWithAFullyMaskedRowAndAGivenScale) {
  Form f{"bool", {2, 1, 37, 53}};
  f.scale = 0.37;
  CheckFamily(f, {MakeCase("37x53x20", {2, 3, 37, 53, 20}, {2, 1, 37, 53}, true, 5)});
  Form g{"bool", {9, 300}};
  CheckFamily(g, {MakeCase("9x300x16", {1, 2, 9, 300, 16}, {9, 300}, true, 6)});
}

TEST(AttentionFamily, AdditiveFloatMaskBroadcastOverBatchAndHeads) {
  Form f{"float", {19, 70}};
  f.causal = true;
  CheckFamily(f, {MakeCase("19x70x36", {2, 2, 19, 70, 36}, {19, 70}, false, 7)});
  // Whole 16 x 16 tiles and a partial one each way (the transposed add in registers and
  // its gather remainder), a mask the same for every query, one the same for every key.
  // The kernel reads the mask's broadcast from its shape at run time: one build, three shapes.
  Form g{"float", {2, 1, 40, 83}};
  CheckFamily(g, {MakeCase("40x83x16", {2, 3, 40, 83, 16}, {2, 1, 40, 83}, false, 12),
                  MakeCase("33x50x8 same for every query", {2, 2, 33, 50, 8}, {2, 1, 1, 50}, false, 13),
                  MakeCase("33x50x8 same for every key", {1, 2, 33, 50, 8}, {33, 1}, false, 14)});
}

TEST(AttentionFamily, GivenScalesOfZeroAndBelowZero) {
  Form zero;
  zero.scale = 0.0;  // every key weighs the same
  CheckFamily(zero, {MakeCase("13x21x8", {1, 2, 13, 21, 8}, {}, false, 10)});
  Form negative;
  negative.scale = -0.7;
  CheckFamily(negative, {MakeCase("13x21x8", {1, 2, 13, 21, 8}, {}, false, 11)});
}

TEST(AttentionFamily, ReturnCodes) {
  const Sizes z{1, 2, 8, 8, 4};
  const auto match = families::MatchAttention(SdpaGraph(z, {}), false, 8);
  ASSERT_TRUE(match.has_value());
  const auto kernel = CompileAndLoad(match->tmpl->Generate(match->tmpl->Drafts().front()), 0);
  ASSERT_NE(kernel->entry, nullptr) << kernel->log;
  Case c = MakeCase("8x8x4", z, {}, false, 8);
  std::vector<float> y;
  EXPECT_EQ(RunAttention(kernel->entry, c, {}, y), 0);
  // v's head size differs from q's: 3.
  std::vector<int64_t> qs = {1, 2, 8, 4}, vs = {1, 2, 8, 2};
  std::vector<DLTensor> in = {FloatTensor(c.q.data(), qs), FloatTensor(c.k.data(), qs), FloatTensor(c.v.data(), vs)};
  DLTensor out = FloatTensor(y.data(), qs);
  EXPECT_EQ(kernel->entry(in.data(), 3, &out, 1), 3);
  EXPECT_EQ(kernel->entry(in.data(), 2, &out, 1), 1);
  in[2] = FloatTensor(c.v.data(), qs);
  in[2].dtype = {kDLFloat, 64, 1};
  EXPECT_EQ(kernel->entry(in.data(), 3, &out, 1), 2);
}

// ---- the loop-nest lowering of the same node -----------------------------------------

TEST(AttentionLoopNest, LoweringMatchesTheReference) {
  // What every other target (and a graph with more ops than the attention) compiles.
  const Sizes z{1, 2, 21, 13, 6};
  Form f{"bool", {21, 13}};
  f.causal = true;
  const auto match = families::MatchLoopNest(SdpaGraph(z, f), true, core::HostCpuIsa().vector_bits / 32);
  ASSERT_NE(match.tmpl, nullptr) << match.unsupported;
  std::vector<std::string> sources;
  const auto drafts = match.tmpl->Drafts();
  for (const auto& d : drafts) sources.push_back(match.tmpl->Generate(d));
  const auto kernels = CompileAll(sources);
  Case c = MakeCase("21x13x6", z, {21, 13}, true, 9);
  for (size_t k = 0; k < kernels.size(); ++k) {
    ASSERT_NE(kernels[k]->entry, nullptr) << drafts[k].dump() << "\n" << kernels[k]->log;
    ExpectMatches(kernels[k]->entry, c, f, "loop nest " + drafts[k].dump());
  }
}

}  // namespace
}  // namespace kernelevolve::template_test
