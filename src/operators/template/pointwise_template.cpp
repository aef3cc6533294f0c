#include "operators/template/pointwise_template.h"

#include <fmt/format.h>

#include <algorithm>

#include "operators/template/math_prelude.h"

namespace kernelevolve::operators::templates {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

/// "const float* __restrict x, const float* __restrict y" style parameter lists.
std::string PointerParams(const PointwiseExpr& expr) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < expr.input_vars.size(); ++k) {
    parts.push_back(fmt::format("const float* __restrict in{}", k));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// "ke_fused(in0[i], in1[i])" for index variable `index`.
std::string FusedCall(const PointwiseExpr& expr, const std::string& index) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < expr.input_vars.size(); ++k)
    parts.push_back(fmt::format("in{}[{}]", k, index));
  return fmt::format("ke_fused({})", fmt::join(parts, ", "));
}

std::string InputList(const PointwiseExpr& expr) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < expr.input_vars.size(); ++k) parts.push_back(fmt::format("in{}", k));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

PointwiseTemplate::PointwiseTemplate(PointwiseExpr libm, PointwiseExpr prelude, PointwiseExpr prelude_avx512,
                                     bool multithread, int vector_lanes)
    : libm_(std::move(libm)),
      prelude_(std::move(prelude)),
      prelude_avx512_(std::move(prelude_avx512)),
      vector_lanes_(std::max(4, vector_lanes)),
      space_(PointwiseKnobSpace(multithread, vector_lanes_,
                                FusedFunction(prelude_avx512_) != FusedFunction(prelude_))) {}

std::vector<nlohmann::json> PointwiseTemplate::Drafts() const {
  const std::vector<nlohmann::json> curated = {
      {{"simd", "off"}, {"threads", "1"}, {"unroll", 1}},
      {{"simd", "on"}, {"threads", "all"}, {"block", 16384}, {"unroll", 1}},
      {{"simd", "on"}, {"threads", "all"}, {"block", 65536}, {"unroll", 2}},
      {{"simd", "on"}, {"threads", "1"}, {"unroll", 1}},
      {{"simd", "on"}, {"threads", "all"}, {"block", 4096}, {"unroll", 4}},
      {{"simd", "off"}, {"threads", "all"}, {"block", 16384}, {"unroll", 1}},
      {{"simd", "on"}, {"threads", "1"}, {"unroll", 2}},
      {{"simd", "on"}, {"threads", "1"}, {"unroll", 4}},
  };
  const bool multithread = space_.Find("threads")->values.size() > 1;
  std::vector<nlohmann::json> out;
  for (auto knobs : curated) {
    if (!multithread) knobs["threads"] = "1";  // Canonical then drops the block knob
    out.push_back(space_.Canonical(knobs));
  }
  if (space_.Find("math") != nullptr) {  // AVX-512 and a log: the intrinsics variant too
    out.push_back(space_.Canonical({{"simd", "on"},
                                    {"threads", multithread ? "all" : "1"},
                                    {"unroll", 1},
                                    {"math", "avx512"}}));
  }
  return out;
}

std::string PointwiseTemplate::Summary(const nlohmann::json& knobs) const {
  std::string out =
      knobs.at("simd") == "on" ? "vectorized math prelude" : "scalar std:: math";
  if (knobs.at("threads") == "all") {
    out += fmt::format(", all threads, {}-element blocks", knobs.at("block").get<int64_t>());
  } else {
    out += ", 1 thread";
  }
  const int unroll = knobs.at("unroll").get<int>();
  if (unroll > 1) out += fmt::format(", {}x unroll", unroll);
  if (knobs.contains("vector_width")) out += fmt::format(", {}-float vectors", knobs.at("vector_width").get<int>());
  return out;
}

std::string PointwiseTemplate::FusedFunction(const PointwiseExpr& expr) const {
  std::vector<std::string> params;
  for (const auto& v : expr.input_vars) params.push_back("float " + v);
  std::string out = "// One element of the fused graph.\n";
  out += fmt::format("static inline float ke_fused({}) {{\n", fmt::join(params, ", "));
  for (const auto& st : expr.statements) {
    out += "  // " + st.origin + "\n";
    out += fmt::format("  const {} {} = {};\n", st.is_bool ? "bool" : "float", st.var, st.expr);
  }
  out += "  return " + expr.result_var + ";\n}\n";
  return out;
}

