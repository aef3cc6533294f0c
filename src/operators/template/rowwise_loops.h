// The loop nest of a rowwise kernel: stages of reductions over r, row values,
// element and row outputs, tail reductions; in one of three shapes (one row split
// across threads; rows with r inner; rows with a block of i inner).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "operators/ir/region.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::templates {

/// A knob setting of the rowwise template, decoded.
struct LoopSettings {
  MathFlavor flavor = MathFlavor::kLibm;
  bool threaded = false;
  bool acc_double = true;
  int64_t rows_per_chunk = 1;  // knob block_rows: rows handed to a thread at a time
  int64_t r_chunk = 16384;     // knob split_block: one-row kernels, elements per partial
  bool r_outer = true;         // I > 1: accumulate a block of i per r step
  int64_t i_block = 64;
  /// Rows form (I == 1): element values computed in several loops over r are stored
  /// in a per-row stack buffer by the first loop and read back by the others (one
  /// transcendental per element instead of one per loop). See RowBufferValues.
  bool row_buffer = false;
};

/// Statements computing every output of `region`, to be placed in the entry
/// function after the pointers in<k> / out<k> are set (indented by two spaces).
/// Throws InternalError when a value cannot be spelled (a bug: the region was
/// checked by ir::AnalyzeRegion).
std::string LoopNest(const ir::Region& region, const LoopSettings& settings);

/// Ids of the element values a row buffer would hold for `region` (empty: the knob
/// row_buffer changes nothing: one row split across threads, I > 1, R > 32768, or no
/// float value recomputed in a second loop over r).
std::set<int> RowBufferValues(const ir::Region& region);

}  // namespace kernelevolve::operators::templates
