#include "operators/codegen/cpp/sort_cpp.h"

#include <fmt/format.h>

#include "core/error.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::codegen {

using ir::SortSpec;
namespace {

/// ke_before(a, b): a comes strictly before b in the order (NaN largest). ke_key(v): an
/// unsigned key whose ascending order is that order for ascending sorts (-0.0 and +0.0
/// one key, every NaN the largest key). Descending sorts invert the key, which reverses
/// the order of unequal keys and keeps equal ones in input order.
std::string OrderHelpers(const SortSpec& s) {
  const bool is_float = s.dtype == core::DType::kFloat32;
  std::string out = is_float ? "using T = float;\nusing Key = uint32_t;\n" : "using T = int64_t;\nusing Key = uint64_t;\n";
  if (is_float) {
    out += s.descending
               ? "static inline bool ke_before(T a, T b) { return a > b || (a != a && b == b); }\n"
               : "static inline bool ke_before(T a, T b) { return a < b || (a == a && b != b); }\n";
    out += "static inline Key ke_key(T v) {\n"
           "  if (v != v) return 0xFFFFFFFFu;  // every NaN: above +inf\n"
           "  if (v == 0.0f) v = 0.0f;         // -0.0 == +0.0\n"
           "  uint32_t u;\n"
           "  std::memcpy(&u, &v, sizeof u);\n"
           "  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // IEEE 754 bits in total order\n"
           "}\n";
  } else {
    out += s.descending ? "static inline bool ke_before(T a, T b) { return a > b; }\n"
                        : "static inline bool ke_before(T a, T b) { return a < b; }\n";
    out += "static inline Key ke_key(T v) { return static_cast<uint64_t>(v) ^ 0x8000000000000000ull; }\n";
  }
  return out;
}

/// The statements ordering `pos[0 .. len)` (positions of the row's values `v`), at
/// least its first `keep` entries; scratch: `tmp` (len positions), `keys`/`keys2`.
std::string OrderRow(const SortSpec& s, SortAlgorithm a) {
  const std::string total =
      "[v](int64_t a, int64_t b) { return ke_before(v[a], v[b]) || (!ke_before(v[b], v[a]) && a < b); }";
  switch (a) {
    case SortAlgorithm::kStableSort:
      return "      std::stable_sort(pos, pos + len, [v](int64_t a, int64_t b) { return ke_before(v[a], v[b]); });\n";
    case SortAlgorithm::kIntroSort:
      return "      std::sort(pos, pos + len, " + total + ");\n";
    case SortAlgorithm::kPartialSort:
      return "      std::partial_sort(pos, pos + keep, pos + len, " + total + ");\n";
    case SortAlgorithm::kNthElement:
      return "      if (keep < len) std::nth_element(pos, pos + keep, pos + len, " + total + ");\n"
             "      std::sort(pos, pos + keep, " + total + ");\n";
    case SortAlgorithm::kInsertion:
      // Ties: an element equal to the k-th does not enter (it comes later in the row).
      // `kth` caches the k-th value once the buffer is full.
      return "      int64_t filled = 0;\n"
             "      T kth{};\n"
             "      for (int64_t j = 0; j < len; ++j) {\n"
             "        if (filled == keep) {\n"
             "          if (keep == 0 || !ke_before(v[j], kth)) continue;\n"
             "          --filled;\n"
             "        }\n"
             "        int64_t q = filled;\n"
             "        for (; q > 0 && ke_before(v[j], v[pos[q - 1]]); --q) pos[q] = pos[q - 1];\n"
             "        pos[q] = j;\n"
             "        if (++filled == keep) kth = v[pos[keep - 1]];\n"
             "      }\n";
    case SortAlgorithm::kRadix: {
      const int passes = s.dtype == core::DType::kFloat32 ? 4 : 8;
      return fmt::format(
          "      for (int64_t j = 0; j < len; ++j) keys[j] = {0}ke_key(v[j]);\n"
          "      Key* kin = keys; Key* kout = keys2; int64_t* pin = pos; int64_t* pout = tmp;\n"
          "      for (int pass = 0; pass < {1}; ++pass) {{\n"
          "        const int shift = 8 * pass;\n"
          "        int64_t count[257] = {{0}};\n"
          "        for (int64_t j = 0; j < len; ++j) ++count[((kin[j] >> shift) & 0xFF) + 1];\n"
          "        if (count[((kin[0] >> shift) & 0xFF) + 1] == len) continue;  // one digit: order unchanged\n"
          "        for (int d = 0; d < 256; ++d) count[d + 1] += count[d];\n"
          "        for (int64_t j = 0; j < len; ++j) {{\n"
          "          const int64_t at = count[(kin[j] >> shift) & 0xFF]++;\n"
          "          kout[at] = kin[j];\n"
          "          pout[at] = pin[j];\n"
          "        }}\n"
          "        std::swap(kin, kout);\n"
          "        std::swap(pin, pout);\n"
          "      }}\n"
          "      if (pin != pos) std::memcpy(pos, pin, sizeof(int64_t) * len);\n",
          s.descending ? "~" : "", passes);
    }
  }
  throw core::InternalError("unknown sort algorithm");
}

}  // namespace

