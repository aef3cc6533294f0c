// The generic Core ATen lowering (ir/lower_core*.cpp), its kernel plan
// (ir/kernel_plan.h), the primitive table (codegen/prim_spelling.h) and the family
// "loop_nest" that prints it in C++ (families/loop_nest): captured graphs of small
// models compiled on every draft and run against eager PyTorch outputs (cases
// written by tests/unit/data/loop_nest/make_cases.py). The sort cases also run every
// setting of the CPU's sort family (families/sort), which takes a lone sort or top-k.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <set>

#include "core/dtype.h"
#include "core/error.h"
#include "core/op_graph.h"
#include "eval/half.h"
#include "eval/safetensors.h"
#include "operators/codegen/cpp/loop_nest_cpp.h"
#include "operators/codegen/prim_spelling.h"
#include "operators/families/embedding_bag/embedding_bag_template.h"
#include "operators/families/index_add/index_add_template.h"
#include "operators/families/loop_nest/loop_nest_template.h"
#include "operators/families/masked_select/masked_select_template.h"
#include "operators/families/sort/sort_template.h"
#include "operators/ir/contraction.h"
#include "operators/ir/convolution.h"
#include "operators/ir/expr.h"
#include "operators/ir/kernel_plan.h"
#include "operators/ir/lower_core.h"
#include "operators/ir/prim.h"
#include "operators/ir/tensor_program.h"
#include "operators/template/kernel_template.h"
#include "template_test_util.h"
#include "host_tensor_view.h"

namespace kernelevolve::template_test {
namespace {

namespace ir = operators::ir;
namespace codegen = operators::codegen;
namespace families = operators::families;
namespace templates = operators::templates;

const std::filesystem::path kCases = std::filesystem::path(KE_TEST_DATA_DIR) / "unit" / "data" / "loop_nest";

/// Every case make_cases.py writes, grouped by the rule file they exercise.
const std::vector<std::string>& CaseNames() {
  static const std::vector<std::string> names = {
      // views and layout
      "permute_contiguous", "transpose_reshape", "expand_mul", "slice_step", "select", "cat", "stack",
      "split_three", "pad_constant", "pad_reflect", "flip", "roll_dims", "roll_flat", "repeat", "diagonal",
      "triu_tril",
      // creation
      "arange_add", "full_zeros_like",
      // masks, integer arithmetic, bits, comparisons, casts, clamp
      "where_compare", "masked_fill", "int_add_mul", "int_rem_floordiv", "int_bitwise", "compare_bool", "casts",
      "clamp_tensor",
      // gathers
      "gather", "index_select", "embedding", "advanced_index",
      // reductions, scans, norms
      "sum_dims_0_2", "amax_keepdim", "mean_all", "prod_dim", "var_std", "argmax_ties", "any_all", "cumsum_dim0",
      "logsumexp", "softmax_dim0", "layer_norm", "group_norm", "batch_norm_eval",
      // heavy ops
      "mm", "bmm", "linear", "conv1d", "conv2d_stride_dilation", "conv2d_grouped", "conv_transpose2d",
      "max_pool2d_indices", "avg_pool2d_pad", "adaptive_avg_pool2d", "mm_relu_mm",
      // searches in sorted tensors, int64 hashing
      "bucketize_ties", "searchsorted_sides", "searchsorted_long_table", "repeat_interleave_ids", "int_hash",
      // fused epilogues, convolutions as implicit GEMMs (the tiled draft runs them)
      "linear_gelu_residual_clamp", "addmm_sigmoid", "conv2d_3x3_bias_relu", "conv2d_1x1_nobias",
      "conv2d_grouped_strided_padded", "conv2d_depthwise_unbatched", "conv1d_strided_silu", "conv3d_padded",
      // depthwise convolutions in the direct form; epilogues reading a residual at the
      // convolution's own element (one flat index, ke_own)
      "conv2d_depthwise_strided_dilated_relu", "conv1d_depthwise_wide_pad", "conv3d_depthwise_bias_add",
      "conv2d_swish_residual", "conv1d_unbatched_residual", "conv2d_grouped_wide", "conv1d_unbatched_wide",
      "conv3d_dilated_wide", "bmm_unit_batch_residual_relu", "conv2d_unit_batch_sigmoid",
      "linear_relu_linear", "self_attention_scores", "conv_flatten_linear",
      // operands materialized for the main loop; rows of 40 as vectorized inner sums
      "linear_permuted_rows", "conv2d_channels_last_input", "layer_norm_rows",
      // triangular masks over products (tiles outside the triangle not multiplied)
      "mm_tril", "bmm_triu_offset", "mm_tril_deep", "mm_split_k_relu", "mm_band",
      // transposed convolutions: as plain ones, and the masked form
      "conv_transpose1d_grouped_dilated", "conv_transpose1d_wide_pad",
      // strided transposed convolutions as one plain convolution per output phase
      "conv_transpose2d_short_kernel", "conv_transpose3d_mixed_stride",
      // pooling windows (the row-blocked draft runs them)
      "max_pool2d_dilated_ceil", "avg_pool2d_ceil_include_pad", "max_pool1d_indices", "conv2d_depthwise",
      "max_pool2d_neg_inf_windows", "max_pool_nan_windows",
      // sort and top-k as counting reductions (ties, NaN, -0.0, int64, another dim, in a chain)
      "sort_desc_nan_ties", "sort_int64_dim0", "topk_smallest_dim0", "topk_relu_sum",
      // scatter writes in their gather form (duplicates, every scatter_reduce mode, index_put)
      "scatter_add_dup", "scatter_src_value", "scatter_reduce_modes", "index_put_accumulate", "index_add_rows",
      "masked_scatter_broadcast",
      // resampling and distances
      "upsample_bilinear", "grid_sample_modes", "fold_col2im", "col2im_direct", "cdist_pdist",
      // half precision as storage: widened on load, rounded after every op, stored as half
      "half_matmul_bias_gelu", "bf16_linear_relu", "half_reductions", "bf16_casts",
      // float floor division as eager rounds it
      "float_floor_div",
  };
  return names;
}

core::OpGraph CaseGraph(const std::string& name) {
  std::ifstream in(kCases / (name + ".json"));
  if (!in) ADD_FAILURE() << "missing " << (kCases / (name + ".json")) << ": run make_cases.py";
  return core::OpGraphFromJson(nlohmann::json::parse(in));
}

/// The planned program of a case (fails the test when the lowering refuses it).
ir::KernelPlan CasePlan(const std::string& name) {
  ir::CoreLowerResult lowered = ir::LowerCore(CaseGraph(name));
  if (!lowered.program) {
    ADD_FAILURE() << name << ": " << lowered.unsupported;
    return {};
  }
  return ir::PlanKernels(std::move(*lowered.program));
}

TEST(LoopNestLowering, EveryCaseLowersToALoopNestProgram) {
  for (const std::string& name : CaseNames()) {
    const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true);
    EXPECT_TRUE(match.tmpl != nullptr) << "case " << name << " has no loop-nest program: " << match.unsupported;
    if (!match.tmpl) continue;
    EXPECT_EQ(match.tmpl->Name(), "loop_nest") << name;
    EXPECT_TRUE(match.unsupported.empty()) << name << ": a match carries no reason, got " << match.unsupported;
    // Baseline, all threads, all threads + vectorized prelude + omp simd (and that
    // with the tiled GEMM main loop when the program has a matrix product or a
    // convolution, and / or the row-blocked reductions when it has a reduction other
    // than those with an output dim of more than one element).
    const auto* loop_nest = dynamic_cast<const families::LoopNestTemplate*>(match.tmpl.get());
    ASSERT_NE(loop_nest, nullptr) << name;
    bool contraction = false, row_blockable = false;
    double iterations = 0;
    for (int id : loop_nest->Plan().kernels) {
      const auto& def = loop_nest->Plan().program.defs[id];
      const bool heavy = ir::MatchContraction(loop_nest->Plan().program, def).has_value() ||
                         ir::MatchConvolution(loop_nest->Plan().program, def).has_value();
      contraction |= heavy;
      row_blockable |= !heavy && codegen::ReduceLoopApplies(def);
      iterations += ir::Iterations(def);
    }
    // A small program of many small kernels or of tiny ones has its heavy draft on one
    // thread first, then on all.
    const size_t kernels = loop_nest->Plan().kernels.size();
    const double per_kernel = iterations / static_cast<double>(kernels);
    const bool small = iterations < families::kSmallProgramIterations && per_kernel < families::kSmallKernelIterations &&
                       (kernels >= families::kManyKernels || per_kernel < families::kGrainIterations);
    const size_t heavy_drafts = !(contraction || row_blockable) ? 0 : small ? 2 : 1;
    EXPECT_EQ(match.tmpl->Drafts().size(), 3u + heavy_drafts) << name;
    const auto space = match.tmpl->Space().Canonical(nlohmann::json::object());
    EXPECT_EQ(space.contains("main_loop"), contraction) << name;
    EXPECT_EQ(space.contains("reduce_loop"), row_blockable) << name;
  }
}

TEST(LoopNestLowering, MatchTemplateFallsBackToLoopNest) {
  // A convolution has no specialized CPU template: the template operator's last resort
  // (kernel_template.cpp) gives it the loop-nest family.
  core::Problem problem;
  problem.name = "conv2d_stride_dilation";
  problem.graph = CaseGraph("conv2d_stride_dilation");
  problem.threads = 2;
  const auto match = templates::MatchTemplate(problem, 2);
  ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "loop_nest");
}

// ---- generated kernels against eager outputs -------------------------------------

/// The tensors named "<prefix><k>" of a file, ordered by k (numerically: in.10 after in.9).
std::vector<eval::HostTensor*> Numbered(eval::SafetensorsFile& file, const std::string& prefix) {
  std::vector<std::pair<int, eval::HostTensor*>> found;
  for (auto& t : file.tensors) {
    if (t.name.rfind(prefix, 0) == 0) found.emplace_back(std::stoi(t.name.substr(prefix.size())), &t);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<eval::HostTensor*> out;
  for (size_t k = 0; k < found.size(); ++k) {
    EXPECT_EQ(found[k].first, static_cast<int>(k)) << "tensors " << prefix << "* are not numbered 0..n-1";
    out.push_back(found[k].second);
  }
  return out;
}

/// Element `e` of a floating tensor as double (float16 / bfloat16 exactly).
double FloatAt(const eval::HostTensor& t, int64_t e) {
  switch (t.dtype) {
    case core::DType::kFloat64: return t.Data<double>()[e];
    case core::DType::kFloat16: return eval::HalfToFloat(t.Data<uint16_t>()[e]);
    case core::DType::kBFloat16: return eval::BFloat16ToFloat(t.Data<uint16_t>()[e]);
    default: return t.Data<float>()[e];
  }
}

/// The relative (and absolute) tolerance of a kernel's float output: 1e-4 for float32
/// and float64; two units in the last place for the half types (2^-10 for float16's
/// 11-bit significand, 2^-7 for bfloat16's 8 bits), since a float32 sum in another
/// order may round an op's result to the neighbouring half value, as eager's own
/// kernels may between machines.
double Tolerance(core::DType dtype) {
  if (dtype == core::DType::kFloat16) return 0x1p-10;
  if (dtype == core::DType::kBFloat16) return 0x1p-7;
  return 1e-4;
}

/// Element `e` of an integer or bool tensor, for messages.
int64_t IntAt(const eval::HostTensor& t, int64_t e) {
  switch (t.dtype) {
    case core::DType::kInt8: return t.Data<int8_t>()[e];
    case core::DType::kInt16: return t.Data<int16_t>()[e];
    case core::DType::kInt32: return t.Data<int32_t>()[e];
    case core::DType::kInt64: return t.Data<int64_t>()[e];
    default: return t.Data<uint8_t>()[e];  // uint8, bool
  }
}

/// Compares a kernel's output with the eager one: integer and bool elements byte for
/// byte, floats with |a - b| <= tol + tol |b| (Tolerance) and NaN where eager has NaN.
/// Reports at most 3 elements.
void ExpectOutputMatches(const eval::HostTensor& got, const eval::HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype, want.dtype) << what;
  ASSERT_EQ(got.bytes.size(), want.bytes.size()) << what;
  const bool fp = core::IsFloatingPoint(want.dtype);
  const size_t size = core::DTypeSize(want.dtype);
  int failures = 0;
  for (int64_t e = 0; e < want.NumElements() && failures < 3; ++e) {
    bool ok;
    if (fp) {
      ok = Close(FloatAt(got, e), FloatAt(want, e), Tolerance(want.dtype));
    } else {
      ok = std::memcmp(got.bytes.data() + e * size, want.bytes.data() + e * size, size) == 0;
    }
    if (!ok) {
      ++failures;
      if (fp) {
        ADD_FAILURE() << what << " element " << e << ": got " << FloatAt(got, e) << ", eager " << FloatAt(want, e);
      } else {
        ADD_FAILURE() << what << " element " << e << ": got " << IntAt(got, e) << ", eager " << IntAt(want, e);
      }
    }
  }
}

