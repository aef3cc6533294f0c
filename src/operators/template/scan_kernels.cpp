#include "operators/template/scan_kernels.h"

#include <fmt/format.h>

namespace kernelevolve::operators::templates {
namespace {

/// "acc += (ke_acc_t)PRO(i);" (or *=).
std::string Accumulate(const ScanCode& code, const std::string& acc, const std::string& i) {
  return fmt::format("{} {}= static_cast<ke_acc_t>({});", acc, code.combine, code.pro(i));
}

std::string Store(const ScanCode& code, const std::string& acc, const std::string& i) {
  // ke_epilogue takes the accumulator as is (double or float) and rounds once.
  return fmt::format("out[{}] = {};", i, code.epi(acc, i));
}

/// Scan of the contiguous span [lo, hi) starting from `acc`, in scan direction;
/// `simd` makes it an OpenMP inscan loop.
std::string SpanFunction(const ScanCode& code, bool simd) {
  const std::string i = code.reverse ? "hi - 1 - k" : "lo + k";
  std::string out = fmt::format(
      "// Scans [lo, hi) {} starting from the carry `acc`.\n"
      "static inline void ke_scan_span({}, int64_t lo, int64_t hi, ke_acc_t acc) {{\n"
      "  const int64_t len = hi - lo;\n",
      code.reverse ? "from hi - 1 down to lo" : "from lo up to hi - 1", code.params);
  if (simd) {
    // OpenMP 5.0 inscan reduction: GCC vectorizes it with an in-register log-step
    // (Hillis-Steele) scan per vector plus a running carry.
    out += fmt::format(
        "#pragma omp simd reduction(inscan, {} : acc)\n"
        "  for (int64_t k = 0; k < len; ++k) {{\n"
        "    {}\n"
        "#pragma omp scan inclusive(acc)\n"
        "    {}\n"
        "  }}\n}}\n",
        code.combine, Accumulate(code, "acc", i), Store(code, "acc", i));
  } else {
    out += fmt::format(
        "  for (int64_t k = 0; k < len; ++k) {{\n"
        "    {}\n"
        "    {}\n"
        "  }}\n}}\n",
        Accumulate(code, "acc", i), Store(code, "acc", i));
  }
  return out;
}

constexpr const char* kNeedRows = "  if (inner != 1) return 3;  // row scans need the scanned dim last\n";

}  // namespace

ScanLoops RowScanLoops(const ScanCode& code, const std::string& row_scan, int64_t block,
                       bool threaded) {
  ScanLoops loops;
  const std::string ident = "static_cast<ke_acc_t>(" + code.identity + ")";
  const char* parallel = threaded ? "#pragma omp parallel for schedule(static)\n" : "";
  if (row_scan != "blocked") {
    loops.functions = SpanFunction(code, row_scan == "simd");
    loops.dispatch = std::string(kNeedRows) + parallel +
                     fmt::format("  for (int64_t r = 0; r < outer; ++r) {{\n"
                                 "    ke_scan_span({}, r * n, r * n + n, {});\n"
                                 "  }}\n",
                                 code.args, ident);
    return loops;
  }
  loops.functions = SpanFunction(code, true) + "\n" +
                    fmt::format(
                        "// Combined prologue elements of [lo, hi) (a vectorized reduction).\n"
                        "static inline ke_acc_t ke_block_total({}, int64_t lo, int64_t hi) {{\n"
                        "  ke_acc_t t = {};\n"
                        "#pragma omp simd reduction({} : t)\n"
                        "  for (int64_t i = lo; i < hi; ++i) {}\n"
                        "  return t;\n}}\n",
                        code.params, ident, code.combine, Accumulate(code, "t", "i"));
  const std::string carry_loop =
      code.reverse ? "for (int64_t b = nb - 1; b >= 0; --b)" : "for (int64_t b = 0; b < nb; ++b)";
  loops.dispatch = std::string(kNeedRows) +
                   fmt::format(
                       "  // Two-level scan (Blelloch 1990): block totals, carries, block scans.\n"
                       "  constexpr int64_t kBlock = {};  // elements per block\n"
                       "  const int64_t nb = (n + kBlock - 1) / kBlock;  // blocks per row\n"
                       "  ke_acc_t* carry = new ke_acc_t[outer * nb];\n",
                       block);
  loops.dispatch += parallel;
  loops.dispatch += fmt::format(
      "  for (int64_t t = 0; t < outer * nb; ++t) {{\n"
      "    const int64_t lo = (t / nb) * n + (t % nb) * kBlock;\n"
      "    carry[t] = ke_block_total({}, lo, std::min(lo + kBlock, (t / nb) * n + n));\n"
      "  }}\n"
      "  for (int64_t r = 0; r < outer; ++r) {{  // totals -> exclusive carries\n"
      "    ke_acc_t acc = {};\n"
      "    {} {{\n"
      "      const ke_acc_t total = carry[r * nb + b];\n"
      "      carry[r * nb + b] = acc;\n"
      "      acc {}= total;\n"
      "    }}\n"
      "  }}\n",
      code.args, ident, carry_loop, code.combine);
  loops.dispatch += parallel;
  loops.dispatch += fmt::format(
      "  for (int64_t t = 0; t < outer * nb; ++t) {{\n"
      "    const int64_t lo = (t / nb) * n + (t % nb) * kBlock;\n"
      "    ke_scan_span({}, lo, std::min(lo + kBlock, (t / nb) * n + n), carry[t]);\n"
      "  }}\n"
      "  delete[] carry;\n",
      code.args);
  return loops;
}

ScanLoops ColumnScanLoops(const ScanCode& code, const std::string& order, int64_t tile,
                          bool threaded) {
  ScanLoops loops;
  const std::string ident = "static_cast<ke_acc_t>(" + code.identity + ")";
  const std::string j = code.reverse ? "n - 1 - k" : "k";
  const char* parallel = threaded ? "#pragma omp parallel for schedule(static)\n" : "";
  if (order == "column") {
    loops.functions = fmt::format(
        "// Scans column c of outer slice o (stride inner).\n"
        "static inline void ke_scan_column({}, int64_t o, int64_t c, int64_t n, int64_t inner) {{\n"
        "  ke_acc_t acc = {};\n"
        "  for (int64_t k = 0; k < n; ++k) {{\n"
        "    const int64_t i = (o * n + {}) * inner + c;\n"
        "    {}\n"
        "    {}\n"
        "  }}\n}}\n",
        code.params, ident, j, Accumulate(code, "acc", "i"), Store(code, "acc", "i"));
    loops.dispatch = std::string(parallel) +
                     fmt::format("  for (int64_t t = 0; t < outer * inner; ++t) {{\n"
                                 "    ke_scan_column({}, t / inner, t % inner, n, inner);\n"
                                 "  }}\n",
                                 code.args);
    return loops;
  }
  loops.functions = fmt::format(
      "constexpr int64_t kTile = {};  // columns scanned side by side\n\n"
      "// Scans columns [c0, c0 + w) of outer slice o: per step along n, one vector\n"
      "// loop across the tile, one accumulator per column.\n"
      "static inline void ke_scan_tile({}, int64_t o, int64_t c0, int64_t w, int64_t n,\n"
      "                                int64_t inner) {{\n"
      "  ke_acc_t acc[kTile];\n"
      "  for (int64_t c = 0; c < w; ++c) acc[c] = {};\n"
      "  for (int64_t k = 0; k < n; ++k) {{\n"
      "    const int64_t base = (o * n + {}) * inner + c0;\n"
      "#pragma omp simd\n"
      "    for (int64_t c = 0; c < w; ++c) {{\n"
      "      {}\n"
      "      {}\n"
      "    }}\n"
      "  }}\n}}\n",
      tile, code.params, ident, j, Accumulate(code, "acc[c]", "base + c"),
      Store(code, "acc[c]", "base + c"));
  loops.dispatch = "  const int64_t tiles = (inner + kTile - 1) / kTile;  // per outer slice\n" +
                   std::string(parallel) +
                   fmt::format("  for (int64_t t = 0; t < outer * tiles; ++t) {{\n"
                               "    const int64_t c0 = (t % tiles) * kTile;\n"
                               "    ke_scan_tile({}, t / tiles, c0, std::min(kTile, inner - c0), "
                               "n, inner);\n"
                               "  }}\n",
                               code.args);
  return loops;
}

}  // namespace kernelevolve::operators::templates
