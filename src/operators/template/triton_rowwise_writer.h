// Internal to the triton_rowwise template (triton_rowwise_kernels.cpp,
// triton_rowwise_split.cpp): the writer of one candidate module.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "operators/template/triton_rowwise_emit.h"
#include "operators/template/triton_rowwise_kernels.h"

namespace kernelevolve::operators::templates::triton_rowwise {

using ir::Level;
using ir::ReduceKind;
using ir::ValueKind;
using Lines = std::vector<std::string>;

/// The identity of a reduction as a Python literal ("0.0", "float('-inf')", ...).
std::string Identity(ReduceKind k);
/// `a` combined with `b` by the reduction (a + b, tl.maximum(a, b), ...).
std::string Combine(ReduceKind k, const std::string& a, const std::string& b);
/// A reduction of tile `x` along `axis` (`keep`: keep_dims=True; prod uses _mul).
std::string ReduceText(ReduceKind k, const std::string& x, int axis, bool keep);
/// Appends `in` to `out`, each line indented by `indent` spaces.
void Append(Lines& out, const Lines& in, int indent);
/// The lines joined, each ending in a newline.
std::string Join(const Lines& lines);

/// Writes the kernels and the launcher of one region and setting.
class Writer {
 public:
  Writer(const ir::Region& region, const TritonRowwiseSettings& s)
      : g_(region.graph), region_(region), s_(s), emit_(region) {
    for (const auto& v : g_.values) {
      if (v.kind == ValueKind::kInput && !used_inputs_.count(v.abi_index))
        used_inputs_[v.abi_index] = v.dtype;
      if (DefinedRow(v.id) || StageRow(v.id)) slot_[v.id] = static_cast<int>(slot_.size());
    }
    for (const auto& st : region.stages) max_stage_ = std::max(max_stage_, st.reductions.size());
    big_ = region.outer * region.reduce * region.inner >= (int64_t{1} << 31);
    rows_ = region.outer * region.inner;
  }

  std::string Run(const std::string& header) {
    std::string out = header;
    out += "import torch\nimport triton\nimport triton.language as tl\n\n\n";
    out += "@triton.jit\ndef _mul(a, b):\n    return a * b\n\n\n";
    if (s_.layout == TritonLayout::kSplit) {
      for (size_t s = 0; s < region_.stages.size(); ++s)
        out += SplitStage(static_cast<int>(s)) + "\n\n";
      for (size_t s = 0; s < region_.stages.size(); ++s)
        out += SplitCombine(static_cast<int>(s)) + "\n\n";
      if (HasElementOutputs()) out += SplitElements() + "\n\n";
    } else {
      out += Fused() + "\n\n";
    }
    if (!region_.tail_inputs.empty()) out += Tail() + "\n\n";
    return out + Entry();
  }

 private:
  /// `row<id> = ...` for the row values ready after stage `s` (-1: before all).
  Lines RowSection(int s, const TritonIndex& n);
  /// Stores of row outputs and tail buffers at row (o, i).
  Lines RowOutputs(const TritonIndex& n);
  /// Stores of element outputs at (o, r, i), into `b`.
  void ElementOutputs(const TritonIndex& n, TritonBlock& b);
  /// One program per row block (kRows) or column block (kColumns); stages one after
  /// another, each a sweep over r (or one block holding all of r: single pass).
  std::string Fused();
  /// kSplit: the (o, p) program's index names and the row values it loads.
  TritonIndex SplitIndex() const;
  Lines SplitPrologue(int before_stage, bool with_p);
  std::string SplitLoop() const;
  Lines SplitRange() const;
  std::string SplitStage(int s);
  std::string SplitCombine(int s);
  std::string SplitElements();
  /// One program: the tail reductions over the buffered rows in a fixed order, then
  /// the scalar ops and the scalar outputs.
  std::string Tail();
  std::string Entry() const;

  const ir::Value& V(int id) const { return region_.ValueOf(id); }
  Level L(int id) const { return region_.LevelOf(id); }
  bool DefinedRow(int id) const {
    return L(id) == Level::kRow && V(id).kind == ValueKind::kElementwise;
  }
  bool StageRow(int id) const {
    return L(id) == Level::kRow && V(id).kind == ValueKind::kReduce && emit_.Base(id) == id;
  }
  int RowStage(int id) const { return region_.row_stage[static_cast<size_t>(id)]; }
  bool HasElementOutputs() const {
    return std::any_of(g_.outputs.begin(), g_.outputs.end(),
                       [&](int id) { return L(id) == Level::kElement; });
  }
  std::string Acc(ReduceKind k) const {
    return (k == ReduceKind::kSum || k == ReduceKind::kProd) && s_.acc64 ? "tl.float64"
                                                                         : "tl.float32";
  }
  std::string ToAcc(ReduceKind k, const std::string& x) const {
    return Acc(k) == "tl.float64" ? "(" + x + ").to(tl.float64)" : x;
  }
  std::string OutType(size_t k) const {
    return g_.output_dtypes[k] == core::DType::kInt64 ? "tl.int64" : "tl.float32";
  }
  std::string PartType() const { return s_.acc64 ? "torch.float64" : "torch.float32"; }
  static std::string Store(const std::string& ptr, const std::string& value,
                           const std::string& mask) {
    return mask.empty() ? fmt::format("tl.store({}, {})", ptr, value)
                        : fmt::format("tl.store({}, {}, mask={})", ptr, value, mask);
  }

  /// Pointer parameters shared by every kernel.
  std::string Params() const {
    std::string p;
    for (const auto& [k, dt] : used_inputs_) p += fmt::format("in{}, ", k);
    for (size_t k = 0; k < g_.outputs.size(); ++k) p += fmt::format("out{}, ", k);
    for (int id : region_.tail_inputs) p += fmt::format("tb{}, ", id);
    if (s_.layout == TritonLayout::kSplit) p += "rowbuf, part, ";
    return p;
  }
  std::string Args() const {
    std::string a;
    for (const auto& [k, dt] : used_inputs_) a += fmt::format("inputs[{}], ", k);
    for (size_t k = 0; k < g_.outputs.size(); ++k) a += fmt::format("outputs[{}], ", k);
    for (int id : region_.tail_inputs) a += fmt::format("tb{}, ", id);
    if (s_.layout == TritonLayout::kSplit) a += "rowbuf, part, ";
    return a;
  }

  const ir::Graph& g_;
  const ir::Region& region_;
  const TritonRowwiseSettings& s_;
  TritonEmitter emit_;
  std::map<int, core::DType> used_inputs_;  // abi index -> dtype
  std::map<int, int> slot_;                 // row value id -> rowbuf slot (kSplit)
  size_t max_stage_ = 0;
  bool big_ = false;
  int64_t rows_ = 1;
};

}  // namespace kernelevolve::operators::templates::triton_rowwise
