// Internal to the lowering (lower_graph.cpp, lower_compound.cpp): appends IR values
// and records the first problem instead of throwing.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "operators/ir/loop_ir.h"

namespace kernelevolve::operators::ir {

/// An argument of an elementwise IR op: a tensor (id >= 0) or a constant.
struct IrArg {
  std::string name;
  int id = -1;
  nlohmann::json value;
};
inline IrArg T(const std::string& name, int id) { return {name, id, nullptr}; }
inline IrArg C(const std::string& name, nlohmann::json value) { return {name, -1, std::move(value)}; }

class Builder {
 public:
  /// Sets the origin text stamped on values created from now on.
  void SetOrigin(std::string origin) { origin_ = std::move(origin); }
  int Input(const core::OpNode& node);
  /// An elementwise op; shape = broadcast of the tensor operands (right-aligned).
  int Ew(const std::string& target, std::vector<IrArg> args,
         core::DType dtype = core::DType::kFloat32);
  int Unary(const std::string& target, int a) { return Ew(target, {T("self", a)}); }
  int Binary(const std::string& target, int a, int b) {
    return Ew(target, {T("self", a), T("other", b)});
  }
  int Scalar(const std::string& target, int a, double k) {
    return Ew(target, {T("self", a), C("other", k)});
  }
  /// where(cond, a, b) with b a number.
  int WhereNum(int cond, int a, double b) {
    return Ew("aten.where.self", {T("condition", cond), T("self", a), C("other", b)});
  }
  int View(int id, std::vector<int64_t> shape);
  int Iota(std::vector<int64_t> shape, int dim);
  /// Reduction over `dims` (normalized, sorted); keepdim shape, squeezed by a view
  /// when !keepdim.
  int Reduce(ReduceKind kind, int id, std::vector<int> dims, bool keepdim);
  /// sum / count over dims (count = product of the reduced sizes).
  int Mean(int id, const std::vector<int>& dims, bool keepdim);
  /// Biased or corrected variance: sum((x - mean)^2) / (n - correction), keepdim.
  int Variance(int id, const std::vector<int>& dims, double correction, int* mean_out);

  const Value& At(int id) const { return graph_.values.at(static_cast<size_t>(id)); }
  Graph& Out() { return graph_; }
  void Fail(const std::string& why) {
    if (error_.empty()) error_ = why;
  }
  const std::string& Error() const { return error_; }

 private:
  int Append(Value v);
  Graph graph_;
  std::string origin_;
  std::string error_;
};

/// Normalizes a dim list against `rank` (negative dims wrap; null or empty: all dims).
/// Returns false on an out-of-range dim.
bool NormalizeDims(const nlohmann::json& dims, int64_t rank, std::vector<int>& out);

/// Lowers one compound call (layer/group/batch norm, softmax, norms, var/std,
/// losses, nll_loss, max.dim, argmax, ...). `in` holds the lowered tensor
/// arguments by name (-1 for None); returns the node's outputs, or false when the
/// target is not compound. Problems go to b.Fail.
bool LowerCompound(Builder& b, const core::OpNode& node, const std::map<std::string, int>& in,
                   std::vector<int>& outputs);

/// True when LowerCompound handles `target` (out-of-place spelling).
bool IsCompoundTarget(const std::string& target);

}  // namespace kernelevolve::operators::ir
