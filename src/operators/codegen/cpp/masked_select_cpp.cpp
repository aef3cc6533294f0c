#include "operators/codegen/cpp/masked_select_cpp.h"

#include <fmt/format.h>

#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::codegen {

std::string PrintMaskedSelectCpp(const ir::MaskedSelectSpec& s, const MaskedSelectSchedule& k, const std::string& header,
                                 const std::string& mask_program) {
  std::string out = header + mask_program + "\n#include <new>\n";
  if (k.threads_all) out += templates::ThreadHelpers();
  out += R"(
// Copies rows [r0, r1) of x whose mask is set to y from row `c` on, in order; returns the
// row after the last one written. Nothing is written at or past row `limit` of y (rows
// past it are counted only); the integer path also writes row `c` for unselected
// rows, which the next selected row overwrites, so y[c .. limit) may hold such rows. Rows
// of 4 and 8 bytes (a float, an id) are copied as integers, without a branch on the
// mask; longer ones with memcpy.
template <typename Word>
static int64_t ke_compact_words(const uint8_t* mask, const Word* x, Word* y, int64_t r0, int64_t r1, int64_t c,
                                int64_t limit) {
  for (int64_t r = r0; r < r1; ++r) {
    if (c < limit) y[c] = x[r];
    c += mask[r] != 0;
  }
  return c;
}

static int64_t ke_compact(const uint8_t* mask, const char* x, char* y, int64_t r0, int64_t r1, int64_t c,
                          int64_t limit, int64_t row_bytes) {
  if (row_bytes == 4) {
    return ke_compact_words(mask, reinterpret_cast<const uint32_t*>(x), reinterpret_cast<uint32_t*>(y), r0, r1, c,
                            limit);
  }
  if (row_bytes == 8) {
    return ke_compact_words(mask, reinterpret_cast<const uint64_t*>(x), reinterpret_cast<uint64_t*>(y), r0, r1, c,
                            limit);
  }
  for (int64_t r = r0; r < r1; ++r) {
    if (!mask[r]) continue;
    if (c < limit) std::memcpy(y + c * row_bytes, x + r * row_bytes, static_cast<size_t>(row_bytes));
    ++c;
  }
  return c;
}
)";
  out += "\nextern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
         "                                   DLTensor* outputs, int32_t num_outputs) {\n";
  out += fmt::format("  if (num_inputs < {} || (num_outputs != 1 && num_outputs != 2)) return 1;\n", s.num_inputs);
  out += fmt::format("  const DLTensor& X = inputs[{}];\n  DLTensor& Y = outputs[0];\n", s.self);
  out += fmt::format(
      "  // Rows: the first {0} dims of x are selected by the mask, the other {1} form a row.\n"
      "  if (X.ndim != {2} || Y.ndim != {3} || Y.dtype.code != X.dtype.code || Y.dtype.bits != X.dtype.bits ||\n"
      "      X.dtype.lanes != 1 || Y.dtype.lanes != 1 || X.dtype.bits % 8 != 0) return 2;\n"
      "  if (int rc = ke_check_layout(X)) return rc;\n"
      "  if (int rc = ke_check_layout(Y)) return rc;\n",
      s.mask_rank, s.rank - s.mask_rank, s.rank, s.rank - s.mask_rank + 1);
  out += "  const bool bounded = num_outputs == 2;\n"
         "  int64_t* size = nullptr;\n"
         "  if (bounded) {\n"
         "    const DLTensor& S = outputs[1];\n"
         "    if (S.dtype.code != kDLInt || S.dtype.bits != 64 || S.ndim != 1 || S.shape[0] != Y.ndim ||\n"
         "        ke_check_layout(S)) return 2;\n"
         "    size = static_cast<int64_t*>(static_cast<void*>(static_cast<char*>(S.data) + S.byte_offset));\n"
         "  }\n";
  out += fmt::format(
      "  int64_t rows = 1, row_bytes = X.dtype.bits / 8;\n"
      "  for (int32_t d = 0; d < {0}; ++d) rows *= X.shape[d];\n"
      "  for (int32_t d = {0}; d < X.ndim; ++d) {{\n"
      "    if (Y.shape[d - {0} + 1] != X.shape[d]) return 3;\n"
      "    row_bytes *= X.shape[d];\n"
      "  }}\n"
      "  const int64_t limit = Y.shape[0];\n"
      "  // The mask, a bool tensor of x's first {0} dims, from the loop-nest program ke_mask.\n"
      "  std::unique_ptr<uint8_t[]> mask_buffer(new (std::nothrow) uint8_t[rows > 0 ? rows : 1]);\n"
      "  if (!mask_buffer) return 6;\n"
      "  DLTensor M{{}};\n"
      "  M.data = mask_buffer.get();\n"
      "  M.device = X.device;\n"
      "  M.ndim = {0};\n"
      "  M.dtype = DLDataType{{kDLUInt, 8, 1}};\n"
      "  M.shape = X.shape;\n"
      "  if (int rc = ke_mask(inputs, num_inputs, &M, 1)) return rc;\n"
      "  const uint8_t* mask = mask_buffer.get();\n"
      "  const char* x = static_cast<const char*>(X.data) + X.byte_offset;\n"
      "  char* y = static_cast<char*>(Y.data) + Y.byte_offset;\n",
      s.mask_rank);
  if (!k.threads_all) {
    out += "  const int64_t count = ke_compact(mask, x, y, 0, rows, 0, limit, row_bytes);\n"
           "  if (count > limit) return bounded ? 5 : 3;\n";
  } else {
    out += "  // Two sweeps over one block of rows per thread: count, then copy at the prefix.\n"
           "  const int64_t blocks = ke_max_threads();\n"
           "  std::unique_ptr<int64_t[]> start(new (std::nothrow) int64_t[blocks + 1]());\n"
           "  if (!start) return 6;\n"
           "#pragma omp parallel for schedule(static, 1)\n"
           "  for (int64_t b = 0; b < blocks; ++b) {\n"
           "    int64_t c = 0;\n"
           "    for (int64_t r = rows * b / blocks; r < rows * (b + 1) / blocks; ++r) c += mask[r] != 0;\n"
           "    start[b + 1] = c;\n"
           "  }\n"
           "  for (int64_t b = 0; b < blocks; ++b) start[b + 1] += start[b];\n"
           "  const int64_t count = start[blocks];\n"
           "  if (count > limit) return bounded ? 5 : 3;\n"
           "#pragma omp parallel for schedule(static, 1)\n"
           "  for (int64_t b = 0; b < blocks; ++b) {\n"
           "    // Up to the next block's first row (count <= limit here): no block writes into another's.\n"
           "    ke_compact(mask, x, y, rows * b / blocks, rows * (b + 1) / blocks, start[b], start[b + 1], row_bytes);\n"
           "  }\n";
  }
  out += "  if (!bounded) return count == limit ? 0 : 3;\n"
         "  size[0] = count;\n"
         "  for (int32_t d = 1; d < Y.ndim; ++d) size[d] = Y.shape[d];\n"
         "  return 0;\n}\n";
  return out;
}

}  // namespace kernelevolve::operators::codegen
