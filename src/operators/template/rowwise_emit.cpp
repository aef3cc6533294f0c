#include "operators/template/rowwise_emit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"
#include "operators/template/pointwise_rules.h"

namespace kernelevolve::operators::templates {

using ir::Level;
using ir::ValueKind;

int ExprEmitter::Base(int id) const {
  for (;;) {
    const ir::Value& v = region_.graph.values[static_cast<size_t>(id)];
    const bool identity_reduce = v.kind == ValueKind::kReduce &&
                                 region_.level[static_cast<size_t>(id)] == Level::kRow &&
                                 region_.level[static_cast<size_t>(v.operands[0])] == Level::kRow;
    if (v.kind != ValueKind::kView && !identity_reduce) return id;
    if (v.kind == ValueKind::kView && region_.level[static_cast<size_t>(v.operands[0])] ==
                                          Level::kSmall) {
      return id;  // a view of an input: indexed with its own shape
    }
    id = v.operands[0];
  }
}

std::string ExprEmitter::RowRef(int id, const LoopNames& names) const {
  return "row" + std::to_string(Base(id)) + (names.row_arrays ? "[ii]" : "");
}

std::string ExprEmitter::ElementIndex(const LoopNames& n) const {
  const int64_t O = region_.outer, R = region_.reduce, I = region_.inner;
  std::string e;
  if (O > 1) e = R > 1 ? fmt::format("{} * {}", n.o, R) : n.o;
  if (R > 1) e = e.empty() ? n.r : fmt::format("({} + {})", e, n.r);
  if (I > 1) {
    e = e.empty() ? n.i : fmt::format("({} * {} + {})", e, I, n.i);
  }
  return e.empty() ? "0" : "(" + e + ")";
}

std::string ExprEmitter::RowIndex(const LoopNames& n) const {
  const int64_t O = region_.outer, I = region_.inner;
  if (O > 1 && I > 1) return fmt::format("({} * {} + {})", n.o, I, n.i);
  if (O > 1) return n.o;
  if (I > 1) return n.i;
  return "0";
}

std::string ExprEmitter::Offset(const std::vector<ir::IndexTerm>& terms, bool row_space,
                                const LoopNames& n) const {
  std::vector<std::string> parts;
  for (const auto& t : terms) {
    std::string x;
    switch (t.part) {
      case ir::Part::kOuter: x = n.o; break;
      case ir::Part::kReduce:
        if (n.r_split > 0 && t.divisor % n.r_split == 0) {
          x = n.r_hi;
          if (t.divisor != n.r_split) x = fmt::format("{} / {}", x, t.divisor / n.r_split);
          if (t.modulus != 0) x = fmt::format("({}) % {}", x, t.modulus);
          if (t.stride != 1) x = fmt::format("({}) * {}", x, t.stride);
          parts.push_back("(" + x + ")");
          continue;
        }
        x = n.r;
        break;
      case ir::Part::kInner: x = n.i; break;
      case ir::Part::kLinear: x = row_space ? RowIndex(n) : ElementIndex(n); break;
    }
    if (t.divisor != 1) x = fmt::format("{} / {}", x, t.divisor);
    if (t.modulus != 0) x = fmt::format("({}) % {}", x, t.modulus);
    if (t.stride != 1) x = fmt::format("({}) * {}", x, t.stride);
    parts.push_back("(" + x + ")");
  }
  return parts.empty() ? "0" : fmt::format("{}", fmt::join(parts, " + "));
}

bool ExprEmitter::TermsUseR(const std::vector<ir::IndexTerm>& terms, const LoopNames& n) const {
  for (const auto& t : terms) {
    if (t.part == ir::Part::kLinear) return true;  // element space: o * R + r ...
    if (t.part == ir::Part::kReduce && !(n.r_split > 0 && t.divisor % n.r_split == 0)) return true;
  }
  return false;
}

void ExprEmitter::ForEachLeafTerms(
    int id, const std::vector<int64_t>& frame,
    const std::function<void(const std::vector<ir::IndexTerm>&)>& visit) const {
  if (region_.level[static_cast<size_t>(id)] != Level::kSmall) return;
  const ir::Value& v = region_.graph.values[static_cast<size_t>(id)];
  const int64_t O = region_.outer, R = region_.reduce, I = region_.inner;
  switch (v.kind) {
    case ValueKind::kInput:
    case ValueKind::kView:
      visit(ir::OffsetTerms(v.shape, frame, false, O, R, I));
      break;
    case ValueKind::kIota:
      visit(ir::OffsetTerms({}, v.shape, false, O, R, I, v.dim));
      break;
    case ValueKind::kElementwise:
      for (int op : v.operands) ForEachLeafTerms(op, frame, visit);
      break;
    case ValueKind::kReduce:
      break;
  }
}

bool ExprEmitter::DependsOnR(int id, const std::vector<int64_t>& frame_in,
                             const LoopNames& names) const {
  const ir::Value& v = region_.graph.values[static_cast<size_t>(id)];
  const Level level = region_.level[static_cast<size_t>(id)];
  if (level == Level::kTail || level == Level::kRow) return false;
  if (level == Level::kElement) return true;
  // A small value is a broadcast input (or a view of one) or an elementwise op whose
  // operands are all small (ir::AnalyzeRegion), so its leaves decide.
  bool uses_r = false;
  ForEachLeafTerms(
      id, frame_in.empty() ? v.shape : frame_in,
      [&](const std::vector<ir::IndexTerm>& terms) { uses_r = uses_r || TermsUseR(terms, names); });
  return uses_r;
}

std::string ExprEmitter::Emit(int id, bool row_space, const LoopNames& names, Block& block,
                              const std::vector<int64_t>& frame_in) {
  const ir::Value& v = region_.graph.values[static_cast<size_t>(id)];
  const Level level = region_.level[static_cast<size_t>(id)];
  if (level == Level::kTail) return "t" + std::to_string(Base(id));
  if (level == Level::kRow) return RowRef(id, names);
  const std::vector<int64_t>& frame = frame_in.empty() ? v.shape : frame_in;
  if (level == Level::kSmall && !row_space && hoist_ != nullptr && &block != hoist_ &&
      !DependsOnR(id, frame_in, names)) {
    return Emit(id, row_space, names, *hoist_, frame_in);
  }
  if (level == Level::kElement && v.kind == ValueKind::kView) {
    return Emit(v.operands[0], row_space, names, block);
  }
  if (level == Level::kElement && reads_ != nullptr) {
    if (const auto it = reads_->find(id); it != reads_->end()) {
      if (used_ != nullptr) used_->insert(id);
      return it->second;
    }
  }
  const std::string key = std::to_string(id) + (level == Level::kSmall ? ir::ShapeText(frame) : "");
  if (const auto it = block.memo.find(key); it != block.memo.end()) return it->second;
  const std::string var = fmt::format("v{}_{}", id, next_var_++);
  std::string rhs;
  const char* type = "auto";
  switch (v.kind) {
    case ValueKind::kInput:
    case ValueKind::kView: {
      const ir::Value& in = region_.ViewSource(id);
      const std::string offset =
          level == Level::kElement
              ? ElementIndex(names)
              : Offset(ir::OffsetTerms(v.shape, frame, row_space, region_.outer, region_.reduce,
                                       region_.inner),
                       row_space, names);
      rhs = fmt::format("in{}[{}]", in.abi_index, offset);
      type = in.dtype == core::DType::kInt64 ? "int64_t" : "float";
      break;
    }
    case ValueKind::kIota: {
      const std::string index = Offset(
          ir::OffsetTerms({}, v.shape, false, region_.outer, region_.reduce, region_.inner, v.dim), false, names);
      // Through int32 where the index fits: x86 has no int64 -> float vector conversion
      // before AVX-512DQ (vcvtqq2ps), so GCC leaves an AVX2 loop converting an int64
      // index scalar ("no vectype"); int32 -> float is vcvtdq2ps, in every SSE2/AVX level.
      const bool fits_int32 = v.dim >= 0 && v.dim < static_cast<int>(v.shape.size()) &&
                              v.shape[static_cast<size_t>(v.dim)] <= INT32_MAX;
      rhs = fits_int32 ? "static_cast<float>(static_cast<int32_t>(" + index + "))"
                       : "static_cast<float>(" + index + ")";
      type = "float";
      break;
    }
    case ValueKind::kElementwise:
      rhs = Elementwise(v, row_space, names, block, frame);
      break;
    case ValueKind::kReduce:
      throw core::InternalError("rowwise: reduction v" + std::to_string(id) +
                                " emitted as an element value");
  }
  block.lines.push_back(fmt::format("const {} {} = {};", type, var, rhs));
  block.memo[key] = var;
  if (computed_ != nullptr && level == Level::kElement && v.kind == ValueKind::kElementwise) {
    (*computed_)[id] = var;
  }
  return var;
}

std::string ExprEmitter::Elementwise(const ir::Value& v, bool row_space, const LoopNames& names,
                                     Block& block, const std::vector<int64_t>& frame) {
  std::map<std::string, std::string> vars = region_.Operands(
      v, frame, [&](int op, const std::vector<int64_t>& f) { return Emit(op, row_space, names, block, f); });
  if (flavor_ == MathFlavor::kPrelude && !row_space && v.node.target == "aten.div.Tensor") {
    // x / d with d fixed over the row (a row or tail value, e.g. a norm): x * (1 / d),
    // the reciprocal hoisted out of the r loop by the compiler; within 1 ulp of the
    // quotient for each factor's rounding (vectorized math only; libm keeps the division).
    for (const auto& arg : v.node.args) {
      if (arg.name != "other" || arg.ref.rfind('v', 0) != 0) continue;
      const int d = std::stoi(arg.ref.substr(1));
      const Level dl = region_.level[static_cast<size_t>(d)];
      const auto self = std::find_if(v.node.args.begin(), v.node.args.end(),
                                     [](const core::OpArg& a) { return a.name == "self"; });
      if ((dl == Level::kRow || dl == Level::kTail) && self != v.node.args.end() && self->IsRef()) {
        return fmt::format("{} * (1.0f / {})", vars.at(self->ref), vars.at(arg.ref));
      }
    }
  }
  const PointwiseRule* rule = FindPointwiseRule(v.node.target);
  if (rule == nullptr) throw core::InternalError("rowwise: no rule for " + v.node.target);
  RuleContext context(v.node, vars, flavor_);
  std::string rhs = rule->emit(context);
  if (!context.Error().empty()) {
    throw core::InternalError("rowwise: " + v.node.target + ": " + context.Error());
  }
  return rhs;
}

std::string ExprEmitter::RowDefinition(int id, const LoopNames& names, Block& block) {
  const ir::Value& v = region_.graph.values[static_cast<size_t>(id)];
  return Elementwise(v, true, names, block, v.shape);
}

}  // namespace kernelevolve::operators::templates