/// Runs one compiled draft of case `name` on the case's inputs and compares every
/// output with eager PyTorch; checks that the inputs are left unchanged.
void RunAndCompare(const std::string& name, const LoadedKernel& kernel, const std::string& source) {
  ASSERT_NE(kernel.entry, nullptr) << "compile failed:\n" << kernel.log << "\n" << source;
  // A fresh read per draft: nothing a previous run did can leak into this one.
  auto file = eval::ReadSafetensors(kCases / (name + ".safetensors"));
  const auto ins = Numbered(file, "in.");
  const auto refs = Numbered(file, "out.");
  ASSERT_FALSE(refs.empty()) << "no eager outputs in " << name << ".safetensors";
  std::vector<std::vector<std::byte>> before;
  std::vector<DLTensor> in_views;
  for (auto* t : ins) {
    before.push_back(t->bytes);
    in_views.push_back(testing_util::HostView(*t));
  }
  // Outputs of the eager dtype and shape, filled with a byte pattern the kernel must
  // overwrite (0x7f: a large float, a bool that is neither 0 nor 1).
  std::vector<eval::HostTensor> outs;
  for (auto* t : refs) {
    eval::HostTensor o;
    o.name = t->name;
    o.dtype = t->dtype;
    o.shape = t->shape;
    o.bytes.assign(t->bytes.size(), std::byte{0x7f});
    outs.push_back(std::move(o));
  }
  std::vector<DLTensor> out_views;
  for (auto& t : outs) out_views.push_back(testing_util::HostView(t));
  const int rc = kernel.entry(in_views.data(), static_cast<int32_t>(in_views.size()), out_views.data(),
                              static_cast<int32_t>(out_views.size()));
  // 1: tensor count, 2: dtype or device, 3: element count, 4: layout (loop_nest_cpp.h).
  ASSERT_EQ(rc, 0) << "the entry refused the eager inputs/outputs\n" << source;
  for (size_t o = 0; o < outs.size(); ++o) {
    ExpectOutputMatches(outs[o], *refs[o], "output " + std::to_string(o));
  }
  for (size_t k = 0; k < ins.size(); ++k) {
    EXPECT_TRUE(ins[k]->bytes == before[k]) << "the kernel wrote into input " << k;
  }
}

/// Drafts to compile together and compare with eager PyTorch: the case each runs on,
/// its knobs and its generated source.
struct DraftBatch {
  std::vector<std::string> names;
  std::vector<nlohmann::json> knobs;
  std::vector<std::string> sources;

  /// Adds the draft of `k` for case `name`; returns its source.
  const std::string& Add(const std::string& name, const nlohmann::json& k, const std::string& source) {
    names.push_back(name);
    knobs.push_back(k);
    sources.push_back(source);
    return sources.back();
  }
};

/// Compiles every draft of `batch` in one CompileAll call (two compilers at a time),
/// then runs each on its case's inputs under a trace naming the case and knobs; a
/// failed ASSERT ends that draft only.
void CompileAndCompareAll(const DraftBatch& batch) {
  const auto kernels = CompileAll(batch.sources);
  ASSERT_EQ(kernels.size(), batch.sources.size());
  for (size_t j = 0; j < batch.sources.size(); ++j) {
    SCOPED_TRACE(batch.names[j] + " " + batch.knobs[j].dump());
    RunAndCompare(batch.names[j], *kernels[j], batch.sources[j]);
  }
}

TEST(LoopNestKernel, EveryCaseMatchesEagerOnEveryDraft) {
  DraftBatch batch;
  for (const std::string& name : CaseNames()) {
    const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true);
    if (!match.tmpl) {  // EveryCaseLowersToALoopNestProgram says so too; run the others
      ADD_FAILURE() << name << " not lowered: " << match.unsupported;
      continue;
    }
    // Drafts() is counted by EveryCaseLowersToALoopNestProgram.
    for (const auto& knobs : match.tmpl->Drafts()) batch.Add(name, knobs, match.tmpl->Generate(knobs));
  }
  CompileAndCompareAll(batch);
}

// ---- refusals ------------------------------------------------------------------

TEST(LoopNestLowering, UnknownOpNamesTheNode) {
  GraphBuilder g({4, 8});
  const auto x = g.Input("x");
  g.Call("mystery", "aten.not_an_op.default", {Ref("self", x)});
  const core::Problem problem = g.Finish("mystery", 2);
  const auto match = families::MatchLoopNest(problem.graph, /*multithread=*/true);
  EXPECT_TRUE(match.tmpl == nullptr);
  EXPECT_EQ(match.unsupported, "unsupported_op: aten.not_an_op.default (node mystery)");
  // The template operator's last resort passes the reason on unchanged.
  const auto any = templates::MatchTemplate(problem, 2);
  EXPECT_TRUE(any.tmpl == nullptr);
  EXPECT_EQ(any.unsupported, "unsupported_op: aten.not_an_op.default (node mystery)");
}

TEST(LoopNestLowering, HalfPrecisionIsStoredAsHalfAndComputedInFloat32) {
  // relu(x) on float16 x: x widens to float32 on load, relu's result rounds through
  // float16 (a no-op for relu, but the rule does not know that) and the output is
  // stored as float16. No arithmetic runs on a half type.
  GraphBuilder g({4, 8});
  const auto x = g.Input("x");
  g.Call("y", "aten.relu.default", {Ref("self", x)});
  g.Graph().nodes[0].dtype = core::DType::kFloat16;  // the placeholder
  g.Graph().nodes[1].dtype = core::DType::kFloat16;  // relu of it
  const core::Problem problem = g.Finish("y", 2);
  const ir::CoreLowerResult lowered = ir::LowerCore(problem.graph);
  ASSERT_TRUE(lowered.program.has_value()) << lowered.unsupported;
  const ir::TensorProgram& p = *lowered.program;
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.defs.front().dtype, core::DType::kFloat16);  // the ABI input
  EXPECT_EQ(p.defs.at(static_cast<size_t>(p.outputs[0])).dtype, core::DType::kFloat16);
  for (const ir::TensorDef& d : p.defs) {
    if (d.kind == ir::DefKind::kInput || d.id == p.outputs[0]) continue;
    EXPECT_EQ(d.dtype, core::DType::kFloat32) << d.origin;
  }
  // The family takes it; the entry checks float16 tensors (DLPack kDLFloat, 16 bits).
  const auto match = families::MatchLoopNest(problem.graph, /*multithread=*/true);
  ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
  const std::string source = match.tmpl->Generate(match.tmpl->Drafts().front());
  EXPECT_NE(source.find("ke_check_as(inputs[0], kDLFloat, 16"), std::string::npos) << source;
  EXPECT_NE(source.find("_Float16"), std::string::npos) << source;
}

TEST(PrimSpelling, HalfTypesConvertThroughFloat32InCpp) {
  using codegen::Language;
  using codegen::SpellPrim;
  using core::DType;
  EXPECT_EQ(codegen::SpellType(Language::kCppScalar, DType::kBFloat16), "uint16_t");
  EXPECT_EQ(codegen::SpellType(Language::kCppScalar, DType::kFloat16), "_Float16");
  EXPECT_EQ(SpellPrim(Language::kCppScalar, ir::Prim::kCast, DType::kBFloat16, DType::kFloat32, {"a"}),
            "ke_bf16_to_float(a)");
  EXPECT_EQ(SpellPrim(Language::kCppScalar, ir::Prim::kCast, DType::kFloat32, DType::kBFloat16, {"a"}),
            "ke_float_to_bf16(static_cast<float>(a))");
  EXPECT_EQ(SpellPrim(Language::kCppScalar, ir::Prim::kCast, DType::kBFloat16, DType::kBool, {"a"}),
            "(ke_bf16_to_float(a) != 0)");  // -0.0 is false, as its bits 0x8000 are not
  EXPECT_EQ(SpellPrim(Language::kCppScalar, ir::Prim::kCast, DType::kFloat16, DType::kBFloat16, {"a"}),
            "ke_float_to_bf16(static_cast<float>(a))");
  EXPECT_EQ(SpellPrim(Language::kTriton, ir::Prim::kCast, DType::kFloat32, DType::kBFloat16, {"a"}),
            "a.to(tl.bfloat16)");
  EXPECT_NE(codegen::CppHelpersFor("ke_float_to_bf16(x)").find("0x7fffu"), std::string::npos);
}

TEST(PrimSpelling, CppBFloat16ConversionsMatchTheReferenceOnEveryBitPatternAndOnFloatsOfEveryRange) {
  // The generated bfloat16 helpers, compiled with the candidates' flags, against
  // eval/half.h: every bfloat16 bit pattern widened; float32 values across every binade
  // (both signs, with halfway cases, subnormals, overflow to Inf, NaN) narrowed. float16
  // is GCC's _Float16 (F16C), checked by tests/unit/half_test.cpp against the same oracle.
  const std::string helpers =
      codegen::CppHelpersFor("ke_bf16_to_float( ke_float_to_bf16(");
  const std::string source =
      "#include <dlpack/dlpack.h>\n#include <cstdint>\n#include <cstring>\n" + helpers +
      "extern \"C\" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {\n"
      "  const uint16_t* h = static_cast<const uint16_t*>(in[0].data);\n"
      "  const float* f = static_cast<const float*>(in[1].data);\n"
      "  float* wide_bf16 = static_cast<float*>(out[0].data);\n"
      "  uint16_t* to_bf16 = static_cast<uint16_t*>(out[1].data);\n"
      "  #pragma omp simd\n"
      "  for (int64_t i = 0; i < in[0].shape[0]; ++i) {\n"
      "    wide_bf16[i] = ke_bf16_to_float(h[i]);\n  }\n"
      "  #pragma omp simd\n"
      "  for (int64_t i = 0; i < in[1].shape[0]; ++i) {\n"
      "    to_bf16[i] = ke_float_to_bf16(f[i]);\n  }\n"
      "  return 0;\n}\n";
  const auto kernel = CompileAndLoad(source, 0);
  ASSERT_NE(kernel->entry, nullptr) << kernel->log << source;
  std::vector<uint16_t> halves(65536);
  for (uint32_t i = 0; i < 65536; ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> floats;
  for (uint32_t top = 0; top < 512; ++top) {     // sign and exponent: every binade
    for (uint32_t low : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x2fffu, 0x3000u, 0x7fffu, 0x8000u, 0x8001u,
                         0x18000u, 0x7ff000u, 0x7fefffu, 0x7fffffu, 0x123457u, 0x2aaaaau}) {
      floats.push_back(std::bit_cast<float>((top << 23) | low));
    }
  }
  auto host = [](core::DType dtype, const void* data, size_t count, size_t size) {
    eval::HostTensor t;
    t.dtype = dtype;
    t.shape = {static_cast<int64_t>(count)};
    t.bytes.resize(count * size);
    if (data != nullptr) std::memcpy(t.bytes.data(), data, t.bytes.size());
    return t;
  };
  eval::HostTensor th = host(core::DType::kInt16, halves.data(), halves.size(), 2);
  eval::HostTensor tf = host(core::DType::kFloat32, floats.data(), floats.size(), 4);
  eval::HostTensor wbf = host(core::DType::kFloat32, nullptr, halves.size(), 4);
  eval::HostTensor nbf = host(core::DType::kInt16, nullptr, floats.size(), 2);
  const DLTensor inputs[2] = {testing_util::HostView(th), testing_util::HostView(tf)};
  DLTensor outputs[2] = {testing_util::HostView(wbf), testing_util::HostView(nbf)};
  ASSERT_EQ(kernel->entry(inputs, 2, outputs, 2), 0);
  // Same bits, or both NaN of the same sign.
  auto same = [](uint32_t got, uint32_t want, uint32_t sign, bool nan) {
    return nan ? (got & sign) == (want & sign) : got == want;
  };
  int bad = 0;
  for (uint32_t i = 0; i < 65536 && bad < 10; ++i) {
    const float wantbf = eval::BFloat16ToFloat(static_cast<uint16_t>(i));
    const float gotbf = wbf.Data<float>()[i];
    if (std::bit_cast<uint32_t>(gotbf) != std::bit_cast<uint32_t>(wantbf)) {
      ADD_FAILURE() << "ke_bf16_to_float(0x" << std::hex << i << ") = " << gotbf << ", want " << wantbf;
      ++bad;
    }
  }
  for (size_t i = 0; i < floats.size() && bad < 20; ++i) {
    const float f = floats[i];
    const bool nan = f != f;
    const uint16_t gotbf = nbf.Data<uint16_t>()[i];
    const uint16_t wantbf = eval::FloatToBFloat16(f);
    if (!same(gotbf, wantbf, 0x8000u, nan) || (nan && (gotbf & 0x7fffu) <= 0x7f80u)) {
      ADD_FAILURE() << "ke_float_to_bf16(" << std::hexfloat << f << ") = 0x" << std::hex << gotbf << ", want 0x" << wantbf;
      ++bad;
    }
  }
}

