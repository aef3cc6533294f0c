// Internal to the Core ATen lowering (lower_core*.cpp): the state of one lowering
// and the helpers every rule uses. A rule reads its node's arguments, appends
// definitions and returns the node's output def ids; problems go to Fail().
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/op_graph.h"
#include "operators/ir/lower_core.h"

namespace kernelevolve::operators::ir {

class CoreLowerer;

/// A rule: appends the node's definitions; returns its outputs (one per result).
using LowerFn = std::vector<int> (*)(CoreLowerer& l, const core::OpNode& node);

struct LoweringRule {
  const char* target;  // "aten.add.Tensor"
  LowerFn fn;
  const char* how;     // for CoreLoweringTable
};

class CoreLowerer {
 public:
  /// Lowers `graph`'s nodes into `program`; records which results of each node the
  /// graph's outputs depend on (ResultRead, Live).
  CoreLowerer(TensorProgram& program, const core::OpGraph& graph);

  // ---- reading the current node's arguments --------------------------------------
  /// The def of tensor argument `name` (a ref), or -1 after Fail() when it is not one.
  int Tensor(const core::OpNode& node, const std::string& name);
  /// True when `name` is a ref to a tensor.
  static bool IsTensor(const core::OpNode& node, const std::string& name);
  /// The argument's constant value (null when absent or a ref).
  static nlohmann::json Value(const core::OpNode& node, const std::string& name);
  /// A number argument ("inf"/"-inf"/"nan" strings too); `fallback` when null.
  double Number(const core::OpNode& node, const std::string& name, double fallback = 0);
  /// An int argument; `fallback` when null.
  int64_t IntArg(const core::OpNode& node, const std::string& name, int64_t fallback = 0);
  /// An int list argument ([] when null; a single int becomes [v]).
  std::vector<int64_t> IntList(const core::OpNode& node, const std::string& name);
  /// The tensor refs of a list argument (aten.cat's tensors, index's indices; -1 for None).
  std::vector<int> TensorList(const core::OpNode& node, const std::string& name);

  // ---- definitions ----------------------------------------------------------------
  const TensorDef& Def(int id) const { return program_.defs.at(static_cast<size_t>(id)); }
  int AddInput(const core::OpNode& node);
  int Compute(std::vector<int64_t> shape, core::DType dtype, Expr body);
  int Reduce(std::vector<int64_t> shape, core::DType dtype, std::vector<int64_t> extents,
             ReduceOp op, Expr body);
  int Scan(std::vector<int64_t> shape, core::DType dtype, int dim, ScanOp op, Expr body);

  /// def[index] (one int64 index per dim), masked when `mask` is given.
  Expr Read(int def, std::vector<Expr> index, Expr mask = nullptr) const;
  /// def read at the indices (vars 0 .. out_shape.size()-1) of an op of `out_shape`
  /// that broadcasts it (right-aligned; size-1 dims read index 0).
  Expr ReadBroadcast(int def, const std::vector<int64_t>& out_shape) const;
  /// A tensor-or-number operand of an elementwise op of `out_shape`, cast to `dtype`.
  Expr Operand(const core::OpNode& node, const std::string& name,
               const std::vector<int64_t>& out_shape, core::DType dtype);

  /// A dim argument normalized against `rank` (negative wraps); Fail() when out of range.
  int NormDim(int64_t dim, size_t rank);

  void Fail(const std::string& why) {
    if (error_.empty()) error_ = why;
  }
  /// "unsupported_op: TARGET (WHY) (node NAME)" for the current node.
  void Unsupported(const core::OpNode& node, const std::string& why);
  const std::string& Error() const { return error_; }
  bool Failed() const { return !error_.empty(); }
  /// The node the next defs come from: its name and target, and its backend
  /// (core::OpNode::backend), which each def records.
  void SetOrigin(std::string origin, std::string backend = "") {
    origin_ = std::move(origin);
    backend_ = std::move(backend);
  }
  void Bind(const std::string& name, std::vector<int> defs) { values_[name] = std::move(defs); }
  const std::vector<int>* Bound(const std::string& name) const;
  /// Whether the graph's outputs depend on result `k` of `node`: a getitem reads its
  /// index, any other reference (an argument, a list entry, a graph output) reads every
  /// result. A rule may then skip the work of a result nobody reads (max pooling's
  /// indices).
  bool ResultRead(const core::OpNode& node, int64_t k) const;
  /// Whether some output depends on `node`.
  bool Live(const core::OpNode& node) const { return reads_.count(node.name) > 0; }

 private:
  int Append(TensorDef def);
  TensorProgram& program_;
  std::map<std::string, std::vector<int>> values_;
  std::map<std::string, std::set<int64_t>> reads_;  // live node -> results read; -1: all
  std::string origin_;
  std::string backend_;
  std::string error_;
};

// Rule tables, one per file.
const std::vector<LoweringRule>& ElementwiseRules();  // lower_core_elementwise.cpp
const std::vector<LoweringRule>& LayoutRules();       // lower_core_layout.cpp
const std::vector<LoweringRule>& ReductionRules();    // lower_core_reduce.cpp
const std::vector<LoweringRule>& HeavyRules();        // lower_core_heavy.cpp
const std::vector<LoweringRule>& KeptRules();         // lower_core_kept.cpp
const std::vector<LoweringRule>& SearchRules();       // lower_core_search.cpp
const std::vector<LoweringRule>& SortRules();         // lower_core_sort.cpp
const std::vector<LoweringRule>& ScatterRules();      // lower_core_scatter.cpp
const std::vector<LoweringRule>& SampleRules();       // lower_core_sample.cpp
const std::vector<LoweringRule>& DistanceRules();     // lower_core_distance.cpp

// Shared building blocks of the rules.
/// Reduction of `x` (a def) over `dims` (normalized, sorted, unique) to `out_shape`
/// (keepdim or not, as the node says); `term` maps the read element (or null: the
/// element itself).
int ReduceDims(CoreLowerer& l, int x, const std::vector<int>& dims, bool keepdim, ReduceOp op,
               core::DType dtype);
/// Normalizes a dim list argument (null or []: every dim).
std::vector<int> DimList(CoreLowerer& l, const core::OpNode& node, const std::string& name, size_t rank);
/// The identity of a max (`lowest`: -inf or the dtype's smallest value) or of a min
/// (+inf or the largest value) for `dt`.
Expr ExtremeValue(core::DType dt, bool lowest);
/// An int64 index read from `index_def` at `at`, wrapped when negative (Python
/// indexing) if `wrap`, and whether it lies in [0, size).
std::pair<Expr, Expr> IndexValue(CoreLowerer& l, int index_def, std::vector<Expr> at, int64_t size, bool wrap);
/// x where it is finite, else 0: a row max that is -inf (every element masked or -inf)
/// made safe to subtract before an exp (softmax-style rules: logsumexp, attention).
Expr ZeroWhereInfinite(const Expr& x, core::DType dt);
/// Mean of x over dims, keepdim shape.
int MeanKeep(CoreLowerer& l, int x, const std::vector<int>& dims);
/// Variance sum((x - mean)^2) / max(n - correction, 0) over dims, keepdim shape;
/// `mean_out` receives the keepdim mean.
int VarianceKeep(CoreLowerer& l, int x, const std::vector<int>& dims, double correction, int* mean_out);
/// An elementwise def of `shape` whose body is `fn(vars)` (vars 0 .. rank-1).
int Map(CoreLowerer& l, const std::vector<int64_t>& shape, core::DType dtype,
        const std::function<Expr(const std::vector<Expr>&)>& fn);

}  // namespace kernelevolve::operators::ir
