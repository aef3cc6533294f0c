// A small loop IR for graphs with reductions: elementwise primitives (spelled by
// their ATen targets), an index iota, views of contiguous data and reductions over
// a set of dims. Lowered from core::OpGraph (lower_graph.h), analysed into one
// [O, R, I] loop region (region.h), printed by a backend (the CPU "rowwise"
// template today). Free of any backend text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/op_graph.h"

namespace kernelevolve::operators::ir {

enum class ValueKind {
  kInput,        // an ABI input (placeholder or parameter)
  kIota,         // the index along `dim` of `shape` (as float), e.g. for argmax / gather
  kElementwise,  // one ATen elementwise op (`node.target`), operands by name "v<id>"
  kView,         // the operand's contiguous data with another shape (view/reshape/...)
  kReduce,       // a reduction of the operand over `dims`, keepdim shape
};

enum class ReduceKind { kSum, kMax, kMin, kProd };

/// One SSA value. Shapes are logical; a value of fewer elements than the kernel's
/// full shape is broadcast right-aligned into the shape of the op using it.
struct Value {
  int id = -1;
  ValueKind kind = ValueKind::kElementwise;
  core::DType dtype = core::DType::kFloat32;  // float32, bool, or int64 (inputs only)
  std::vector<int64_t> shape;
  std::vector<int> operands;  // kView / kReduce: one; kElementwise: tensor operands
  int abi_index = -1;         // kInput
  std::string input_name;     // kInput: the graph node
  int dim = -1;               // kIota
  core::OpNode node;          // kElementwise: target + args; refs name operands "v<id>"
  ReduceKind reduce = ReduceKind::kSum;  // kReduce
  std::vector<int> dims;                 // kReduce: sorted, non-negative, of the operand's shape
  std::string origin;                    // the captured ATen node this came from
};

/// A lowered graph: values in topological order, outputs in ABI order.
struct Graph {
  std::vector<Value> values;
  std::vector<int> outputs;
  std::vector<core::DType> output_dtypes;  // dtype of each ABI output (float32 or int64)
};

/// "v<id>", the name by which elementwise nodes refer to operand `id`.
std::string ValueName(int id);

/// Element count of a shape (1 for a scalar).
int64_t Numel(const std::vector<int64_t>& shape);

/// "[4, 8]".
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace kernelevolve::operators::ir
