#include "operators/codegen/cpp/embedding_bag_cpp.h"

#include <fmt/format.h>

#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::codegen {
namespace {

/// The loop folding row `r` (scaled by `wt` with per-sample weights) into the output
/// row `y`: `init` writes the bag's first row, otherwise it accumulates.
std::string Fold(const ir::EmbeddingBagSpec& s, bool init) {
  const std::string value = s.per_sample_weights >= 0 ? "wt * r[d]" : "r[d]";
  std::string body;
  if (init) {
    body = "y[d] = " + value + ";";
  } else if (s.mode == ir::EmbeddingBagSpec::Mode::kMax) {
    body = "y[d] = (r[d] > y[d] || r[d] != r[d]) ? r[d] : y[d];";
  } else {
    body = "y[d] += " + value + ";";
  }
  return "#pragma omp simd\n      for (int64_t d = 0; d < dim; ++d) " + body + "\n";
}

}  // namespace

std::string PrintEmbeddingBagCpp(const ir::EmbeddingBagSpec& s, const EmbeddingBagSchedule& k, const std::string& header) {
  std::string out = header + templates::GeneratedIncludes() + "\n" + templates::AbiHelpers() +
                    "\nstatic inline void* ke_data(const DLTensor& t) { return static_cast<char*>(t.data) + t.byte_offset; }\n\n";
  out += "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
         "                                   DLTensor* outputs, int32_t num_outputs) {\n";
  out += fmt::format("  if (num_inputs < {} || num_outputs != 1) return 1;\n", s.num_inputs);
  out += fmt::format("  const DLTensor& W = inputs[{}];\n  const DLTensor& I = inputs[{}];\n  const DLTensor& O = inputs[{}];\n",
                     s.weight, s.indices, s.offsets);
  out += "  DLTensor& Y = outputs[0];\n";
  out += "  if (ke_check_tensor(W) || ke_check_tensor(Y) || ke_check_int64(I) || ke_check_int64(O)) return 2;\n"
         "  if (W.ndim != 2 || Y.ndim != 2 || I.ndim != 1 || O.ndim != 1) return 2;\n";
  if (s.per_sample_weights >= 0) {
    out += fmt::format("  const DLTensor& PW = inputs[{}];\n", s.per_sample_weights);
    out += "  if (ke_check_tensor(PW) || PW.ndim != 1 || PW.shape[0] != I.shape[0]) return 2;\n"
           "  const float* pw = ke_float_data(PW);\n";
  }
  out += "  // Sizes from the tensors: any number of indices and bags.\n"
         "  const int64_t rows = W.shape[0], dim = W.shape[1], n = I.shape[0];\n";
  out += fmt::format("  const int64_t bags = O.shape[0]{};\n", s.include_last_offset ? " - 1" : "");
  out += "  if (bags < 0 || Y.shape[0] != bags || Y.shape[1] != dim) return 3;\n"
         "  const float* w = ke_float_data(W);\n"
         "  const int64_t* idx = static_cast<const int64_t*>(ke_data(I));\n"
         "  const int64_t* off = static_cast<const int64_t*>(ke_data(O));\n"
         "  float* yall = ke_float_data(Y);\n"
         "  // Bounds: every index a row of the table, offsets non-decreasing in [0, n].\n"
         "  for (int64_t i = 0; i < n; ++i) if (idx[i] < 0 || idx[i] >= rows) return 5;\n"
         "  for (int64_t b = 0; b < O.shape[0]; ++b) {\n"
         "    if (off[b] < 0 || off[b] > n || (b > 0 && off[b] < off[b - 1])) return 5;\n"
         "  }\n";
  if (s.include_last_offset) out += "  if (O.shape[0] > 0 && off[O.shape[0] - 1] > n) return 5;\n";
  if (k.threads_all) out += fmt::format("#pragma omp parallel for schedule(dynamic, {})\n", k.chunk);
  out += "  for (int64_t b = 0; b < bags; ++b) {\n"
         "    const int64_t start = off[b];\n";
  out += s.include_last_offset ? "    const int64_t end = off[b + 1];\n"
                               : "    const int64_t end = b + 1 < bags ? off[b + 1] : n;\n";
  out += "    float* y = yall + b * dim;\n"
         "    if (start >= end) {  // an empty bag gives 0 in every mode\n"
         "      for (int64_t d = 0; d < dim; ++d) y[d] = 0.0f;\n"
         "      continue;\n"
         "    }\n"
         "    for (int64_t i = start; i < end; ++i) {\n";
  if (k.prefetch > 0) {
    out += fmt::format(
        "      if (i + {0} < n) {{\n"
        "        const char* ahead = reinterpret_cast<const char*>(w + idx[i + {0}] * dim);\n"
        "        for (int64_t c = 0; c < dim * 4; c += 64) __builtin_prefetch(ahead + c, 0, 1);\n"
        "      }}\n", k.prefetch);
  }
  out += "      const float* r = w + idx[i] * dim;\n";
  if (s.per_sample_weights >= 0) out += "      const float wt = pw[i];\n";
  out += "      if (i == start) {\n  " + Fold(s, true) + "        continue;\n      }\n";
  out += "  " + Fold(s, false) + "    }\n";
  if (s.mode == ir::EmbeddingBagSpec::Mode::kMean) {
    out += "    const float inv = 1.0f / static_cast<float>(end - start);\n"
           "#pragma omp simd\n    for (int64_t d = 0; d < dim; ++d) y[d] = y[d] * inv;\n";
  }
  out += "  }\n  return 0;\n}\n";
  return out;
}

}  // namespace kernelevolve::operators::codegen
