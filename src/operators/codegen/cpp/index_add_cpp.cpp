#include "operators/codegen/cpp/index_add_cpp.h"

#include <fmt/format.h>

#include "operators/template/kernel_template.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::codegen {
namespace {

/// Statements giving the accumulator row `ar` (of output row `r`) its starting value.
std::string InitRow(const ir::IndexAddSpec& s, const std::string& indent) {
  if (s.self_is_input) return indent + "for (int64_t d = 0; d < dim; ++d) ar[d] = self[r * dim + d];\n";
  return fmt::format("{}for (int64_t d = 0; d < dim; ++d) ar[d] = {};\n", indent,
                     templates::FloatLiteral(static_cast<float>(s.fill)));
}

/// ar[d] += values row `i` (times alpha, rounded to float32 first), vectorized over the row.
std::string AddRow(const ir::IndexAddSpec& s, const std::string& indent) {
  const std::string value =
      s.scaled ? fmt::format("(vr[d] * {})", templates::FloatLiteral(static_cast<float>(s.alpha))) : "vr[d]";
  return indent + "const float* vr = v + i * dim;\n" + indent + "#pragma omp simd\n" + indent +
         "for (int64_t d = 0; d < dim; ++d) ar[d] += " + value + ";\n";
}

/// With a double accumulator: output row `r` (yr) from its accumulator row `ar`.
std::string StoreRow(const IndexAddSchedule& k, const std::string& indent) {
  if (!k.double_accumulator) return "";
  return indent + "for (int64_t d = 0; d < dim; ++d) yr[d] = static_cast<float>(ar[d]);\n";
}

/// The accumulator rows: the output itself (float) or scratch (double), `rows` of them.
std::string Scratch(const IndexAddSchedule& k, const std::string& rows) {
  if (!k.double_accumulator) return "";
  return fmt::format(
      "  std::unique_ptr<double[]> scratch(new (std::nothrow) double[{} * dim + 1]);\n"
      "  if (!scratch) return 6;\n", rows);
}

/// The loop over output rows r: row r gets its start value plus the values of its run
/// off[r] .. off[r + 1] (positions p; value i = p, or order[p] when `ordered`), for
/// r < segments; rows past the segments keep the start value.
std::string RunsLoop(const ir::IndexAddSpec& s, const IndexAddSchedule& k, bool ordered) {
  std::string out = Scratch(k, "static_cast<int64_t>(ke_max_threads())");
  if (k.threads_all) out += fmt::format("#pragma omp parallel for schedule(dynamic, {})\n", k.chunk);
  out += "  for (int64_t r = 0; r < rows; ++r) {\n"
         "    float* yr = y + r * dim;\n";
  out += k.double_accumulator ? "    double* ar = scratch.get() + ke_thread() * dim;\n" : "    float* ar = yr;\n";
  out += InitRow(s, "    ") +
         "    for (int64_t p = r < segments ? off[r] : 0; p < (r < segments ? off[r + 1] : 0); ++p) {\n" +
         (ordered ? "      const int64_t i = order[p];\n" : "      const int64_t i = p;\n") + AddRow(s, "      ") + "    }\n" +
         StoreRow(k, "    ");
  if (s.mean) {
    out += "    // torch: sums / lengths.clamp(min=1).to(float32): a float32 division, as there.\n"
           "    const float count = static_cast<float>(len[r] > 1 ? len[r] : 1);\n"
           "#pragma omp simd\n"
           "    for (int64_t d = 0; d < dim; ++d) yr[d] = yr[d] / count;\n";
  }
  out += "  }\n";
  return out;
}

std::string SegmentBody(const ir::IndexAddSpec& s, const IndexAddSchedule& k) {
  std::string out =
      "  // Segment b is the run values[off[b] : off[b + 1]] (repeat_interleave of the lengths).\n"
      "  const int64_t segments = I.shape[0];\n"
      "  if (segments > rows) return 5;\n";
  if (s.mean) out += "  if (segments != rows) return 3;\n";
  out += "  std::unique_ptr<int64_t[]> off(new (std::nothrow) int64_t[segments + 1]);\n"
         "  if (!off) return 6;\n"
         "  off[0] = 0;\n"
         "  for (int64_t b = 0; b < segments; ++b) {\n"
         "    if (len[b] < 0 || len[b] > n) return 5;\n"
         "    off[b + 1] = off[b] + len[b];\n"
         "    if (off[b + 1] > n) return 5;\n"
         "  }\n"
         "  if (off[segments] != n) return 5;\n";
  return out + RunsLoop(s, k, false);
}

std::string ScatterBody(const ir::IndexAddSpec& s, const IndexAddSchedule& k) {
  std::string out =
      "  if (I.shape[0] != n) return 3;\n"
      "  for (int64_t i = 0; i < n; ++i) {\n"
      "    if (idx[i] < -rows || idx[i] >= rows) return 5;\n"
      "  }\n";
  if (k.bucket) {
    out += "  // Counting sort of the value positions by output row (stable: each row keeps\n"
           "  // increasing i), then one run per row as in a segment sum.\n"
           "  const int64_t segments = rows;\n"
           "  std::unique_ptr<int64_t[]> off(new (std::nothrow) int64_t[rows + 1]());\n"
           "  std::unique_ptr<int64_t[]> next(new (std::nothrow) int64_t[rows]);\n"
           "  std::unique_ptr<int64_t[]> order(new (std::nothrow) int64_t[n + 1]);\n"
           "  if (!off || !next || !order) return 6;\n"
           "  for (int64_t i = 0; i < n; ++i) ++off[ke_row(idx[i], rows) + 1];\n"
           "  for (int64_t r = 0; r < rows; ++r) {\n"
           "    off[r + 1] += off[r];\n"
           "    next[r] = off[r];\n"
           "  }\n"
           "  for (int64_t i = 0; i < n; ++i) order[next[ke_row(idx[i], rows)]++] = i;\n";
    return out + RunsLoop(s, k, true);
  }
  out += Scratch(k, "rows");
  const std::string acc = k.double_accumulator ? "scratch.get()" : "y";
  std::string owner = "0, r1 = rows";
  if (k.threads_all) {
    out += "  // Owner computes: thread t owns rows [r0, r1) and applies, in order, the values\n"
           "  // whose index falls there (every thread reads all n indices, 8 bytes each).\n"
           "#pragma omp parallel\n";
    owner = "rows * ke_thread() / ke_threads(), r1 = rows * (ke_thread() + 1) / ke_threads()";
  }
  out += "  {\n    const int64_t r0 = " + owner + ";\n";
  out += "    for (int64_t r = r0; r < r1; ++r) {\n      auto* ar = " + acc + " + r * dim;\n" + InitRow(s, "      ") +
         "    }\n"
         "    for (int64_t i = 0; i < n; ++i) {\n"
         "      const int64_t r = ke_row(idx[i], rows);\n"
         "      if (r < r0 || r >= r1) continue;\n"
         "      auto* ar = " + acc + " + r * dim;\n" +
         AddRow(s, "      ") + "    }\n";
  if (k.double_accumulator) {
    out += "    for (int64_t r = r0; r < r1; ++r) {\n      float* yr = y + r * dim;\n      const double* ar = " + acc +
           " + r * dim;\n" + StoreRow(k, "      ") + "    }\n";
  }
  out += "  }\n";
  return out;
}

}  // namespace