// ---- the kernel plan -------------------------------------------------------------

bool OriginIs(const ir::TensorDef& d, const std::string& target) {
  return d.origin.find("(" + target + ")") != std::string::npos;
}

TEST(LoopNestPlan, DefinitionsNoOutputReadsAreDropped) {
  // max(x, dim 1) gives values and indices; only the values are read. The rule lowers
  // both (two reductions, always materialized), the plan drops the argmax: no kernel,
  // no buffer. A call no output depends on at all (the amax) is not even lowered.
  GraphBuilder g({4, 8});
  const auto x = g.Input("x");
  g.Call("unused", "aten.amax.default", {Ref("self", x), Val("dim", std::vector<int>{1}), Val("keepdim", true)});
  g.Graph().nodes.back().shape = {4, 1};
  g.Call("m", "aten.max.dim", {Ref("self", x), Val("dim", 1), Val("keepdim", false)});
  g.Graph().nodes.back().shape = {4};
  g.Call("values", "getitem", {Ref("self", "m"), Val("index", 0)});
  g.Graph().nodes.back().shape = {4};
  g.Call("indices", "getitem", {Ref("self", "m"), Val("index", 1)});
  g.Graph().nodes.back().shape = {4};
  g.Graph().nodes.back().dtype = core::DType::kInt64;
  g.Call("y", "aten.relu.default", {Ref("self", "values")});
  g.Graph().nodes.back().shape = {4};
  const core::Problem problem = g.Finish("y", 1);
  ir::CoreLowerResult lowered = ir::LowerCore(problem.graph);
  ASSERT_TRUE(lowered.program.has_value()) << lowered.unsupported;
  std::vector<ir::ReduceOp> reductions;
  for (const ir::TensorDef& d : lowered.program->defs) {
    if (d.kind == ir::DefKind::kReduce) reductions.push_back(d.reduce);
  }
  ASSERT_EQ(reductions, (std::vector<ir::ReduceOp>{ir::ReduceOp::kMax, ir::ReduceOp::kArgMax}))
      << "the lowering skips the amax and keeps max.dim's unread argmax";
  const ir::KernelPlan plan = ir::PlanKernels(std::move(*lowered.program));
  for (const ir::TensorDef& d : plan.program.defs) {
    if (d.kind == ir::DefKind::kReduce && d.reduce == ir::ReduceOp::kArgMax) {
      EXPECT_FALSE(plan.materialized.at(static_cast<size_t>(d.id)));
    }
  }
  for (int id : plan.kernels) {
    EXPECT_NE(plan.program.defs.at(static_cast<size_t>(id)).reduce, ir::ReduceOp::kArgMax);
  }
  // The printed program has no loop for it and still computes the max and relu.
  const auto match = families::MatchLoopNest(problem.graph, /*multithread=*/false);
  ASSERT_NE(match.tmpl, nullptr) << match.unsupported;
  const std::string source = match.tmpl->Generate(match.tmpl->Drafts().front());
  EXPECT_EQ(source.find("int64_t arg"), std::string::npos) << source;  // an argmax accumulator
  EXPECT_NE(source.find("-INFINITY"), std::string::npos) << source;   // the max identity
  EXPECT_NE(source.find("0.0f"), std::string::npos) << source;        // relu
}

TEST(LoopNestPlan, MaxPoolingPassesOverItsWindowOnceWithOrWithoutIndices) {
  // Without a reader of the indices, one max reduction; with one, one argmax whose
  // value is gathered (no second reduction over the window).
  const std::vector<std::pair<std::string, ir::ReduceOp>> cases = {{"max_pool2d_dilated_ceil", ir::ReduceOp::kMax},
                                                                   {"max_pool2d_indices", ir::ReduceOp::kArgMaxLastNaN},
                                                                   {"max_pool1d_indices", ir::ReduceOp::kArgMaxLastNaN},
                                                                   {"max_pool2d_neg_inf_windows", ir::ReduceOp::kArgMaxLastNaN}};
  for (const auto& [name, op] : cases) {
    SCOPED_TRACE(name);
    const ir::KernelPlan plan = CasePlan(name);
    std::vector<ir::ReduceOp> reductions;
    for (int id : plan.kernels) {
      const ir::TensorDef& def = plan.program.defs[static_cast<size_t>(id)];
      if (def.kind == ir::DefKind::kReduce) reductions.push_back(def.reduce);
    }
    EXPECT_EQ(reductions, std::vector<ir::ReduceOp>{op});
  }
}

TEST(LoopNestPlan, PlanInlinesViewsAndMaterializesReductions) {
  {
    // relu(a @ w1) @ w2 with a [8, 16], w1 [16, 32], w2 [32, 4]: both matmuls are
    // reductions (always kernels); relu [8, 32] is read 1024 times (8 x 4 outputs x
    // K = 32) for its 256 elements, more than max_recompute = 2 reads per element,
    // so it is computed once into a buffer rather than inlined into the second mm.
    const ir::KernelPlan plan = CasePlan("mm_relu_mm");
    const auto& defs = plan.program.defs;
    std::vector<int> mm_kernels, relu_kernels;
    for (int k : plan.kernels) {
      const ir::TensorDef& d = defs.at(static_cast<size_t>(k));
      if (OriginIs(d, "aten.mm.default") && d.kind == ir::DefKind::kReduce) mm_kernels.push_back(k);
      if (OriginIs(d, "aten.relu.default")) relu_kernels.push_back(k);
    }
    ASSERT_EQ(mm_kernels.size(), 2u) << "a kernel per matmul";
    ASSERT_EQ(relu_kernels.size(), 1u) << "relu materialized once";
    EXPECT_EQ(defs[static_cast<size_t>(relu_kernels[0])].kind, ir::DefKind::kCompute);
    // In program order: mm, relu, mm; nothing else is a kernel.
    EXPECT_EQ(plan.kernels, (std::vector<int>{mm_kernels[0], relu_kernels[0], mm_kernels[1]}));
    // The second mm reads the relu buffer, not a recomputed max.
    int relu_loads = 0;
    ir::VisitPostOrder(defs[static_cast<size_t>(mm_kernels[1])].body, [&](const ir::ExprNode& n) {
      relu_loads += n.kind == ir::ExprKind::kLoad && n.tensor == relu_kernels[0];
    });
    EXPECT_EQ(relu_loads, 1);
    // The last mm is the output, written in place (no copy kernel).
    ASSERT_EQ(plan.program.outputs.size(), 1u);
    EXPECT_EQ(plan.program.outputs[0], mm_kernels[1]);
    EXPECT_EQ(plan.output_slot.at(static_cast<size_t>(mm_kernels[1])), 0);
    EXPECT_EQ(plan.output_slot.at(static_cast<size_t>(relu_kernels[0])), -1) << "relu is an intermediate";
  }
  {
    // Views (permute, view, _unsafe_view, expand, clone of a view) are index
    // arithmetic: never a kernel of their own unless they are an output.
    const std::set<std::string> views = {"aten.permute.default", "aten.view.default", "aten._unsafe_view.default",
                                         "aten.expand.default", "aten.clone.default"};
    int seen = 0;
    for (const char* name : {"linear", "transpose_reshape", "expand_mul", "mm_relu_mm"}) {
      SCOPED_TRACE(name);
      const ir::KernelPlan plan = CasePlan(name);
      for (const ir::TensorDef& d : plan.program.defs) {
        bool is_view = false;
        for (const auto& v : views) is_view = is_view || OriginIs(d, v);
        if (!is_view || d.kind == ir::DefKind::kInput) continue;
        ++seen;
        if (plan.output_slot.at(static_cast<size_t>(d.id)) >= 0) continue;
        EXPECT_FALSE(plan.materialized.at(static_cast<size_t>(d.id))) << "t" << d.id << " from " << d.origin;
      }
      // The views were inlined: no kernel body loads a non-materialized def.
      for (int k : plan.kernels) {
        ir::VisitPostOrder(plan.program.defs[static_cast<size_t>(k)].body, [&](const ir::ExprNode& n) {
          if (n.kind == ir::ExprKind::kLoad) {
            EXPECT_TRUE(plan.materialized.at(static_cast<size_t>(n.tensor))) << "t" << k << " loads t" << n.tensor;
          }
        });
      }
    }
    EXPECT_GE(seen, 4) << "the cases hold permute, _unsafe_view, clone and expand nodes";
    // linear = permute(weight) + addmm: the kernels are the product and the bias add.
    const ir::KernelPlan linear = CasePlan("linear");
    for (int k : linear.kernels) {
      EXPECT_FALSE(OriginIs(linear.program.defs[static_cast<size_t>(k)], "aten.permute.default"));
    }
  }
  {
    // Element-wise graphs: everything inlines into the outputs, one kernel each.
    for (const char* name : {"where_compare", "masked_fill", "compare_bool", "int_bitwise", "int_rem_floordiv"}) {
      SCOPED_TRACE(name);
      const ir::KernelPlan plan = CasePlan(name);
      EXPECT_EQ(plan.kernels.size(), plan.program.outputs.size());
      for (int k : plan.kernels) {
        EXPECT_GE(plan.output_slot.at(static_cast<size_t>(k)), 0) << "kernel t" << k << " is not an output";
        EXPECT_EQ(plan.program.defs[static_cast<size_t>(k)].kind, ir::DefKind::kCompute);
      }
    }
    const ir::KernelPlan where = CasePlan("where_compare");
    EXPECT_EQ(where.kernels.size(), 1u) << "where(x > y, x, 2 y) is one loop";
  }
}

TEST(LoopNestPlan, ARecurrentStateIsComputedOnceNotAgainAtEveryStep) {
  // An LSTM's cell state c_t feeds h_t and c_{t+1}. Each read alone is one per element,
  // but inlined into both, c_1 is computed again inside every later step's kernel: the
  // reads add up (kernel_plan.cpp), so the chain is cut into buffers and each step's
  // gate kernel stays the same size however long the sequence is.
  const ir::KernelPlan plan = CasePlan("lstm_two_layer");
  std::vector<int> gate_kernel_nodes;
  for (int k : plan.kernels) {
    const ir::TensorDef& d = plan.program.defs[static_cast<size_t>(k)];
    bool sigmoid = false;
    ir::VisitPostOrder(d.body, [&](const ir::ExprNode& n) {
      sigmoid = sigmoid || (n.kind == ir::ExprKind::kOp && n.op == ir::Prim::kSigmoid);
    });
    if (d.kind == ir::DefKind::kCompute && sigmoid) gate_kernel_nodes.push_back(ir::CountNodes(d.body));
  }
  ASSERT_GE(gate_kernel_nodes.size(), 16u) << "a gate kernel per step and layer (8 steps, 2 layers)";
  // Reads kept at their maximum instead of summed, these grew 67, 115, 162, ... 397.
  const int largest = *std::max_element(gate_kernel_nodes.begin(), gate_kernel_nodes.end());
  EXPECT_LE(largest, 2 * gate_kernel_nodes.front())
      << "a later step recomputes earlier steps' cell states: " << ::testing::PrintToString(gate_kernel_nodes);
}

