// C++ text of the loop IR's values inside the rowwise template's loops: one
// `const auto v<id> = ...;` statement per value, operands bound to variables,
// broadcast inputs indexed by their offset terms (ir::OffsetTerms).
#pragma once

#include <map>
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
  MathFlavor flavor_;
  int next_var_ = 0;  // temporaries are numbered across blocks (they may share a scope)
};

}  // namespace kernelevolve::operators::templates