std::string PrintIndexAddCpp(const ir::IndexAddSpec& s, const IndexAddSchedule& k, const std::string& header) {
  std::string out = header + templates::GeneratedIncludes() + "#include <memory>\n#include <new>\n";
  out += templates::ThreadHelpers();
  if (!s.segments) {
    out += "// The output row of index i, negative indices counting from the end (Python's).\n"
           "static inline int64_t ke_row(int64_t i, int64_t rows) { return i < 0 ? i + rows : i; }\n";
  }
  out += "\n" + templates::AbiHelpers() +
         "\nstatic inline void* ke_data(const DLTensor& t) { return static_cast<char*>(t.data) + t.byte_offset; }\n\n";
  out += "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
         "                                   DLTensor* outputs, int32_t num_outputs) {\n";
  out += fmt::format("  if (num_inputs < {} || num_outputs != 1) return 1;\n", s.num_inputs);
  out += fmt::format("  const DLTensor& V = inputs[{}];\n  const DLTensor& I = inputs[{}];\n  DLTensor& Y = outputs[0];\n",
                     s.values, s.segments ? s.lengths : s.index);
  out += "  if (ke_check_tensor(V) || ke_check_tensor(Y) || Y.ndim < 1 || V.ndim != Y.ndim) return 2;\n"
         "  if (ke_check_int64(I) || I.ndim != 1) return 2;\n"
         "  // Sizes from the tensors: any number of values, rows and segments.\n"
         "  const int64_t rows = Y.shape[0], n = V.shape[0];\n"
         "  int64_t dim = 1;\n"
         "  for (int32_t d = 1; d < Y.ndim; ++d) {\n"
         "    if (V.shape[d] != Y.shape[d]) return 3;\n"
         "    dim *= Y.shape[d];\n"
         "  }\n";
  if (s.self_is_input) {
    out += fmt::format("  const DLTensor& S = inputs[{}];\n", s.self);
    out += "  if (ke_check_tensor(S) || S.ndim != Y.ndim) return 2;\n"
           "  for (int32_t d = 0; d < Y.ndim; ++d) {\n"
           "    if (S.shape[d] != Y.shape[d]) return 3;\n"
           "  }\n"
           "  const float* self = ke_float_data(S);\n";
  }
  out += "  const float* v = ke_float_data(V);\n  float* y = ke_float_data(Y);\n";
  out += fmt::format("  const int64_t* {} = static_cast<const int64_t*>(ke_data(I));\n", s.segments ? "len" : "idx");
  out += s.segments ? SegmentBody(s, k) : ScatterBody(s, k);
  out += "  return 0;\n}\n";
  return out;
}

}  // namespace kernelevolve::operators::codegen