// ---- the primitive table ---------------------------------------------------------

TEST(LoopNestCodegen, PrimTableSpellsEveryPrimitive) {
  using core::DType;
  using ir::PrimClass;
  const std::vector<std::string> names = {"opnd_p", "opnd_q", "opnd_r"};
  const codegen::Language languages[] = {codegen::Language::kCppScalar, codegen::Language::kCppVector,
                                         codegen::Language::kTriton};
  auto expect_spelled = [&](codegen::Language lang, ir::Prim p, DType operand, DType result) {
    const ir::PrimInfo& info = ir::Info(p);
    const std::vector<std::string> args(names.begin(), names.begin() + info.arity);
    SCOPED_TRACE(std::string(info.name) + " on " + std::string(core::DTypeName(operand)) + ", language " +
                 std::to_string(static_cast<int>(lang)));
    std::string text;
    ASSERT_NO_THROW(text = codegen::SpellPrim(lang, p, operand, result, args));
    EXPECT_FALSE(text.empty());
    for (const std::string& a : args) EXPECT_NE(text.find(a), std::string::npos) << a << " missing from " << text;
  };
  int spelled_floats = 0, spelled_ints = 0;
  for (int k = 0; k < ir::kPrimCount; ++k) {
    const ir::Prim p = static_cast<ir::Prim>(k);
    const ir::PrimInfo& info = ir::Info(p);
    ASSERT_GE(info.arity, 1) << info.name;
    ASSERT_LE(info.arity, 3) << info.name;
    const PrimClass cls = info.cls;
    for (const codegen::Language lang : languages) {
      // Floats: arithmetic, float math, comparisons and tests, select, cast (to int64).
      if (cls == PrimClass::kArithmetic || cls == PrimClass::kFloatMath || cls == PrimClass::kCompare ||
          cls == PrimClass::kSelect || cls == PrimClass::kCast) {
        const DType result =
            ir::ReturnsBool(p) ? DType::kBool : (cls == PrimClass::kCast ? DType::kInt64 : DType::kFloat32);
        expect_spelled(lang, p, DType::kFloat32, result);
        ++spelled_floats;
      }
      // Logic on bool operands.
      if (cls == PrimClass::kLogic) expect_spelled(lang, p, DType::kBool, DType::kBool);
      // int64: arithmetic (every arithmetic primitive has an integer meaning), bits,
      // comparisons (isnan / isinf are float tests), select, cast (to float32).
      const bool float_test = p == ir::Prim::kIsNan || p == ir::Prim::kIsInf;
      if (cls == PrimClass::kArithmetic || cls == PrimClass::kBitwise || (cls == PrimClass::kCompare && !float_test) ||
          cls == PrimClass::kSelect || cls == PrimClass::kCast) {
        const DType result =
            ir::ReturnsBool(p) ? DType::kBool : (cls == PrimClass::kCast ? DType::kFloat32 : DType::kInt64);
        if (p == ir::Prim::kPow && lang == codegen::Language::kTriton) {
          // Triton has no integer power: the table says so instead of printing float math.
          const std::vector<std::string> args(names.begin(), names.begin() + 2);
          EXPECT_THROW(codegen::SpellPrim(lang, p, DType::kInt64, DType::kInt64, args), core::InternalError);
          continue;
        }
        expect_spelled(lang, p, DType::kInt64, result);
        ++spelled_ints;
      }
    }
  }
  // Today: 13 arithmetic + 28 float math + 8 compare + where + cast = 51 primitives on
  // float32, in 3 languages; on int64 13 arithmetic + 6 bitwise + 6 compare + where +
  // cast = 27, in 3 languages, less Triton's integer pow.
  EXPECT_GE(spelled_floats, 3 * 51) << "the float rows were walked";
  EXPECT_GE(spelled_ints, 3 * 27 - 1) << "the int64 rows were walked";
  // The enum and the info table agree at both ends.
  EXPECT_EQ(ir::Info(ir::Prim::kAdd).name, "add");
  EXPECT_EQ(ir::Info(ir::Prim::kCast).name, "cast");
  EXPECT_EQ(ir::Info(ir::Prim::kWhere).arity, 3);
}

TEST(PrimSpelling, ShiftCountsOutsideTheWidthFollowPyTorch) {
  // PyTorch (torch 2.11, CPU, measured on int64 and int32): x << s is 0 and x >> s the
  // sign fill (-1 or 0) for s >= the bit width or s < 0; C++ leaves those undefined.
  const std::string left = codegen::SpellPrim(codegen::Language::kCppVector, ir::Prim::kShiftLeft, core::DType::kInt64,
                                              core::DType::kInt64, {"a[i]", "s[i]"});
  const std::string right = codegen::SpellPrim(codegen::Language::kCppVector, ir::Prim::kShiftRight, core::DType::kInt64,
                                               core::DType::kInt64, {"a[i]", "s[i]"});
  const std::string source = "#include <dlpack/dlpack.h>\n#include <cstdint>\n"
                             "extern \"C\" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {\n"
                             "  const int64_t* a = static_cast<const int64_t*>(in[0].data);\n"
                             "  const int64_t* s = static_cast<const int64_t*>(in[1].data);\n"
                             "  int64_t* l = static_cast<int64_t*>(out[0].data);\n"
                             "  int64_t* r = static_cast<int64_t*>(out[1].data);\n"
                             "  for (int64_t i = 0; i < in[0].shape[0]; ++i) {\n"
                             "    l[i] = " + left + ";\n    r[i] = " + right + ";\n  }\n  return 0;\n}\n";
  const auto kernel = CompileAndLoad(source, 0);
  ASSERT_NE(kernel->entry, nullptr) << kernel->log << source;
  const std::vector<int64_t> a = {-5, 5, -5, 5, -5, 5, 1, -1, 3};
  const std::vector<int64_t> s = {1, 1, 63, 63, 64, 70, 62, -1, 0};
  const std::vector<int64_t> want_left = {-10, 10, INT64_MIN, INT64_MIN, 0, 0, INT64_C(1) << 62, 0, 3};
  const std::vector<int64_t> want_right = {-3, 2, -1, 0, -1, 0, 0, -1, 3};
  auto tensor = [](const std::vector<int64_t>& v) {
    eval::HostTensor t;
    t.dtype = core::DType::kInt64;
    t.shape = {static_cast<int64_t>(v.size())};
    t.bytes.resize(v.size() * sizeof(int64_t));
    std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    return t;
  };
  eval::HostTensor ta = tensor(a), ts = tensor(s), tl = tensor(a), tr = tensor(a);
  const DLTensor inputs[2] = {testing_util::HostView(ta), testing_util::HostView(ts)};
  DLTensor outputs[2] = {testing_util::HostView(tl), testing_util::HostView(tr)};
  ASSERT_EQ(kernel->entry(inputs, 2, outputs, 2), 0);
  std::vector<int64_t> got_left(a.size()), got_right(a.size());
  std::memcpy(got_left.data(), tl.bytes.data(), tl.bytes.size());
  std::memcpy(got_right.data(), tr.bytes.data(), tr.bytes.size());
  EXPECT_EQ(got_left, want_left);
  EXPECT_EQ(got_right, want_right);
}

// ---- index arithmetic -----------------------------------------------------------

TEST(LoopNestIr, ExprFoldsIndexArithmetic) {
  const ir::Expr i = ir::Var(0);
  // (i * 1) + 0 is the very node i: no op left for the printer.
  const ir::Expr same = ir::IAdd(ir::IMul(i, int64_t{1}), int64_t{0});
  EXPECT_EQ(same.get(), i.get()) << ir::ExprText(same);
  // i * 0 folds to the constant 0; i // 1 is i; i % 1 is 0.
  int64_t v = -1;
  ASSERT_TRUE(ir::IsIntConst(ir::IMul(i, int64_t{0}), &v));
  EXPECT_EQ(v, 0);
  EXPECT_EQ(ir::IFloorDiv(i, 1).get(), i.get());
  ASSERT_TRUE(ir::IsIntConst(ir::IRem(i, 1), &v));
  EXPECT_EQ(v, 0);
  // Constants fold with Python semantics: floor division rounds toward minus
  // infinity, the remainder takes the divisor's sign.
  ASSERT_TRUE(ir::IsIntConst(ir::IFloorDiv(ir::Int(-7), 2), &v));
  EXPECT_EQ(v, -4);
  ASSERT_TRUE(ir::IsIntConst(ir::IRem(ir::Int(-7), 2), &v));
  EXPECT_EQ(v, 1);
  ASSERT_TRUE(ir::IsIntConst(ir::IFloorDiv(ir::Int(7), -2), &v));
  EXPECT_EQ(v, -4);
  ASSERT_TRUE(ir::IsIntConst(ir::IRem(ir::Int(7), -2), &v));
  EXPECT_EQ(v, -1);
  ASSERT_TRUE(ir::IsIntConst(ir::IFloorDiv(ir::Int(6), 3), &v));
  EXPECT_EQ(v, 2);
  ASSERT_TRUE(ir::IsIntConst(ir::IAdd(ir::IMul(ir::Int(3), int64_t{4}), int64_t{-5}), &v));
  EXPECT_EQ(v, 7);
  // A variable operand stays an int64 op.
  const ir::Expr q = ir::IFloorDiv(i, 2);
  ASSERT_EQ(q->kind, ir::ExprKind::kOp);
  EXPECT_EQ(q->op, ir::Prim::kFloorDiv);
  EXPECT_EQ(q->dtype, core::DType::kInt64);
  EXPECT_EQ(ir::ExprText(q), "floor_div(i0, 2)");
}

// ---- matrix products for the tiled main loop (ir/contraction.h) -------------------

/// The contractions of a case's planned kernels.
std::vector<ir::Contraction> CaseContractions(const std::string& name) {
  const ir::KernelPlan plan = CasePlan(name);
  std::vector<ir::Contraction> out;
  for (int id : plan.kernels) {
    if (auto c = ir::MatchContraction(plan.program, plan.program.defs[static_cast<size_t>(id)])) out.push_back(*c);
  }
  return out;
}

