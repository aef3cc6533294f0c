#include "operators/codegen/cpp/embedding_bag_cpp.h"

#include <fmt/format.h>

#include "operators/codegen/prim_spelling.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::codegen {
namespace {

/// `x`, an element of the table's dtype, as float32 (a half-precision one widened).
std::string Widen(const ir::EmbeddingBagSpec& s, const std::string& x) {
  return SpellPrim(Language::kCppScalar, ir::Prim::kCast, s.dtype, core::DType::kFloat32, {x});
}

/// `x`, a float32, rounded to the table's dtype.
std::string Narrow(const ir::EmbeddingBagSpec& s, const std::string& x) {
  return SpellPrim(Language::kCppScalar, ir::Prim::kCast, core::DType::kFloat32, s.dtype, {x});
}

/// The loop folding row `r` (scaled by `wt` with per-sample weights) into the output
/// row `y`: `init` writes the bag's first row, otherwise it accumulates.
std::string Fold(const ir::EmbeddingBagSpec& s, bool init) {
  const std::string rd = Widen(s, "r[d]");
  const std::string value = s.per_sample_weights >= 0 ? "wt * " + rd : rd;
  std::string body;
  if (init) {
    body = "y[d] = " + value + ";";
  } else if (s.mode == ir::EmbeddingBagSpec::Mode::kMax) {
    body = "{ const float v = " + rd + "; y[d] = (v > y[d] || v != v) ? v : y[d]; }";
  } else {
    body = "y[d] += " + value + ";";
  }
  return "#pragma omp simd\n      for (int64_t d = 0; d < dim; ++d) " + body + "\n";
}

/// The dtype check of a table-typed tensor (float32 / float16 / bfloat16).
std::string CheckTable(const ir::EmbeddingBagSpec& s) {
  const char* code = s.dtype == core::DType::kBFloat16 ? "kDLBfloat" : "kDLFloat";
  return fmt::format("static inline int ke_check_table(const DLTensor& t) {{\n"
                     "  if (t.dtype.code != {} || t.dtype.bits != {} || t.dtype.lanes != 1) return 2;\n"
                     "  return ke_check_layout(t);\n}}\n",
                     code, core::DTypeSize(s.dtype) * 8);
}

}  // namespace

