// C++ text of the scan template's loops: row scans (scanned dim last, inner == 1)
// and column scans (inner > 1), each as helper functions plus the entry's dispatch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace kernelevolve::operators::templates {

/// What the loop text needs to know about the fused scan.
struct ScanCode {
  std::string combine;   // "+" (cumsum) or "*" (cumprod)
  std::string identity;  // "0" or "1": the accumulator's start value
  bool reverse = false;  // scan from index n-1 down to 0
  std::string params;    // "const float* __restrict in0, ..., float* __restrict out"
  std::string args;      // "in0, ..., out"
  /// The prologue element at index expression `i`, e.g. "ke_prologue(in0[i])".
  std::function<std::string(const std::string& i)> pro;
  /// The output element for scan value `s` (a float) at index `i`.
  std::function<std::string(const std::string& s, const std::string& i)> epi;
};

/// Helper functions and entry statements of one loop structure.
struct ScanLoops {
  std::string functions;  // static helpers, placed before the entry point
  std::string dispatch;   // statements inside the entry; outer, n, inner and the
                          // pointers of `params` are in scope
};

/// Row scans over rows of n contiguous elements (needs inner == 1; the dispatch
/// returns 3 otherwise). `row_scan`: "sequential" (one scalar loop per row),
/// "simd" (an `omp simd` inscan loop: GCC's in-register log-step scan),
/// "blocked" (two-level scan after Blelloch, "Prefix sums and their applications",
/// 1990: per-block totals, an exclusive scan of the totals as carries, then each
/// block scanned from its carry; blocks of `block` elements, which lets several
/// threads share one long row). `threaded`: `omp parallel for` over rows (blocks
/// for "blocked").
ScanLoops RowScanLoops(const ScanCode& code, const std::string& row_scan, int64_t block,
                       bool threaded);

/// Column scans for any inner (the scanned dim is not the last). `order`:
/// "column" (one scalar strided loop per (outer, column) pair) or "row" (for each
/// step along n, an `omp simd` loop across a tile of `tile` columns keeping one
/// accumulator per column). `threaded`: `omp parallel for` over (outer, column)
/// pairs or (outer, tile) pairs.
ScanLoops ColumnScanLoops(const ScanCode& code, const std::string& order, int64_t tile,
                          bool threaded);

}  // namespace kernelevolve::operators::templates
