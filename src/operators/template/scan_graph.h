// Recognizes a cumulative scan (cumsum / cumprod) in a captured op graph, with an
// elementwise prologue before it, an elementwise epilogue after it and flips along
// the scanned dim (reverse scans), and describes it as a ScanSpec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::templates {

enum class ScanOp { kSum, kProd };

/// One ABI input of the scan kernel.
struct ScanInput {
  std::string node;      // graph node name
  bool is_bool = false;  // bool (one byte per element) rather than float32
};

/// out = epilogue(scan(prologue(inputs)), inputs) over a tensor viewed as
/// [outer, n, inner], scanning n. Every input and the output have `shape`.
struct ScanSpec {
  ScanOp op = ScanOp::kSum;
  std::string target;     // "aten.cumsum.default" or "aten.cumprod.default"
  std::string scan_node;  // the graph node of the scan
  int64_t dim = 0;        // scanned dim, wrapped to 0..rank-1 (0 for a 0-d tensor)
  int64_t rank = 0;
  std::vector<int64_t> shape;
  int64_t outer = 1;  // product of the dims before `dim`
  int64_t n = 1;      // shape[dim]
  int64_t inner = 1;  // product of the dims after `dim`
  /// The scan runs from index n-1 down to 0: the graph scans a flip of its operand
  /// along `dim` and flips the result back (torch.cumsum(x.flip(d), d).flip(d)).
  bool reverse = false;
  std::vector<ScanInput> inputs;  // ABI order
  /// inputs -> the element fed to the scan; input_vars follow `inputs`.
  PointwiseExpr prologue_libm;
  PointwiseExpr prologue_prelude;
  /// (scan element, inputs) -> output element; input_vars[0] is the scan's, then
  /// `inputs` in order.
  PointwiseExpr epilogue_libm;
  PointwiseExpr epilogue_prelude;
};

/// Result of MatchScan: a spec, or why the graph is not a supported scan.
struct ScanMatch {
  std::optional<ScanSpec> spec;
  std::string unsupported;  // e.g. "unsupported_op: aten.logcumsumexp.default (...)"
};

/// True for the cumulative ATen ops: cumsum, cumprod (templated) and cummax, cummin,
/// logcumsumexp (recognized only to say they are not templated).
bool IsScanFamilyTarget(const std::string& target);

/// Accepts a graph with exactly one aten.cumsum.default / aten.cumprod.default call
/// on a float32 value (dtype argument null or float32), whose inputs are float32 or
/// bool tensors of the scan's shape, whose other needed calls are pointwise rules
/// (pointwise_rules.h), aten._to_copy.default between float32 and bool, or
/// aten.flip.default along the scanned dim, and whose single output is float32 of
/// that shape. Flips must pair up: the scan reads a value flipped an odd or even
/// number of times, and every elementwise op combines values flipped the same
/// parity of times; the output is unflipped. Never throws for an unsupported graph.
ScanMatch MatchScan(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::templates