TEST(LoopNestContraction, StridesOfPlainTransposedAndBatchedOperands) {
  auto mm = CaseContractions("mm");  // [5, 7] @ [7, 6]
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_EQ(std::make_tuple(mm[0].m, mm[0].n, mm[0].k), std::make_tuple(5, 6, 7));
  EXPECT_EQ(std::make_tuple(mm[0].a_m, mm[0].a_k, mm[0].b_k, mm[0].b_n), std::make_tuple(7, 1, 6, 1));
  EXPECT_TRUE(mm[0].batch.empty());
  auto t = CaseContractions("mm_odd_transposed_relu");  // [37, 300] @ [53, 300]^T
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(std::make_tuple(t[0].m, t[0].n, t[0].k), std::make_tuple(37, 53, 300));
  EXPECT_EQ(std::make_tuple(t[0].b_k, t[0].b_n), std::make_tuple(1, 300));
  auto b = CaseContractions("bmm_transposed_a");  // [3, 300, 19]^T(1, 2) @ [3, 300, 23]
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].batch, std::vector<int64_t>{3});
  EXPECT_EQ(std::make_tuple(b[0].a_m, b[0].a_k, b[0].a_batch[0]), std::make_tuple(1, 19, 300 * 19));
  EXPECT_EQ(std::make_tuple(b[0].b_k, b[0].b_n, b[0].b_batch[0]), std::make_tuple(23, 1, 300 * 23));
  // Two products, the relu between them materialized.
  EXPECT_EQ(CaseContractions("mm_relu_mm").size(), 2u);
  // nn.Linear on [2, 9, 40]: the reshape to [18, 40] cancels to plain strides.
  auto lin = CaseContractions("linear_3d");
  ASSERT_EQ(lin.size(), 1u);
  EXPECT_EQ(std::make_tuple(lin[0].m, lin[0].n, lin[0].k, lin[0].a_m, lin[0].a_k), std::make_tuple(18, 11, 40, 40, 1));
  // [2, 1, 9, 40] @ [3, 40, 11] flattens the broadcast batch to 6: A's batch offset is
  // (b // 3) * 360, not affine in b; as two batch dims [2, 3] it is A (360, 0), B (0, 440).
  auto bc = CaseContractions("matmul_broadcast");
  ASSERT_EQ(bc.size(), 1u);
  EXPECT_EQ(bc[0].batch, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(bc[0].a_batch, (std::vector<int64_t>{360, 0}));
  EXPECT_EQ(bc[0].b_batch, (std::vector<int64_t>{0, 440}));
  // A convolution's operand indices are masked and computed: not a matrix product.
  EXPECT_TRUE(CaseContractions("conv2d_stride_dilation").empty());
  // einsum("bhqd,bhkd->bhqk") on [2, 3, 5, 24] and [2, 3, 7, 24]: k is permuted between
  // two reshapes, whose div / mod chains do not cancel pairwise; with the vars' ranges
  // they are affine: batch 6 (b h), A [5, 24] rows of 24, B read k-major (b_k = 1, b_n = 24).
  auto e = CaseContractions("einsum_heads");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].batch, std::vector<int64_t>{6});
  EXPECT_EQ(std::make_tuple(e[0].m, e[0].n, e[0].k), std::make_tuple(5, 7, 24));
  EXPECT_EQ(std::make_tuple(e[0].a_m, e[0].a_k, e[0].a_batch[0]), std::make_tuple(24, 1, 5 * 24));
  EXPECT_EQ(std::make_tuple(e[0].b_k, e[0].b_n, e[0].b_batch[0]), std::make_tuple(1, 24, 7 * 24));
  // Per-head scores of [2, 9, 24] viewed [2, 9, 3, 8], heads moved forward, then bmm over
  // the flattened (b h): head h of batch b starts at 216 b + 8 h, no single stride of
  // b h, so the batch splits into [2, 3] with A's strides 216 and 8 (the output's own
  // batch, for an epilogue, stays [6]).
  auto h = CaseContractions("heads_scores");
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].batch, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h[0].out_batch, std::vector<int64_t>{6});
  EXPECT_EQ(h[0].a_batch, (std::vector<int64_t>{216, 8}));
  EXPECT_EQ(h[0].b_batch, (std::vector<int64_t>{264, 8}));
  EXPECT_EQ(std::make_tuple(h[0].m, h[0].n, h[0].k, h[0].a_m, h[0].a_k, h[0].b_k, h[0].b_n),
            std::make_tuple(9, 11, 8, 24, 1, 1, 24));
}

TEST(LoopNestContraction, ReshapeIndexChainsCancelToAffineOffsets) {
  using ir::IAdd;
  using ir::IFloorDiv;
  using ir::IMul;
  using ir::IRem;
  using ir::Var;
  // A [4, 5, 6] tensor read through a [20, 6] view at (v0, v1), flattened again:
  // (v0 // 5) * 30 + (v0 % 5) * 6 + v1 = 6 v0 + v1.
  const ir::Expr flat = IAdd(IMul(Var(0), 6), Var(1));
  const auto idx = ir::Unflatten(flat, {4, 5, 6});
  const auto affine = ir::AffineOf(ir::FlatOffset(idx, {4, 5, 6}));
  ASSERT_TRUE(affine.has_value());
  EXPECT_EQ(affine->constant, 0);
  EXPECT_EQ(affine->Coeff(0), 6);
  EXPECT_EQ(affine->Coeff(1), 1);
  // A floor division alone does not cancel; neither does a product of two indices.
  EXPECT_FALSE(ir::AffineOf(IFloorDiv(Var(0), 3)).has_value());
  EXPECT_FALSE(ir::AffineOf(IAdd(IRem(Var(0), 3), IMul(IFloorDiv(Var(0), 3), 2))).has_value());
  EXPECT_FALSE(ir::AffineOf(IMul(Var(0), Var(1))).has_value());
  // Nested divisions fold: ((v0 // 2) // 3) * 6 + (v0 // 2 % 3) * 2 + v0 % 2 = v0.
  const ir::Expr v = Var(0);
  const auto nested = ir::AffineOf(
      IAdd(IAdd(IMul(IFloorDiv(IFloorDiv(v, 2), 3), 6), IMul(IRem(IFloorDiv(v, 2), 3), 2)), IRem(v, 2)));
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->Coeff(0), 1);
  // With the vars' ranges: floor((3 v0 + v1) / 3) = v0 and (3 v0 + v1) mod 3 = v1 when
  // v1 < 3, so 10 floor(x / 3) + x mod 3 = 10 v0 + v1; with v1 up to 3 it is not affine.
  const ir::Expr x = IAdd(IMul(Var(0), 3), Var(1));
  const ir::Expr split = IAdd(IMul(IFloorDiv(x, 3), 10), IRem(x, 3));
  const std::vector<int64_t> fits = {5, 3}, too_wide = {5, 4};
  EXPECT_FALSE(ir::AffineOf(split).has_value());
  const auto ranged = ir::AffineOf(split, &fits);
  ASSERT_TRUE(ranged.has_value());
  EXPECT_EQ(std::make_tuple(ranged->constant, ranged->Coeff(0), ranged->Coeff(1)), std::make_tuple(0, 10, 1));
  EXPECT_FALSE(ir::AffineOf(split, &too_wide).has_value());
  // floor(v0 / 4) mod 2 with v0 < 8 is floor(v0 / 4), not affine; a constant offset
  // that keeps the remainder in range: floor((4 v0 + 2 + v1) / 4) = v0 for v1 < 2.
  EXPECT_FALSE(ir::AffineOf(IRem(IFloorDiv(Var(0), 4), 2), &fits).has_value());
  const std::vector<int64_t> small = {5, 2};
  const auto shifted = ir::AffineOf(IFloorDiv(IAdd(IAdd(IMul(Var(0), 4), ir::Int(2)), Var(1)), 4), &small);
  ASSERT_TRUE(shifted.has_value());
  EXPECT_EQ(std::make_tuple(shifted->constant, shifted->Coeff(0), shifted->Coeff(1)), std::make_tuple(0, 1, 0));
}

TEST(LoopNestContraction, OneProductOfMillionsOfMultiplyAddsGetsAllThreadsFirst) {
  // 128^3 = 2M iterations: fewer than kSmallProgramIterations in all, but one kernel of
  // more than kSmallKernelIterations, so the fork and join are a small share.
  GraphBuilder g({128, 128});
  const auto a = g.Input("a"), b = g.Input("b");
  g.Call("mm", "aten.mm.default", {Ref("self", a), Ref("mat2", b)});
  const core::Problem problem = g.Finish("mm", 2);
  const auto match = families::MatchLoopNest(problem.graph, /*multithread=*/true);
  ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
  const auto drafts = match.tmpl->Drafts();
  ASSERT_EQ(drafts.size(), 4u);  // baseline, tiled on all threads, all threads, fast
  EXPECT_EQ(drafts[1].at("main_loop"), "tiled");
  EXPECT_EQ(drafts[1].at("threads"), "all");
}

TEST(LoopNestContraction, OneThreadComesFirstForManySmallKernelsOrTinyOnes) {
  // The 28-kernel transformer encoder layer of ~90K iterations a kernel: one thread
  // first (fork and join per kernel); max_pool2d_indices' 3 kernels of 120K on average:
  // all threads first; a 10K-iteration product: one thread; one 2M-iteration product: all.
  EXPECT_TRUE(families::HeavyDraftOnOneThreadFirst(28, 28 * 90e3));
  EXPECT_FALSE(families::HeavyDraftOnOneThreadFirst(3, 360448));
  EXPECT_TRUE(families::HeavyDraftOnOneThreadFirst(2, 10e3));
  EXPECT_FALSE(families::HeavyDraftOnOneThreadFirst(1, 2e6));
  // The program's total and the per-kernel average still bound the rule.
  EXPECT_FALSE(families::HeavyDraftOnOneThreadFirst(40, 40 * 200e3));
  EXPECT_FALSE(families::HeavyDraftOnOneThreadFirst(8, 8 * 300e3));
}

TEST(LoopNestContraction, TiledDraftsPrintTheGemmAndOthersDoNot) {
  // [13, 40] @ [40, 19]: a tiny program (10K iterations), so its tiled draft comes on
  // one thread first.
  const auto match = families::MatchLoopNest(CaseGraph("addmm_sigmoid"), /*multithread=*/true);
  ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
  const auto drafts = match.tmpl->Drafts();
  ASSERT_EQ(drafts.size(), 5u);
  EXPECT_EQ(drafts[1].at("main_loop"), "tiled");  // right after the baseline
  EXPECT_EQ(drafts[1].at("threads"), "1");        // a tiny program: one thread first
  EXPECT_EQ(drafts[2].at("main_loop"), "tiled");
  EXPECT_EQ(drafts[2].at("threads"), "all");
  EXPECT_NE(match.tmpl->Generate(drafts[1]).find("ke_gemm("), std::string::npos);
  EXPECT_EQ(match.tmpl->Generate(drafts.front()).find("ke_gemm("), std::string::npos);
}

TEST(LoopNestContraction, TriangularMasksSkipTheTilesOutsideTheTriangle) {
  // tril(a @ b): the epilogue reads the product only where i1 <= i0 (i0 - i1 >= 0);
  // triu(bmm, -3) * 2 only where i2 - i1 + 3 >= 0 (row 1, col 2 of [2, 23, 31]). The
  // tiled draft passes those half-planes to ke_gemm (EveryCaseMatchesEagerOnEveryDraft
  // runs both against eager).
  const nlohmann::json tiled = {{"main_loop", "tiled"}, {"simd", "on"}};
  const auto tril = families::MatchLoopNest(CaseGraph("mm_tril"), /*multithread=*/false);
  ASSERT_NE(tril.tmpl, nullptr) << tril.unsupported;
  const std::string tril_source = tril.tmpl->Generate(tiled);
  EXPECT_NE(tril_source.find("INT64_C(1) * (ke_r0 + ke_nr - 1) + INT64_C(-1) * ke_c0 + INT64_C(0) >= 0"),
            std::string::npos)
      << tril_source;
  EXPECT_NE(tril_source.find("ke_epi, ke_live);"), std::string::npos);
  const auto triu = families::MatchLoopNest(CaseGraph("bmm_triu_offset"), /*multithread=*/false);
  ASSERT_NE(triu.tmpl, nullptr) << triu.unsupported;
  const std::string triu_source = triu.tmpl->Generate(tiled);
  EXPECT_NE(triu_source.find("INT64_C(-1) * ke_r0 + INT64_C(1) * (ke_c0 + ke_nc - 1) + INT64_C(3) >= 0"),
            std::string::npos)
      << triu_source;
  // A band, triu(tril(p, 8), -5): both sides (i0 - i1 + 8 >= 0 and i1 - i0 + 5 >= 0).
  const auto band = families::MatchLoopNest(CaseGraph("mm_band"), /*multithread=*/false);
  ASSERT_NE(band.tmpl, nullptr) << band.unsupported;
  const std::string band_source = band.tmpl->Generate(tiled);
  EXPECT_NE(band_source.find("INT64_C(1) * (ke_r0 + ke_nr - 1) + INT64_C(-1) * ke_c0 + INT64_C(8) >= 0"),
            std::string::npos)
      << band_source;
  EXPECT_NE(band_source.find("INT64_C(-1) * ke_r0 + INT64_C(1) * (ke_c0 + ke_nc - 1) + INT64_C(5) >= 0"),
            std::string::npos)
      << band_source;
  // A product without a mask, or whose epilogue reads it outside a where: every tile.
  for (const char* name : {"linear_gelu_residual_clamp", "mm"}) {
    const auto plain = families::MatchLoopNest(CaseGraph(name), /*multithread=*/false);
    ASSERT_NE(plain.tmpl, nullptr) << plain.unsupported;
    EXPECT_EQ(plain.tmpl->Generate(tiled).find("ke_live"), std::string::npos) << name;
  }
}

