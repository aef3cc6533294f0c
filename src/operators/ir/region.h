// Region analysis of a lowered graph: the kernel iterates over the full shape
// viewed as [O, R, I] (R = the reduced dims, contiguous after dropping size-1 dims;
// a reduction to a scalar alone is O = I = 1). Values are element level (indexed by
// (o, r, i)), row level (reduction results, indexed by (o, i)), tail level (row
// values reduced to one scalar after the row loop) or small (inputs of fewer
// elements and ops on them, recomputed where used, indexed by broadcasting).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operators/ir/loop_ir.h"

namespace kernelevolve::operators::ir {

enum class Level { kSmall, kElement, kRow, kTail };

/// Which loop indices an index expression is built from.
enum class Part { kOuter, kReduce, kInner, kLinear };

/// One term of a flat offset: ((index_of(part) / divisor) % modulus) * stride
/// (modulus 0: none). kLinear uses the flat element (or row) index.
struct IndexTerm {
  Part part = Part::kLinear;
  int64_t divisor = 1;
  int64_t modulus = 0;
  int64_t stride = 1;
};

/// The offset of an operand of shape `operand` (contiguous, broadcast right-aligned)
/// inside an op of shape `frame`, as terms of the loop indices. `row_space`: the
/// frame has O*I elements, indexed by (o, i); else O*R*I, indexed by (o, r, i).
/// `iota_dim` >= 0: instead the index along that dim of `frame`.
std::vector<IndexTerm> OffsetTerms(const std::vector<int64_t>& operand,
                                   const std::vector<int64_t>& frame, bool row_space,
                                   int64_t outer, int64_t reduce, int64_t inner,
                                   int iota_dim = -1);

/// Groups of row reductions computed in one sweep over r (no member depends on
/// another member's result).
struct Stage {
  std::vector<int> reductions;
};

struct Region {
  Graph graph;  // the analysed graph (full reductions split into row + tail)
  int64_t outer = 1, reduce = 1, inner = 1;
  std::vector<Level> level;        // per value id
  std::vector<Stage> stages;       // in order
  std::vector<int> row_stage;      // per value: stage after which a row value is ready (-1: before all)
  std::vector<int> tail_inputs;    // row values buffered for tail reductions
  bool HasReductions() const { return !stages.empty(); }
  const Value& ValueOf(int id) const { return graph.values[static_cast<size_t>(id)]; }
  Level LevelOf(int id) const { return level[static_cast<size_t>(id)]; }
  bool SplitR() const { return outer * inner == 1; }

  /// The operands of element-wise value `v` by name ("v<id>"), each the text
  /// `emit(id, frame)` returns: `frame` for an operand at Level::kSmall (a broadcast
  /// parameter read in the op's frame), empty for the others. The C++ and Triton
  /// rowwise emitters spell the operands; this is their common walk.
  template <class EmitOperand>
  std::map<std::string, std::string> Operands(const Value& v, const std::vector<int64_t>& frame,
                                              EmitOperand&& emit) const {
    std::map<std::string, std::string> vars;
    for (int op : v.operands) {
      const bool small = level[static_cast<size_t>(op)] == Level::kSmall;
      vars[ValueName(op)] = emit(op, small ? frame : std::vector<int64_t>{});
    }
    return vars;
  }

  /// The tail in print order (both rowwise emitters print it in one program): the
  /// reductions over the buffered rows and the element-wise values at Level::kTail,
  /// by id; then the indices into graph.outputs of the outputs computed there.
  struct TailOrder {
    std::vector<const Value*> values;
    std::vector<size_t> outputs;
  };
  TailOrder Tail() const {
    TailOrder t;
    for (const Value& v : graph.values) {
      if (LevelOf(v.id) != Level::kTail) continue;
      if (v.kind == ValueKind::kReduce || v.kind == ValueKind::kElementwise) t.values.push_back(&v);
    }
    for (size_t k = 0; k < graph.outputs.size(); ++k) {
      if (LevelOf(graph.outputs[k]) == Level::kTail) t.outputs.push_back(k);
    }
    return t;
  }

  /// The input value whose data value `id` reads: `id` itself unless it is a chain
  /// of views (kView) over it. Both rowwise emitters load views from their input.
  const Value& ViewSource(int id) const {
    while (graph.values[static_cast<size_t>(id)].kind == ValueKind::kView) {
      id = graph.values[static_cast<size_t>(id)].operands[0];
    }
    return graph.values[static_cast<size_t>(id)];
  }
};

/// Analysis result: a region, or why the graph does not fit one region.
struct RegionResult {
  std::optional<Region> region;
  std::string unsupported;  // "unsupported_graph: ..." when !region
};

/// Analyses a lowered graph. Never throws for an unsupported graph.
RegionResult AnalyzeRegion(const Graph& graph);

}  // namespace kernelevolve::operators::ir
