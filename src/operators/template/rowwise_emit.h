// C++ text of the loop IR's values inside the rowwise template's loops: one
// `const auto v<id> = ...;` statement per value, operands bound to variables,
// broadcast inputs indexed by their offset terms (ir::OffsetTerms).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "operators/ir/region.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::templates {

/// How the loop indices and row values are spelled where code is emitted.
struct LoopNames {
  std::string o = "o";  // outer index
  std::string r = "r";  // reduced index (element space only)
  std::string i = "i";  // inner index
  /// Row values as arrays over a block of i ("row<id>[ii]") instead of scalars.
  bool row_arrays = false;
  /// Split r loop: r = r_hi * r_split + (inner index). A reduce-index term whose
  /// divisor is a multiple of r_split is spelled with r_hi (e.g. group norm's channel
  /// r / HW becomes r_hi / (HW / r_split)), so it no longer varies in the inner loop.
  /// 0: r is not split.
  int64_t r_split = 0;
  std::string r_hi = "r1";
  /// Stage accumulators as kPartialLanes partials "p<id>[l]" (rowwise_loops.cpp,
  /// PartialsBegin) instead of "a<id>" (or "a<id>[ii]" with row_arrays).
  bool partials = false;
};

/// Statements of one loop body, with the values already computed in it.
struct Block {
  std::vector<std::string> lines;
  std::map<std::string, std::string> memo;  // value key -> C++ text
};

/// Spells values of an analysed region. Inputs are the pointers "in<abi index>".
class ExprEmitter {
 public:
  ExprEmitter(const ir::Region& region, MathFlavor flavor) : region_(region), flavor_(flavor) {}

  /// Text of value `id` at element (o, r, i) (`row_space` false) or row (o, i)
  /// (`row_space` true), adding the statements it needs to `block`. `frame`: the
  /// shape of the op using the value (for broadcast values); empty: the value's own.
  /// Row values are references to their row variable; tail values to "t<id>".
  std::string Emit(int id, bool row_space, const LoopNames& names, Block& block,
                   const std::vector<int64_t>& frame = {});

  /// The defining right-hand side of a row-level elementwise value (its operands
  /// emitted into `block`), in row space.
  std::string RowDefinition(int id, const LoopNames& names, Block& block);

  /// `x` cast to output `k`'s element type: static_cast<int64_t> for an int64 output
  /// (argmax, argmin), static_cast<float> otherwise.
  std::string OutputCast(size_t k, const std::string& x) const {
    return region_.graph.output_dtypes[k] == core::DType::kInt64 ? "static_cast<int64_t>(" + x + ")"
                                                                 : "static_cast<float>(" + x + ")";
  }

  /// Loop-invariant code motion: while `hoist` is set, small values (broadcast
  /// inputs and ops on them) whose index does not vary with r (under the names'
  /// r split) are emitted into `*hoist`, placed by the caller before the r loop,
  /// instead of into the loop body. nullptr: off.
  void SetHoist(Block* hoist) { hoist_ = hoist; }

  /// Row buffers (knob row_buffer): while set, element value `id` in `*reads` is
  /// spelled as its text there (e.g. "buf7[r]") instead of being recomputed, and its
  /// id goes into `*used`. While `computed` is set, every element-level value emitted
  /// as a statement is recorded there (id -> variable). nullptr: off.
  void SetBuffers(const std::map<int, std::string>* reads, std::set<int>* used,
                  std::map<int, std::string>* computed) {
    reads_ = reads;
    used_ = used;
    computed_ = computed;
  }

  /// Whether value `id`, used in an op of shape `frame` at element (o, r, i), varies
  /// with r (under the r split of `names`). Row and tail values do not; element
  /// values do; small values when an index term of one of their leaves uses r.
  bool DependsOnR(int id, const std::vector<int64_t>& frame, const LoopNames& names) const;

  /// Calls `visit` with the element-space index terms (ir::OffsetTerms) of every leaf
  /// (broadcast input, view of one, index) that small value `id`, used in an op of shape
  /// `frame`, reads: the value itself when it is a leaf, else the leaves of its
  /// elementwise operands, depth first in operand order. Values that are not small
  /// (and their operands) are skipped: no call.
  void ForEachLeafTerms(int id, const std::vector<int64_t>& frame,
                        const std::function<void(const std::vector<ir::IndexTerm>&)>& visit) const;

  /// The value a view / identity reduction chain stands for.
  int Base(int id) const;

  /// "row<base>" or "row<base>[ii]".
  std::string RowRef(int id, const LoopNames& names) const;

  /// The flat element index (o * R + r) * I + i, simplified.
  std::string ElementIndex(const LoopNames& names) const;
  /// The flat row index o * I + i, simplified.
  std::string RowIndex(const LoopNames& names) const;

 private:
  std::string Offset(const std::vector<ir::IndexTerm>& terms, bool row_space,
                     const LoopNames& names) const;
  std::string Elementwise(const ir::Value& v, bool row_space, const LoopNames& names,
                          Block& block, const std::vector<int64_t>& frame);
  const ir::Region& region_;
  bool TermsUseR(const std::vector<ir::IndexTerm>& terms, const LoopNames& names) const;
  MathFlavor flavor_;
  Block* hoist_ = nullptr;
  const std::map<int, std::string>* reads_ = nullptr;
  std::set<int>* used_ = nullptr;
  std::map<int, std::string>* computed_ = nullptr;
  int next_var_ = 0;  // temporaries are numbered across blocks (they may share a scope)
};

}  // namespace kernelevolve::operators::templates