TEST(LoopNestContraction, EveryTileAndPanelDepthMatchesEager) {
  // Odd sizes against every register tile (edges in M and N), K = 300 past one
  // 256-deep panel (the accumulate path), a transposed B and a transposed, batched A,
  // an operand permuted between two reshapes (einsum over heads), a batch flattened across
  // a permute (per-head scores, two batch dims).
  const std::vector<std::string> cases = {"mm_odd_transposed_relu", "bmm_transposed_a", "linear_3d", "linear",
                                          "einsum_heads", "heads_scores", "matmul_broadcast"};
  DraftBatch batch;
  for (const std::string& name : cases) {
    const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true, /*vector_lanes=*/16);
    ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
    if (!match.tmpl->Space().Canonical(nlohmann::json::object()).contains("main_loop")) {
      ADD_FAILURE() << name << ": no matrix product found";
      continue;
    }
    std::vector<nlohmann::json> settings = {{{"main_loop", "tiled"}, {"threads", "1"}}};
    for (const char* tile : {"6x2", "4x3", "8x3"}) {
      for (int kc : {256, 512}) settings.push_back({{"main_loop", "tiled"}, {"tile", tile}, {"block_k", kc}, {"threads", "all"}});
    }
    for (const auto& k : settings) {
      batch.Add(name, k, match.tmpl->Generate(k));
    }
  }
  // AVX2's 8 lanes for the transposed weights (8 x 8 register transposes while packing
  // B, with whole tiles, a partial depth chunk and partial columns).
  for (const std::string name : {"mm_odd_transposed_relu", "linear_3d"}) {
    const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true, /*vector_lanes=*/8);
    ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
    const nlohmann::json k = {{"main_loop", "tiled"}, {"tile", "4x3"}, {"block_k", 256}, {"threads", "all"}};
    batch.Add(name, k, match.tmpl->Generate(k));
  }
  CompileAndCompareAll(batch);
}

// ---- fused epilogues (codegen/cpp/gemm_cpp.h) ------------------------------------

TEST(LoopNestEpilogue, ElementWiseConsumersRunInTheMainLoopsStore) {
  // Each case's product has one element-wise consumer (bias, activation, residual,
  // clamp): under main_loop = tiled it becomes the GEMM's epilogue and the product
  // gets no buffer; under "loops" it stays a kernel of its own. The unit_batch cases'
  // consumers read the product at index 0 of its leading size-1 dim.
  for (const std::string& name : {"linear_gelu_residual_clamp", "addmm_sigmoid", "conv2d_3x3_bias_relu",
                                  "conv1d_strided_silu", "mm_relu_mm", "mm_odd_transposed_relu",
                                  "bmm_unit_batch_residual_relu", "conv2d_unit_batch_sigmoid"}) {
    SCOPED_TRACE(name);
    const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true);
    ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
    const std::string tiled = match.tmpl->Generate({{"main_loop", "tiled"}});
    EXPECT_NE(tiled.find("epilogue t"), std::string::npos) << tiled;
    EXPECT_NE(tiled.find("ke_epi"), std::string::npos);
    // The header names the fused kernel as such, not as a step of its own.
    EXPECT_NE(tiled.find("'s main loop)"), std::string::npos) << tiled.substr(0, 600);
    const std::string loops = match.tmpl->Generate({{"main_loop", "loops"}});
    EXPECT_EQ(loops.find("ke_epi"), std::string::npos);
    EXPECT_EQ(loops.find("'s main loop)"), std::string::npos);
  }
  // A product that is itself the output has nothing to fuse.
  const auto mm = families::MatchLoopNest(CaseGraph("mm"), /*multithread=*/true);
  ASSERT_TRUE(mm.tmpl != nullptr);
  const std::string plain = mm.tmpl->Generate({{"main_loop", "tiled"}});
  EXPECT_NE(plain.find("ke_gemm_identity{}"), std::string::npos);
  EXPECT_EQ(plain.find("ke_epi"), std::string::npos);
}

TEST(LoopNestEpilogue, ABiasAddAndReluBetweenTwoProductsAreTheFirstOnesEpilogue) {
  // relu(x @ w1^T + b1) @ w2^T + b2: the relu is a buffer (the second product reads each
  // element 16 times); the bias add inlines into it rather than being a kernel of its
  // own, so the pair runs in the first product's store.
  const auto match = families::MatchLoopNest(CaseGraph("linear_relu_linear"), /*multithread=*/true);
  ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
  const std::string tiled = match.tmpl->Generate({{"main_loop", "tiled"}});
  const std::string header = tiled.substr(0, tiled.find("// Knobs:"));
  EXPECT_EQ(header.find("element [5, 40] <- addmm"), std::string::npos) << header;
  EXPECT_NE(header.find("element [5, 40] <- relu"), std::string::npos) << header;
  EXPECT_NE(tiled.find("[5, 40]: the epilogue of t"), std::string::npos) << tiled;
}

TEST(LoopNestEpilogue, AConvolutionEpilogueReadsItsResidualAtOneFlatIndex) {
  // x + s * sigmoid(s), s = conv2d(x): the residual x has the convolution's shape, so
  // the epilogue reads it at the element's flat position, computed once from the image,
  // the channel and the GEMM column, not through a division per spatial dim. Both
  // forms: the implicit GEMM and the direct depthwise one (conv3d_depthwise_bias_add).
  for (const std::string& name : {"conv2d_swish_residual", "conv3d_depthwise_bias_add", "conv1d_unbatched_residual"}) {
    SCOPED_TRACE(name);
    const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true);
    ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
    const std::string tiled = match.tmpl->Generate({{"main_loop", "tiled"}});
    EXPECT_NE(tiled.find("const int64_t ke_own = "), std::string::npos) << tiled;
    EXPECT_NE(tiled.find("[ke_own];"), std::string::npos) << tiled;
  }
}

TEST(LoopNestEpilogue, AccumulatorKnobOnlyWhereItActs) {
  // mm's only float32 sum is the product: the tiled GEMM accumulates in float32
  // whatever the knob says, so the knob exists only under main_loop = loops.
  const auto mm = families::MatchLoopNest(CaseGraph("mm"), /*multithread=*/true);
  ASSERT_TRUE(mm.tmpl != nullptr);
  EXPECT_FALSE(mm.tmpl->Space().Canonical({{"main_loop", "tiled"}}).contains("accumulator"));
  EXPECT_EQ(mm.tmpl->Space().Canonical({{"main_loop", "loops"}}).at("accumulator"), "float64");
  // A program without a product keeps it unconditionally.
  const auto ln = families::MatchLoopNest(CaseGraph("layer_norm"), /*multithread=*/true);
  ASSERT_TRUE(ln.tmpl != nullptr);
  EXPECT_FALSE(ln.tmpl->Space().Canonical(nlohmann::json::object()).contains("main_loop"));
  EXPECT_EQ(ln.tmpl->Space().Canonical(nlohmann::json::object()).at("accumulator"), "float64");
}

// ---- convolutions as implicit GEMMs (ir/convolution.h, codegen/cpp/conv_cpp.h) ----

/// The convolutions of a case's planned kernels.
std::vector<ir::Convolution> CaseConvolutions(const std::string& name) {
  const ir::KernelPlan plan = CasePlan(name);
  std::vector<ir::Convolution> out;
  for (int id : plan.kernels) {
    if (auto c = ir::MatchConvolution(plan.program, plan.program.defs[static_cast<size_t>(id)])) out.push_back(*c);
  }
  return out;
}

