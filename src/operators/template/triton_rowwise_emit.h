// Triton text of the loop IR's values inside the triton_rowwise kernels: one
// `v<id>_<n> = ...` statement per value, element inputs loaded at the flat element
// index, broadcast (small) inputs at their offset terms (ir::OffsetTerms), loads
// masked by the masks of the loop indices they use.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "operators/ir/region.h"
#include "operators/template/rowwise_emit.h"

namespace kernelevolve::operators::templates {

/// How one kernel spells the loop indices: a Python expression per index (a tensor
/// such as `r` of shape [1, BLOCK_R], a scalar such as `o`, or "0" where the index is
/// fixed) and the mask guarding it ("" when every value of the index is in range).
struct TritonIndex {
  std::string o = "o", r = "r", i = "i";
  std::string o_mask, r_mask, i_mask;
  /// Loops over r in blocks: the block's first r (a scalar, e.g. "r0") and the block
  /// length, every block starting at a multiple of it ("" / 0: r is not blocked so).
  /// An operand indexed by r // D with D a multiple of r_block is then one value per
  /// block (a per-channel weight of group norm), loaded once from r_start instead of
  /// gathered per element: gathers next to the streaming loads of a pipelined loop
  /// stalled the H200's memory pipes (group_norm elements kernel at 12% of DRAM peak).
  std::string r_start;
  int64_t r_block = 0;
};

/// Statements of one kernel section, with the values already computed in it.
struct TritonBlock {
  std::vector<std::string> lines;
  std::map<std::string, std::string> memo;  // value key -> variable
};

/// Spells values of an analysed region in Triton. ABI inputs are the pointers
/// "in<abi index>"; row values are "row<base id>" and tail values "t<base id>",
/// defined by the kernel writer.
class TritonEmitter {
 public:
  explicit TritonEmitter(const ir::Region& region)
      : region_(region), base_(region, MathFlavor::kLibm) {}

  /// The variable holding value `id` at element (o, r, i) (`row_space` false) or row
  /// (o, i) (`row_space` true), adding the statements it needs to `block`. `frame`:
  /// the shape of the op using a broadcast value (empty: the value's own shape).
  /// Throws InternalError for a value without a Triton spelling (callers check
  /// Unsupported() first).
  std::string Emit(int id, bool row_space, const TritonIndex& index, TritonBlock& block,
                   const std::vector<int64_t>& frame = {});

  /// The right-hand side of a row-level (or tail-level) elementwise value, its
  /// operands emitted into `block` in row space.
  std::string RowDefinition(int id, const TritonIndex& index, TritonBlock& block);

  /// The value a view / identity reduction chain stands for (ExprEmitter::Base).
  int Base(int id) const { return base_.Base(id); }

  /// The flat element index (o * R + r) * I + i over the indices of size > 1.
  std::string ElementIndex(const TritonIndex& index) const;
  /// The mask of ElementIndex ("" when none is needed).
  std::string ElementMask(const TritonIndex& index) const;
  /// The flat row index o * I + i and its mask.
  std::string RowIndex(const TritonIndex& index) const;
  std::string RowMask(const TritonIndex& index) const;

  /// "" when every elementwise op of the region has a Triton rule, else
  /// "unsupported_op: aten.NAME (...)".
  std::string Unsupported() const;

 private:
  std::string Offset(const std::vector<ir::IndexTerm>& terms, bool row_space,
                     const TritonIndex& index, std::set<ir::Part>& parts) const;
  std::string Mask(const std::set<ir::Part>& parts, bool row_space, const TritonIndex& index) const;
  std::string Elementwise(const ir::Value& v, bool row_space, const TritonIndex& index,
                          TritonBlock& block, const std::vector<int64_t>& frame);
  const ir::Region& region_;
  ExprEmitter base_;
  int next_var_ = 0;
};

}  // namespace kernelevolve::operators::templates