const char* SortAlgorithmName(SortAlgorithm a) {
  switch (a) {
    case SortAlgorithm::kStableSort: return "stable_sort";
    case SortAlgorithm::kIntroSort: return "introsort";
    case SortAlgorithm::kRadix: return "radix";
    case SortAlgorithm::kPartialSort: return "partial_sort";
    case SortAlgorithm::kNthElement: return "nth_element";
    case SortAlgorithm::kInsertion: return "insertion";
  }
  return "?";
}

std::string PrintSortCpp(const SortSpec& s, const SortSchedule& k, const std::string& header) {
  const bool is_float = s.dtype == core::DType::kFloat32;
  const bool radix = k.algorithm == SortAlgorithm::kRadix;
  std::string out = header + templates::GeneratedIncludes() + "#include <new>\n#include <vector>\n\n" +
                    templates::AbiHelpers() + "\n" + OrderHelpers(s) + "\n";
  out += "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
         "                                   DLTensor* outputs, int32_t num_outputs) {\n";
  out += fmt::format("  if (num_inputs < {} || num_outputs != {}) return 1;\n", s.num_inputs, s.outputs.size());
  out += fmt::format("  const DLTensor& X = inputs[{}];\n", s.input);
  out += is_float ? fmt::format("  if (X.dtype.code != kDLFloat || X.dtype.bits != 32 || X.ndim != {}) return 2;\n", s.rank)
                  : fmt::format("  if (X.dtype.code != kDLInt || X.dtype.bits != 64 || X.ndim != {}) return 2;\n", s.rank);
  out += "  if (int c = ke_check_layout(X)) return c;\n";
  out += fmt::format("  // Sizes from the tensor: rows outside dim {} ([outer, len, inner]).\n", s.dim);
  out += "  int64_t outer = 1, inner = 1;\n";
  out += fmt::format("  for (int d = 0; d < {0}; ++d) outer *= X.shape[d];\n"
                     "  for (int d = {0} + 1; d < {1}; ++d) inner *= X.shape[d];\n"
                     "  const int64_t len = X.shape[{0}];\n", s.dim, s.rank);
  out += s.k < 0 ? "  const int64_t keep = len;\n"
                 : fmt::format("  const int64_t keep = {};\n  if (keep > len) return 3;\n", s.k);
  out += "  const T* x = static_cast<const T*>(static_cast<const void*>(static_cast<const char*>(X.data) + X.byte_offset));\n";
  out += "  T* values = nullptr;\n  int64_t* indices = nullptr;\n";
  for (size_t o = 0; o < s.outputs.size(); ++o) {
    const bool value_out = s.outputs[o] == 0;
    out += fmt::format("  {{\n    DLTensor& Y = outputs[{}];\n", o);
    out += value_out ? (is_float ? "    if (Y.dtype.code != kDLFloat || Y.dtype.bits != 32) return 2;\n"
                                 : "    if (Y.dtype.code != kDLInt || Y.dtype.bits != 64) return 2;\n")
                     : "    if (Y.dtype.code != kDLInt || Y.dtype.bits != 64) return 2;\n";
    out += fmt::format("    if (Y.ndim != {}) return 2;\n    if (int c = ke_check_layout(Y)) return c;\n", s.rank);
    out += fmt::format("    for (int d = 0; d < {}; ++d) {{\n"
                       "      if (Y.shape[d] != (d == {} ? keep : X.shape[d])) return 3;\n"
                       "    }}\n", s.rank, s.dim);
    out += value_out ? "    values = static_cast<T*>(static_cast<void*>(static_cast<char*>(Y.data) + Y.byte_offset));\n"
                     : "    indices = static_cast<int64_t*>(static_cast<void*>(static_cast<char*>(Y.data) + Y.byte_offset));\n";
    out += "  }\n";
  }
  out += "  const int64_t rows = outer * inner;\n"
         "  if (rows == 0 || len == 0) return 0;\n"
         "  bool out_of_memory = false;\n";
  if (k.threads_all) out += "#pragma omp parallel\n";
  out += "  {\n"
         "    // Per-thread scratch: the row's values, its positions and the radix buffers.\n"
         "    std::vector<T> row;\n    std::vector<int64_t> order;\n";
  if (radix) out += "    std::vector<int64_t> order2;\n    std::vector<Key> key_buf, key_buf2;\n";
  out += "    bool ready = true;\n"
         "    try {\n"
         "      row.resize(len);\n      order.resize(len);\n";
  if (radix) out += "      order2.resize(len);\n      key_buf.resize(len);\n      key_buf2.resize(len);\n";
  out += "    } catch (const std::bad_alloc&) {\n"
         "      ready = false;\n";
  if (k.threads_all) out += "#pragma omp atomic write\n";
  out += "      out_of_memory = true;\n"
         "    }\n";
  if (k.threads_all) out += fmt::format("#pragma omp for schedule(dynamic, {})\n", k.chunk);
  out += "    for (int64_t r = 0; r < rows; ++r) {\n"
         "      if (!ready) continue;\n"
         "      const int64_t o = r / inner, i = r % inner;\n"
         "      const T* src = x + o * len * inner + i;\n"
         "      int64_t* pos = order.data();\n";
  if (radix) out += "      int64_t* tmp = order2.data();\n      Key* keys = key_buf.data();\n      Key* keys2 = key_buf2.data();\n";
  if (k.algorithm == SortAlgorithm::kInsertion) {
    // One pass over the row: read in place when it is contiguous; no position array.
    out += "      const T* v = src;\n"
           "      if (inner != 1) {\n"
           "        for (int64_t j = 0; j < len; ++j) row[j] = src[j * inner];\n"
           "        v = row.data();\n"
           "      }\n";
  } else {
    out += "      T* v = row.data();\n"
           "      for (int64_t j = 0; j < len; ++j) {\n"
           "        v[j] = src[j * inner];\n"
           "        pos[j] = j;\n"
           "      }\n";
  }
  out += OrderRow(s, k.algorithm);
  out += "      const int64_t base = o * keep * inner + i;\n"
         "      for (int64_t p = 0; p < keep; ++p) {\n"
         "        if (values != nullptr) values[base + p * inner] = v[pos[p]];\n"
         "        if (indices != nullptr) indices[base + p * inner] = pos[p];\n"
         "      }\n"
         "    }\n"
         "  }\n"
         "  return out_of_memory ? 6 : 0;\n}\n";
  return out;
}

}  // namespace kernelevolve::operators::codegen