TEST(LoopNestConvolution, MatcherReadsStridePaddingDilationAndGroups) {
  // nn.Conv2d(6, 9, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=3) on [3, 6, 10, 17].
  auto g = CaseConvolutions("conv2d_grouped_strided_padded");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(g[0].batched);
  EXPECT_EQ(std::make_tuple(g[0].images, g[0].cin, g[0].cout, g[0].groups), std::make_tuple(3, 6, 9, 3));
  EXPECT_EQ(g[0].kernel, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(g[0].stride, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(g[0].pad, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(g[0].dilation, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(g[0].in, (std::vector<int64_t>{10, 17}));
  EXPECT_EQ(g[0].out, (std::vector<int64_t>{5, 19}));  // (10 + 2 - 3) / 2 + 1, 17 + 4 - 2 - 1 + 1
  EXPECT_EQ(std::make_tuple(g[0].Depth(), g[0].OutPositions()), std::make_tuple(2 * 3 * 2, 5 * 19));
  // Depthwise: groups = channels.
  auto dw = CaseConvolutions("conv2d_depthwise");
  ASSERT_EQ(dw.size(), 1u);
  EXPECT_TRUE(dw[0].batched);
  EXPECT_EQ(std::make_tuple(dw[0].groups, dw[0].CinPerGroup(), dw[0].CoutPerGroup()), std::make_tuple(4, 1, 2));
  // An unbatched input is captured as unsqueeze, convolution, squeeze: read through the
  // unsqueeze's index map the term is not the lowering's own, so the plan materializes
  // the unsqueezed input (a copy kernel) and the convolution is one of one image.
  auto unbatched = CaseConvolutions("conv2d_depthwise_unbatched");
  ASSERT_EQ(unbatched.size(), 1u);
  EXPECT_EQ(std::make_tuple(unbatched[0].images, unbatched[0].groups), std::make_tuple(1, 4));
  // 1-d and 3-d.
  auto c1 = CaseConvolutions("conv1d_strided_silu");
  ASSERT_EQ(c1.size(), 1u);
  EXPECT_EQ(std::make_tuple(c1[0].stride[0], c1[0].pad[0], c1[0].out[0]), std::make_tuple(2, 2, 20));
  auto c3 = CaseConvolutions("conv3d_padded");
  ASSERT_EQ(c3.size(), 1u);
  EXPECT_EQ(c3[0].stride, (std::vector<int64_t>{1, 2, 1}));
  EXPECT_EQ(c3[0].pad, (std::vector<int64_t>{1, 1, 1}));
  // ConvTranspose2d(3, 2, 3, stride=2, output_padding=1) on [2, 3, 4, 4] (10 x 10
  // outputs) is lowered as one plain convolution per output phase (r0, r1), r = (o + p)
  // % 2: each reads the 4 x 4 input itself at stride 1 with the phase's T_r = ceil((3 -
  // r) / 2) taps (2 for r = 0, 1 for r = 1) and padding T_r - 1, into (10 - 1 - r) // 2
  // + 1 = 5 outputs per dim. Phases run with r0 fastest.
  auto t = CaseConvolutions("conv_transpose2d");
  ASSERT_EQ(t.size(), 4u);
  const std::vector<std::vector<int64_t>> pads = {{1, 1}, {0, 1}, {1, 0}, {0, 0}};
  for (size_t ph = 0; ph < t.size(); ++ph) {
    EXPECT_EQ(std::make_tuple(t[ph].cin, t[ph].cout, t[ph].groups), std::make_tuple(3, 2, 1));
    EXPECT_EQ(t[ph].stride, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(t[ph].pad, pads[ph]) << "phase " << ph;
    EXPECT_EQ(t[ph].in, (std::vector<int64_t>{4, 4}));
    EXPECT_EQ(t[ph].out, (std::vector<int64_t>{5, 5}));
    EXPECT_EQ(t[ph].kernel, (std::vector<int64_t>{static_cast<int64_t>(2 - ph % 2), static_cast<int64_t>(2 - ph / 2)}));
  }
  // Kernel 2 < stride 3: phase 2 has no tap in either dim, so 2 x 2 of the 3 x 3 phases
  // are convolutions.
  EXPECT_EQ(CaseConvolutions("conv_transpose2d_short_kernel").size(), 4u);
  // Dilation 2: the plain convolution over the zero-upsampled input (5 inputs -> 13).
  auto tg = CaseConvolutions("conv_transpose1d_grouped_dilated");
  ASSERT_EQ(tg.size(), 1u);
  EXPECT_EQ(std::make_tuple(tg[0].groups, tg[0].dilation[0], tg[0].pad[0], tg[0].in[0]), std::make_tuple(2, 2, 3, 13));
  // Padding 3 > (K - 1) d = 1: the masked transposed sum, a loop nest.
  EXPECT_TRUE(CaseConvolutions("conv_transpose1d_wide_pad").empty());
  // Matrix products are not convolutions.
  EXPECT_TRUE(CaseConvolutions("mm").empty());
}

TEST(LoopNestConvolution, EveryTileVectorWidthAndThreadCountMatchesEager) {
  // Each convolution case under the implicit GEMM, with 8- and 16-lane vectors (the
  // latter compiles to two AVX2 registers here: correctness, not speed), every tile,
  // both panel depths, one thread and all (batch-parallel and tile-parallel paths).
  const std::vector<std::string> cases = {"conv1d",
                                          "conv2d_stride_dilation",
                                          "conv2d_grouped",
                                          "conv2d_3x3_bias_relu",
                                          "conv2d_1x1_nobias",
                                          "conv2d_grouped_strided_padded",
                                          "conv2d_depthwise",
                                          "conv1d_strided_silu",
                                          "conv3d_padded",
                                          "conv2d_stride3_pad_past_window",
                                          "conv2d_stride2_long_rows",
                                          "conv1d_stride2_unpadded"};
  DraftBatch batch;
  for (const std::string& name : cases) {
    for (int lanes : {8, 16}) {
      const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true, lanes);
      ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
      if (!match.tmpl->Space().Canonical(nlohmann::json::object()).contains("main_loop")) {
        ADD_FAILURE() << name << ": no convolution found";
        break;
      }
      std::vector<nlohmann::json> settings = {{{"main_loop", "tiled"}, {"threads", "1"}}};
      for (const char* tile : {"6x2", "4x3"}) {
        settings.push_back({{"main_loop", "tiled"}, {"tile", tile}, {"block_k", lanes == 8 ? 256 : 512}, {"threads", "all"}});
      }
      if (lanes == 16) settings.push_back({{"main_loop", "tiled"}, {"tile", "8x3"}, {"threads", "all"}});
      for (const auto& k : settings) {
        const std::string& source = batch.Add(name, k, match.tmpl->Generate(k));
        EXPECT_NE(source.find("implicit GEMM"), std::string::npos) << name;
      }
    }
  }
  CompileAndCompareAll(batch);
}

TEST(LoopNestContraction, FusedEpiloguesMatchEagerOnEveryTile) {
  // The fused epilogue on edge tiles (M = 13, 14 rows; N = 19, 29 columns) and after
  // a K of 300 (two panels at kc = 256: the epilogue runs on the last only).
  const std::vector<std::string> cases = {"linear_gelu_residual_clamp", "addmm_sigmoid", "mm_relu_mm"};
  DraftBatch batch;
  for (const std::string& name : cases) {
    const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true);
    ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
    for (const char* tile : {"6x2", "4x3"}) {
      for (const char* math : {"libm", "vectorized"}) {
        const nlohmann::json k = {{"main_loop", "tiled"}, {"tile", tile}, {"math", math}, {"threads", "all"}};
        batch.Add(name, k, match.tmpl->Generate(k));
      }
    }
  }
  CompileAndCompareAll(batch);
}

// ---- row-blocked reductions: pooling (reduce_loop = "outer") ---------------------

TEST(LoopNestPlan, OperandsNoAffineMapReadsAreMaterializedForTheMainLoop) {
  {
    // Linear over x.transpose(0, 1).reshape(15, 8) of x [3, 5, 8]: row i of A is row
    // (i % 3) * 5 + i // 3 of x, not affine in i. The reshaped operand becomes a copy
    // kernel [15, 8] and the product reads it densely; the weight's transpose is affine
    // and stays a view (the product reads the input, b_k = 1, b_n = 8).
    const ir::KernelPlan plan = CasePlan("linear_permuted_rows");
    const auto contractions = CaseContractions("linear_permuted_rows");
    ASSERT_EQ(contractions.size(), 1u);
    const ir::Contraction& c = contractions[0];
    EXPECT_EQ(std::make_tuple(c.m, c.n, c.k, c.a_m, c.a_k, c.b_k, c.b_n), std::make_tuple(15, 6, 8, 8, 1, 1, 8));
    const ir::TensorDef& a = plan.program.defs.at(static_cast<size_t>(c.a));
    EXPECT_EQ(a.kind, ir::DefKind::kCompute);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{15, 8}));
    EXPECT_TRUE(plan.materialized.at(static_cast<size_t>(c.a)));
    EXPECT_EQ(plan.program.defs.at(static_cast<size_t>(c.b)).kind, ir::DefKind::kInput);
    EXPECT_LT(std::find(plan.kernels.begin(), plan.kernels.end(), c.a) - plan.kernels.begin(),
              plan.kernels.end() - plan.kernels.begin()) << "the copy is a kernel";
  }
  {
    // Conv2d over a channels-last input permuted to NCHW: the permuted input is copied
    // once, then the convolution is the implicit GEMM.
    const ir::KernelPlan plan = CasePlan("conv2d_channels_last_input");
    const auto convs = CaseConvolutions("conv2d_channels_last_input");
    ASSERT_EQ(convs.size(), 1u);
    EXPECT_EQ(std::make_tuple(convs[0].images, convs[0].cin, convs[0].cout), std::make_tuple(2, 4, 5));
    const ir::TensorDef& x = plan.program.defs.at(static_cast<size_t>(convs[0].x));
    EXPECT_EQ(x.kind, ir::DefKind::kCompute);
    EXPECT_EQ(x.shape, (std::vector<int64_t>{2, 4, 6, 7}));
  }
  // An operand that is already affine is not copied: plain and transposed products
  // keep reading their inputs.
  for (const char* name : {"mm", "mm_odd_transposed_relu", "bmm_transposed_a", "einsum_heads", "heads_scores"}) {
    SCOPED_TRACE(name);
    const ir::KernelPlan plan = CasePlan(name);
    for (const ir::Contraction& c : CaseContractions(name)) {
      EXPECT_EQ(plan.program.defs.at(static_cast<size_t>(c.a)).kind, ir::DefKind::kInput);
      EXPECT_EQ(plan.program.defs.at(static_cast<size_t>(c.b)).kind, ir::DefKind::kInput);
    }
  }
}

TEST(LoopNestReduce, ContiguousRowSumsStayInnerVectorizedReductionsUnderTheOuterKnob) {
  // A layer norm over rows of 40 contiguous floats: with reduce_loop = "outer" its mean
  // and variance sums still run one row at a time as `omp simd reduction` loops (rows
  // blocked side by side would read them 40 floats apart); a pooling window keeps the
  // row-blocked form.
  const auto ln = families::MatchLoopNest(CaseGraph("layer_norm_rows"), /*multithread=*/false);
  ASSERT_NE(ln.tmpl, nullptr) << ln.unsupported;
  const nlohmann::json knobs = {{"simd", "on"}, {"math", "vectorized"}, {"reduce_loop", "outer"}};
  const std::string source = ln.tmpl->Generate(knobs);
  EXPECT_NE(source.find("#pragma omp simd reduction(+:acc)"), std::string::npos) << source;
  EXPECT_EQ(source.find("ke_j0"), std::string::npos) << "no row block";
  const std::string plain = ln.tmpl->Generate({{"simd", "off"}, {"reduce_loop", "outer"}});
  EXPECT_EQ(plain.find("omp simd reduction"), std::string::npos) << "simd off: sequential sums";
  const auto pool = families::MatchLoopNest(CaseGraph("avg_pool2d_ceil_include_pad"), /*multithread=*/false);
  ASSERT_NE(pool.tmpl, nullptr) << pool.unsupported;
  const std::string pooled = pool.tmpl->Generate(knobs);
  EXPECT_NE(pooled.find("ke_j0"), std::string::npos) << pooled;
  EXPECT_EQ(pooled.find("omp simd reduction"), std::string::npos);
}

TEST(LoopNestPooling, RowBlockedWindowsMatchEager) {
  // Max (values and argmax indices), average (padding counted or not, ceil_mode,
  // dilation) and adaptive windows, and a reduction over a leading dim, with the
  // reduced loops outside a vectorized block of outputs; rows of 5 to 13 outputs (one
  // partial block) and one thread or all.
  const std::vector<std::string> cases = {"max_pool2d_indices", "avg_pool2d_pad",          "adaptive_avg_pool2d",
                                          "max_pool2d_dilated_ceil", "avg_pool2d_ceil_include_pad",
                                          "max_pool1d_indices", "sum_dims_0_2", "argmax_ties", "softmax_dim0",
                                          "adaptive_max_pool3d_indices", "adaptive_max_pool2d_neg_inf"};
  DraftBatch batch;
  for (const std::string& name : cases) {
    const auto match = families::MatchLoopNest(CaseGraph(name), /*multithread=*/true);
    ASSERT_TRUE(match.tmpl != nullptr) << match.unsupported;
    ASSERT_TRUE(match.tmpl->Space().Canonical(nlohmann::json::object()).contains("reduce_loop")) << name;
    const bool sums = match.tmpl->Space().Canonical(nlohmann::json::object()).contains("accumulator");
    for (nlohmann::json k : {nlohmann::json{{"reduce_loop", "outer"}, {"threads", "1"}},
                             nlohmann::json{{"reduce_loop", "outer"}, {"threads", "all"}, {"simd", "on"},
                                            {"math", "vectorized"}, {"accumulator", "float32"}}}) {
      if (!sums) k.erase("accumulator");  // max pooling sums nothing
      const std::string& source = batch.Add(name, k, match.tmpl->Generate(k));
      // With threads, a sum of fewer than 64 outputs splits its reduced loops instead.
      if (k.at("threads") == "1") {
        EXPECT_NE(source.find("ke_j0 + ke_j"), std::string::npos) << name << ": no row-blocked reduction";
      }
      // Padded and ceil-mode windows: the row is split at the range checks, with an
      // unmasked interior loop between the masked edges (ir/interior_split.h).
      if (name == "avg_pool2d_pad" || name == "max_pool2d_dilated_ceil" || name == "avg_pool2d_ceil_include_pad") {
        EXPECT_NE(source.find("ke_j < ke_hi"), std::string::npos) << name << ": no interior split";
      }
    }
  }
  CompileAndCompareAll(batch);
}

// ---- the sort family (a lone sort or top-k) ------------------------------------------

TEST(SortFamily, EverySettingMatchesEagerOnTiesNanAndOtherDims) {
  // Descending with ties, NaN, infinities and -0.0 == +0.0; int64 along dim 0 with
  // ties (stable); top-k of the smallest along dim 0 with a NaN. Every algorithm, one
  // thread and all, every chunk.
  DraftBatch batch;
  for (const std::string name : {"sort_desc_nan_ties", "sort_int64_dim0", "topk_smallest_dim0"}) {
    const core::OpGraph graph = CaseGraph(name);
    const auto match = families::MatchSort(graph, /*multithread=*/true);
    ASSERT_TRUE(match.has_value() && match->tmpl != nullptr) << name;
    EXPECT_EQ(match->tmpl->Name(), "sort");
    const auto settings = match->tmpl->Space().Enumerate();
    // 3 sort algorithms or 4 top-k ones, each on 1 thread and on all with 3 chunk sizes.
    const size_t algorithms = std::string(name).rfind("topk", 0) == 0 ? 4 : 3;
    EXPECT_EQ(settings.size(), algorithms * (1 + 3)) << name;
    for (const auto& k : settings) batch.Add(name, k, match->tmpl->Generate(k));
  }
  CompileAndCompareAll(batch);
}

TEST(SortFamily, TakesOnlyALoneSortOrTopK) {
  // The template operator picks the family for a lone sort; a top-k inside a bigger
  // graph stays a loop-nest program (the counting form).
  core::Problem lone;
  lone.graph = CaseGraph("sort_int64_dim0");
  const auto picked = templates::MatchTemplate(lone, 2);
  ASSERT_TRUE(picked.tmpl != nullptr) << picked.unsupported;
  EXPECT_EQ(picked.tmpl->Name(), "sort");
  core::Problem chain;
  chain.graph = CaseGraph("topk_relu_sum");
  EXPECT_FALSE(families::MatchSort(chain.graph, true).has_value());
  const auto fallback = templates::MatchTemplate(chain, 2);
  ASSERT_TRUE(fallback.tmpl != nullptr) << fallback.unsupported;
  EXPECT_EQ(fallback.tmpl->Name(), "loop_nest");
  // The generated source reads the row length from the tensor, and top-k checks k
  // against it (return 3) rather than reading past the row.
  const auto topk = families::MatchSort(CaseGraph("topk_smallest_dim0"), false);
  ASSERT_TRUE(topk.has_value());
  const std::string source = topk->tmpl->Generate(topk->tmpl->Drafts().front());
  EXPECT_NE(source.find("const int64_t len = X.shape[0];"), std::string::npos) << source;
  EXPECT_NE(source.find("if (keep > len) return 3;"), std::string::npos) << source;
}

TEST(IndexAddFamily, EverySettingMatchesEagerOnSegmentsFillsAndNegativeIndices) {
  // Segment mean with empty segments; a fill of more rows than segments over 3-D
  // values; an index tensor with negative and repeated indices; index_add's alpha (the
  // source times 0.5 in float32). Every setting.
  DraftBatch batch;
  for (const std::string name : {"families/index_add_segment_mean", "families/index_add_segment_full",
                                 "families/index_add_table_negative", "index_add_rows",
                                 "families/index_add_inplace"}) {
    const core::OpGraph graph = CaseGraph(name);
    const auto match = families::MatchIndexAdd(graph, /*multithread=*/true);
    ASSERT_TRUE(match.has_value() && match->tmpl != nullptr) << name;
    EXPECT_EQ(match->tmpl->Name(), "index_add");
    const auto settings = match->tmpl->Space().Enumerate();
    // (1 thread, or all with 3 chunk sizes) x 2 accumulators; the index tensor also
    // x 2 algorithms (direct, bucket).
    EXPECT_EQ(settings.size(), (name.find("segment") == std::string::npos ? 2u : 1u) * 4 * 2) << name;
    for (const auto& k : settings) batch.Add(name, k, match->tmpl->Generate(k));
  }
  CompileAndCompareAll(batch);
}

TEST(EmbeddingBagFamily, HalfPrecisionTablesMatchEagerOnEverySetting) {
  // float16 mean with an empty bag (the rounded sum over the count), bfloat16 sum with
  // per-sample weights and the last offset, float16 max; every setting of the family.
  DraftBatch batch;
  for (const std::string name : {"families/embedding_bag_f16_mean", "families/embedding_bag_bf16_weighted",
                                 "families/embedding_bag_f16_max"}) {
    const core::OpGraph graph = CaseGraph(name);
    const auto match = families::MatchEmbeddingBag(graph, /*multithread=*/true);
    ASSERT_TRUE(match.has_value() && match->tmpl != nullptr) << name;
    const auto settings = match->tmpl->Space().Enumerate();
    ASSERT_FALSE(settings.empty());
    for (const auto& k : settings) batch.Add(name, k, match->tmpl->Generate(k));
  }
  CompileAndCompareAll(batch);
}

TEST(IndexAddFamily, TakesOnlyALoneAccumulationAndReadsSizesAtRunTime) {
  // The template operator picks the family (index_add's alpha too); two index_puts, and
  // values broadcast across the indices, stay loop-nest programs.
  // out.index_add_ on a fresh tensor captures as the in-place index_put_: the family too.
  for (const std::string name : {"families/index_add_segment_mean", "families/index_add_table_negative",
                                 "index_add_rows", "families/index_add_inplace"}) {
    core::Problem problem;
    problem.graph = CaseGraph(name);
    const auto picked = templates::MatchTemplate(problem, 2);
    ASSERT_TRUE(picked.tmpl != nullptr) << picked.unsupported;
    EXPECT_EQ(picked.tmpl->Name(), "index_add") << name;
  }
  for (const std::string name : {"index_put_accumulate", "index_put_broadcast_values"}) {
    EXPECT_FALSE(families::MatchIndexAdd(CaseGraph(name), true).has_value()) << name;
  }
  // Segments of other lengths than the case's (5 rows of values instead of 9), on one
  // thread and on all: 1.5 + the rows of each segment; rows past the segments keep 1.5.
  const auto match = families::MatchIndexAdd(CaseGraph("families/index_add_segment_full"), true);
  ASSERT_TRUE(match.has_value());
  std::vector<std::string> sources;
  for (const char* threads : {"1", "all"}) {
    sources.push_back(match->tmpl->Generate({{"threads", threads}, {"accumulator", "float32"}}));
  }
  const auto kernels = CompileAll(sources);
  for (size_t j = 0; j < kernels.size(); ++j) {
    ASSERT_NE(kernels[j]->entry, nullptr) << kernels[j]->log;
    std::vector<float> values(5 * 6);
    for (size_t e = 0; e < values.size(); ++e) values[e] = static_cast<float>(e % 7) - 2.0f;
    std::vector<int64_t> lengths = {2, 0, 3, 0};
    std::vector<float> out(7 * 6, -99.0f);
    std::vector<int64_t> vshape = {5, 2, 3}, lshape = {4}, oshape = {7, 2, 3};
    DLTensor in[2] = {}, o{};
    in[0] = {values.data(), {kDLCPU, 0}, 3, {kDLFloat, 32, 1}, vshape.data(), nullptr, 0};
    in[1] = {lengths.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, lshape.data(), nullptr, 0};
    o = {out.data(), {kDLCPU, 0}, 3, {kDLFloat, 32, 1}, oshape.data(), nullptr, 0};
    ASSERT_EQ(kernels[j]->entry(in, 2, &o, 1), 0) << sources[j];
    int64_t row = 0;
    for (int64_t b = 0; b < 7; ++b) {
      for (int64_t d = 0; d < 6; ++d) {
        float want = 1.5f;
        for (int64_t i = row; i < row + (b < 4 ? lengths[b] : 0); ++i) want += values[i * 6 + d];
        EXPECT_EQ(out[b * 6 + d], want) << "row " << b << " element " << d;
      }
      row += b < 4 ? lengths[b] : 0;
    }
    // Lengths that do not add up to the values, or more segments than rows: 5, as
    // PyTorch raises, before anything past the values is read.
    lengths = {2, 0, 4, 0};
    EXPECT_EQ(kernels[j]->entry(in, 2, &o, 1), 5);
    lengths = {1, 1, 1, 1, 1, 0, 0, 0};
    lshape = {8};
    EXPECT_EQ(kernels[j]->entry(in, 2, &o, 1), 5);
  }
}

TEST(TemplateOperator, InputSetsOfOtherSizesSkipTheRowwiseTemplate) {
  // The rowwise template bakes its extents; with the graph of another input set
  // (problem.shape_graphs), a reduction is the loop nest's, which reads sizes at run time.
  core::Problem problem;
  problem.graph = CaseGraph("amax_keepdim");
  EXPECT_EQ(templates::MatchTemplate(problem, 2).tmpl->Name(), "rowwise");
  problem.shape_graphs = {CaseGraph("amax_keepdim")};
  const auto picked = templates::MatchTemplate(problem, 2);
  ASSERT_TRUE(picked.tmpl != nullptr) << picked.unsupported;
  EXPECT_EQ(picked.tmpl->Name(), "loop_nest");
}

TEST(IndexAddFamily, AnIndexPastTheTableIsRefused) {
  const auto match = families::MatchIndexAdd(CaseGraph("families/index_add_table_negative"), true);
  ASSERT_TRUE(match.has_value());
  std::vector<std::string> sources;
  for (const auto& k : match->tmpl->Drafts()) sources.push_back(match->tmpl->Generate(k));
  const auto kernels = CompileAll(sources);
  for (size_t j = 0; j < kernels.size(); ++j) {
    ASSERT_NE(kernels[j]->entry, nullptr) << kernels[j]->log;
    std::vector<float> table(6 * 4, 1.0f), values(2 * 4, 1.0f), out(6 * 4);
    std::vector<int64_t> tshape = {6, 4}, ishape = {2}, vshape = {2, 4};
    for (int64_t bad : {6, -7}) {
      std::vector<int64_t> index = {0, bad};
      DLTensor in[3] = {}, o{};
      in[0] = {table.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, tshape.data(), nullptr, 0};
      in[1] = {index.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, ishape.data(), nullptr, 0};
      in[2] = {values.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, vshape.data(), nullptr, 0};
      o = {out.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, tshape.data(), nullptr, 0};
      EXPECT_EQ(kernels[j]->entry(in, 3, &o, 1), 5) << "index " << bad << "\n" << sources[j];
    }
  }
}

TEST(MaskedSelectFamily, EverySettingMatchesEagerWithExactLengthOutputs) {
  // A comparison mask over a 1-D float tensor, a length mask over the first two dims of
  // a 3-D one (rows of 3 floats), a bool input over an int64 tensor (rows of 2 int64).
  // The cases' outputs have the actual count: the exact-length form of the ABI.
  DraftBatch batch;
  for (const std::string name :
       {"families/masked_select_compare", "families/masked_select_lengths", "families/masked_select_int_rows"}) {
    const auto match = families::MatchMaskedSelect(CaseGraph(name), {}, /*multithread=*/true);
    ASSERT_TRUE(match.has_value() && match->tmpl != nullptr) << name << ": " << (match ? match->unsupported : "");
    EXPECT_EQ(match->tmpl->Name(), "masked_select");
    const auto settings = match->tmpl->Space().Enumerate();
    EXPECT_EQ(settings.size(), 2u) << name;
    for (const auto& k : settings) batch.Add(name, k, match->tmpl->Generate(k));
  }
  CompileAndCompareAll(batch);
}

TEST(MaskedSelectFamily, BoundedOutputGetsItsSizeAndATooSmallBoundIsRefused) {
  core::Problem problem;
  problem.graph = CaseGraph("families/masked_select_compare");
  const auto picked = templates::MatchTemplate(problem, 2);
  ASSERT_TRUE(picked.tmpl != nullptr) << picked.unsupported;
  EXPECT_EQ(picked.tmpl->Name(), "masked_select");
  std::vector<std::string> sources;
  for (const auto& k : picked.tmpl->Space().Enumerate()) sources.push_back(picked.tmpl->Generate(k));
  const auto kernels = CompileAll(sources);
  for (size_t j = 0; j < kernels.size(); ++j) {
    ASSERT_NE(kernels[j]->entry, nullptr) << kernels[j]->log;
    // The case's 37 values (its mask program has the captured sizes), labels 1 at every
    // third: 13 selected, in order, into a bound of 37.
    std::vector<float> x(37);
    std::vector<int64_t> labels(37);
    for (int i = 0; i < 37; ++i) {
      x[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i);
      labels[static_cast<size_t>(i)] = i % 3 == 0 ? 1 : 0;
    }
    std::vector<float> y(37, -1.0f);
    int64_t size = -1;
    std::vector<int64_t> n = {37}, one = {1};
    DLTensor in[2] = {{x.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, n.data(), nullptr, 0},
                      {labels.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, n.data(), nullptr, 0}};
    DLTensor out[2] = {{y.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, n.data(), nullptr, 0},
                       {&size, {kDLCPU, 0}, 1, {kDLInt, 64, 1}, one.data(), nullptr, 0}};
    ASSERT_EQ(kernels[j]->entry(in, 2, out, 2), 0) << sources[j];
    EXPECT_EQ(size, 13);
    for (int64_t c = 0; c < 13; ++c) EXPECT_EQ(y[static_cast<size_t>(c)], 0.5f * static_cast<float>(3 * c)) << c;
    // A bound of 10 cannot hold 13 rows: 5, as docs/abi.md says.
    std::vector<int64_t> ten = {10};
    out[0].shape = ten.data();
    EXPECT_EQ(kernels[j]->entry(in, 2, out, 2), 5);
  }
}

}  // namespace
}  // namespace kernelevolve::template_test