std::string PrintEmbeddingBagCpp(const ir::EmbeddingBagSpec& s, const EmbeddingBagSchedule& k, const std::string& header) {
  const bool half = s.dtype != core::DType::kFloat32;
  const std::string wt = SpellType(Language::kCppScalar, s.dtype);  // float, _Float16, uint16_t
  std::string body;
  body += "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
          "                                   DLTensor* outputs, int32_t num_outputs) {\n";
  body += fmt::format("  if (num_inputs < {} || num_outputs != 1) return 1;\n", s.num_inputs);
  body += fmt::format("  const DLTensor& W = inputs[{}];\n  const DLTensor& I = inputs[{}];\n  const DLTensor& O = inputs[{}];\n",
                      s.weight, s.indices, s.offsets);
  body += "  DLTensor& Y = outputs[0];\n";
  body += "  if (ke_check_table(W) || ke_check_table(Y) || ke_check_int64(I) || ke_check_int64(O)) return 2;\n"
          "  if (W.ndim != 2 || Y.ndim != 2 || I.ndim != 1 || O.ndim != 1) return 2;\n";
  if (s.per_sample_weights >= 0) {
    body += fmt::format("  const DLTensor& PW = inputs[{}];\n", s.per_sample_weights);
    body += "  if (ke_check_table(PW) || PW.ndim != 1 || PW.shape[0] != I.shape[0]) return 2;\n";
    body += fmt::format("  const {0}* pw = static_cast<const {0}*>(ke_data(PW));\n", wt);
  }
  body += "  // Sizes from the tensors: any number of indices and bags.\n"
          "  const int64_t rows = W.shape[0], dim = W.shape[1], n = I.shape[0];\n";
  body += fmt::format("  const int64_t bags = O.shape[0]{};\n", s.include_last_offset ? " - 1" : "");
  body += "  if (bags < 0 || Y.shape[0] != bags || Y.shape[1] != dim) return 3;\n";
  body += fmt::format("  const {0}* w = static_cast<const {0}*>(ke_data(W));\n", wt);
  body += "  const int64_t* idx = static_cast<const int64_t*>(ke_data(I));\n"
          "  const int64_t* off = static_cast<const int64_t*>(ke_data(O));\n";
  body += fmt::format("  {0}* yall = static_cast<{0}*>(ke_data(Y));\n", wt);
  body += "  // Bounds: every index a row of the table, offsets non-decreasing in [0, n].\n"
          "  for (int64_t i = 0; i < n; ++i) if (idx[i] < 0 || idx[i] >= rows) return 5;\n"
          "  for (int64_t b = 0; b < O.shape[0]; ++b) {\n"
          "    if (off[b] < 0 || off[b] > n || (b > 0 && off[b] < off[b - 1])) return 5;\n"
          "  }\n";
  if (s.include_last_offset) body += "  if (O.shape[0] > 0 && off[O.shape[0] - 1] > n) return 5;\n";
  // float32 accumulates in the output row; a half-precision bag in a float32 row of its
  // thread, rounded once at the store.
  if (half) {
    body += k.threads_all ? "#pragma omp parallel\n" : "";
    body += "  {\n  std::unique_ptr<float[]> ke_row(new float[dim > 0 ? dim : 1]);\n";
    if (k.threads_all) body += fmt::format("#pragma omp for schedule(dynamic, {})\n", k.chunk);
  } else if (k.threads_all) {
    body += fmt::format("#pragma omp parallel for schedule(dynamic, {})\n", k.chunk);
  }
  body += "  for (int64_t b = 0; b < bags; ++b) {\n"
          "    const int64_t start = off[b];\n";
  body += s.include_last_offset ? "    const int64_t end = off[b + 1];\n"
                                : "    const int64_t end = b + 1 < bags ? off[b + 1] : n;\n";
  body += half ? "    float* y = ke_row.get();\n" : "    float* y = yall + b * dim;\n";
  const std::string store =
      half ? fmt::format("#pragma omp simd\n    for (int64_t d = 0; d < dim; ++d) yall[b * dim + d] = {};\n",
                         Narrow(s, "y[d]"))
           : "";
  body += "    if (start >= end) {  // an empty bag gives 0 in every mode\n"
          "      for (int64_t d = 0; d < dim; ++d) y[d] = 0.0f;\n";
  body += store.empty() ? "" : "  " + store;
  body += "      continue;\n"
          "    }\n"
          "    for (int64_t i = start; i < end; ++i) {\n";
  if (k.prefetch > 0) {
    body += fmt::format(
        "      if (i + {0} < n) {{\n"
        "        const char* ahead = reinterpret_cast<const char*>(w + idx[i + {0}] * dim);\n"
        "        for (int64_t c = 0; c < dim * {1}; c += 64) __builtin_prefetch(ahead + c, 0, 1);\n"
        "      }}\n", k.prefetch, core::DTypeSize(s.dtype));
  }
  body += fmt::format("      const {}* r = w + idx[i] * dim;\n", wt);
  if (s.per_sample_weights >= 0) {
    body += fmt::format("      const float wt = {};\n", Widen(s, "pw[i]"));
  }
  body += "      if (i == start) {\n  " + Fold(s, true) + "        continue;\n      }\n";
  body += "  " + Fold(s, false) + "    }\n";
  if (s.mode == ir::EmbeddingBagSpec::Mode::kMean && !half) {
    body += "    const float inv = 1.0f / static_cast<float>(end - start);\n"
            "#pragma omp simd\n    for (int64_t d = 0; d < dim; ++d) y[d] = y[d] * inv;\n";
  } else if (s.mode == ir::EmbeddingBagSpec::Mode::kMean) {
    // Eager's float16 mean: the sum rounded to the dtype, then divided by the count.
    body += "    const float count = static_cast<float>(end - start);\n"
            "#pragma omp simd\n    for (int64_t d = 0; d < dim; ++d) y[d] = " + Widen(s, Narrow(s, "y[d]")) +
            " / count;\n";
  }
  body += store;
  body += "  }\n";
  if (half) body += "  }\n";
  body += "  return 0;\n}\n";
  std::string out = header + templates::GeneratedIncludes() + "#include <memory>\n\n" + templates::AbiHelpers() +
                    "\nstatic inline void* ke_data(const DLTensor& t) { return static_cast<char*>(t.data) + t.byte_offset; }\n" +
                    CheckTable(s) + CppHelpersFor(body) + "\n";
  return out + body;
}

}  // namespace kernelevolve::operators::codegen