std::string PointwiseTemplate::MapRangeFunction(const PointwiseExpr& expr, bool vectorized, int unroll,
                                                int lanes, int simdlen) const {
  const std::string simd = simdlen > 0 ? fmt::format("#pragma omp simd simdlen({})\n", simdlen) : "#pragma omp simd\n";
  std::string out = fmt::format(
      "// out[i] = {} for i in [begin, end).\n"
      "static void ke_map_range({}, float* __restrict out,\n"
      "                         int64_t begin, int64_t end) {{\n",
      FusedCall(expr, "i"), PointerParams(expr));
  if (!vectorized) {
    if (unroll > 1) out += fmt::format("#pragma GCC unroll {}\n", unroll);
    out += "  for (int64_t i = begin; i < end; ++i) out[i] = " + FusedCall(expr, "i") + ";\n}\n";
    return out;
  }
  if (unroll == 1) {
    out += simd;
    out += "  for (int64_t i = begin; i < end; ++i) out[i] = " + FusedCall(expr, "i") + ";\n}\n";
    return out;
  }
  out += fmt::format(
      "  constexpr int64_t kStep = {} * {};  // {} vectors of {} floats per step\n"
      "  int64_t i = begin;\n"
      "  for (; i + kStep <= end; i += kStep) {{\n"
      "{}"
      "    for (int64_t k = 0; k < kStep; ++k) out[i + k] = {};\n"
      "  }}\n"
      "{}"
      "  for (int64_t k = i; k < end; ++k) out[k] = {};\n}}\n",
      unroll, lanes, unroll, lanes, simd, FusedCall(expr, "i + k"), simd, FusedCall(expr, "k"));
  return out;
}

std::string PointwiseTemplate::EntryFunction(const PointwiseExpr& expr, bool threaded,
                                             int64_t block) const {
  const size_t k = expr.input_vars.size();
  std::string out = fmt::format(
      "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
      "                                  DLTensor* outputs, int32_t num_outputs) {{\n"
      "  if (num_inputs != {} || num_outputs != 1) return 1;\n"
      "  for (int32_t t = 0; t < num_inputs; ++t) {{\n"
      "    if (const int rc = ke_check_tensor(inputs[t])) return rc;\n"
      "  }}\n"
      "  if (const int rc = ke_check_tensor(outputs[0])) return rc;\n"
      "  const int64_t n = ke_numel(outputs[0]);\n"
      "  for (int32_t t = 0; t < num_inputs; ++t) {{\n"
      "    if (ke_numel(inputs[t]) != n) return 3;\n"
      "  }}\n",
      k);
  for (size_t i = 0; i < k; ++i) {
    out += fmt::format("  const float* in{} = ke_float_data(inputs[{}]);  // {}\n", i, i,
                       expr.input_nodes[i]);
  }
  out += "  float* out = ke_float_data(outputs[0]);\n";
  if (!threaded) {
    out += fmt::format("  ke_map_range({}, out, 0, n);\n  return 0;\n}}\n", InputList(expr));
    return out;
  }
  out += fmt::format(
      "  constexpr int64_t kBlock = {};  // elements per chunk handed to a thread\n"
      "  const int64_t num_blocks = (n + kBlock - 1) / kBlock;\n"
      "#pragma omp parallel for schedule(static) if (num_blocks > 1)\n"
      "  for (int64_t b = 0; b < num_blocks; ++b) {{\n"
      "    ke_map_range({}, out, b * kBlock, std::min(n, b * kBlock + kBlock));\n"
      "  }}\n"
      "  return 0;\n}}\n",
      block, InputList(expr));
  return out;
}

std::string PointwiseTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  const bool vectorized = knobs.at("simd") == "on";
  const bool threaded = knobs.at("threads") == "all";
  const int64_t block = threaded ? knobs.at("block").get<int64_t>() : 0;
  const int unroll = knobs.at("unroll").get<int>();
  // Without the vector_width knob the compiler picks the width (the machine's widest).
  const int simdlen = knobs.contains("vector_width") ? knobs.at("vector_width").get<int>() : 0;
  const int lanes = simdlen > 0 ? simdlen : vector_lanes_;
  const bool simd_math = knobs.contains("math") && knobs.at("math") == "avx512";
  const PointwiseExpr& expr = !vectorized ? libm_ : simd_math ? prelude_avx512_ : prelude_;

  std::string what = fmt::format("Fused elementwise map over float32 tensors of shape {}:\n",
                                 ShapeText(expr.shape));
  what += fmt::format("  out[i] = {}, where\n", FusedCall(expr, "i"));
  for (const auto& st : expr.statements) what += "    " + st.var + " = " + st.origin + "\n";
  what += vectorized ? "Math: branch-free prelude (ke_exp, ...), `omp simd` loops."
                     : "Math: std:: functions from <cmath>, plain loop.";
  std::string abi;
  for (size_t i = 0; i < expr.input_nodes.size(); ++i) {
    abi += fmt::format("//   inputs[{}] = {} (float32 {})\n", i, expr.input_nodes[i],
                       ShapeText(expr.shape));
  }
  abi += fmt::format(
      "//   outputs[0] = result (float32 {}); any shape with the same element\n"
      "//   count works.\n",
      ShapeText(expr.shape));

  const std::string fused = FusedFunction(expr);
  if (simd_math) what += " ke_log calls the explicit AVX-512 variant ke_log_v16 (vgetexpps/vgetmantps).";
  const std::string kernel =
      "// ---- kernel --------------------------------------------------------------------\n" +
      fused + "\n" + MapRangeFunction(expr, vectorized, unroll, lanes, simdlen) + "\n" +
      EntryFunction(expr, threaded, block);
  const std::string prelude = MathPreludeFor(kernel);
  return GeneratedHeader(Name(), what, knobs, abi) + "\n" + GeneratedIncludes() + "\n" +
         (prelude.empty() ? "" : prelude + "\n") + AbiHelpers() + "\n" + kernel;
}

}  // namespace kernelevolve::operators::templates
