#include "operators/template/triton_rowwise_emit.h"

#include <fmt/format.h>

#include "core/error.h"
#include "operators/template/triton_expr.h"

namespace kernelevolve::operators::templates {

using ir::Level;
using ir::Part;
using ir::ValueKind;

namespace {

std::set<Part> SpaceParts(const ir::Region& region, bool row_space) {
  std::set<Part> parts;
  if (region.outer > 1) parts.insert(Part::kOuter);
  if (!row_space && region.reduce > 1) parts.insert(Part::kReduce);
  if (region.inner > 1) parts.insert(Part::kInner);
  return parts;
}

}  // namespace

std::string TritonEmitter::ElementIndex(const TritonIndex& n) const {
  const int64_t O = region_.outer, R = region_.reduce, I = region_.inner;
  std::string e;
  if (O > 1) e = R > 1 ? fmt::format("{} * {}", n.o, R) : n.o;
  if (R > 1) e = e.empty() ? n.r : fmt::format("({} + {})", e, n.r);
  if (I > 1) e = e.empty() ? n.i : fmt::format("({} * {} + {})", e, I, n.i);
  return e.empty() ? "0" : "(" + e + ")";
}

std::string TritonEmitter::ElementMask(const TritonIndex& n) const {
  return Mask(SpaceParts(region_, false), false, n);
}

std::string TritonEmitter::RowIndex(const TritonIndex& n) const {
  const int64_t O = region_.outer, I = region_.inner;
  if (O > 1 && I > 1) return fmt::format("({} * {} + {})", n.o, I, n.i);
  if (O > 1) return n.o;
  if (I > 1) return n.i;
  return "0";
}

std::string TritonEmitter::RowMask(const TritonIndex& n) const {
  return Mask(SpaceParts(region_, true), true, n);
}

std::string TritonEmitter::Mask(const std::set<Part>& parts, bool row_space,
                                const TritonIndex& n) const {
  std::vector<std::string> masks;
  for (Part p : parts) {
    if (p == Part::kLinear) {
      const std::string m = Mask(SpaceParts(region_, row_space), row_space, n);
      if (!m.empty()) masks.push_back(m);
      continue;
    }
    const std::string& m = p == Part::kOuter ? n.o_mask : p == Part::kReduce ? n.r_mask : n.i_mask;
    if (!m.empty()) masks.push_back(m);
  }
  if (masks.size() == 1) return masks[0];
  return masks.empty() ? "" : fmt::format("({})", fmt::join(masks, ") & ("));
}

std::string TritonEmitter::Offset(const std::vector<ir::IndexTerm>& terms, bool row_space,
                                  const TritonIndex& n, std::set<Part>& parts) const {
  std::vector<std::string> out;
  for (const auto& t : terms) {
    std::string x;
    bool uniform = false;  // one value per r block: no r lanes, so no r mask
    switch (t.part) {
      case Part::kOuter:
        x = n.o;
        break;
      case Part::kReduce:
        uniform = !n.r_start.empty() && n.r_block > 0 && t.divisor > 1 && t.divisor % n.r_block == 0;
        // TritonIndex::r_start, clamped so that a block past the end of r (its lanes all
        // masked off) still reads in bounds.
        x = uniform ? fmt::format("tl.minimum({}, {})", n.r_start, region_.reduce - 1) : n.r;
        break;
      case Part::kInner:
        x = n.i;
        break;
      case Part::kLinear:
        x = row_space ? RowIndex(n) : ElementIndex(n);
        break;
    }
    if (!uniform) parts.insert(t.part);
    if (t.divisor != 1) x = fmt::format("{} // {}", x, t.divisor);
    if (t.modulus != 0) x = fmt::format("({}) % {}", x, t.modulus);
    if (t.stride != 1) x = fmt::format("({}) * {}", x, t.stride);
    out.push_back("(" + x + ")");
  }
  return out.empty() ? "0" : fmt::format("{}", fmt::join(out, " + "));
}

std::string TritonEmitter::Emit(int id, bool row_space, const TritonIndex& n, TritonBlock& block,
                                const std::vector<int64_t>& frame_in) {
  const ir::Value& v = region_.graph.values[static_cast<size_t>(id)];
  const Level level = region_.level[static_cast<size_t>(id)];
  if (level == Level::kTail) return "t" + std::to_string(Base(id));
  if (level == Level::kRow) return "row" + std::to_string(Base(id));
  const std::vector<int64_t>& frame = frame_in.empty() ? v.shape : frame_in;
  if (level == Level::kElement && v.kind == ValueKind::kView)
    return Emit(v.operands[0], row_space, n, block);
  const std::string key = std::to_string(id) +
                          (level == Level::kSmall ? ir::ShapeText(frame) : "") +
                          (row_space ? "r" : "e");
  if (const auto it = block.memo.find(key); it != block.memo.end()) return it->second;
  const std::string var = fmt::format("v{}_{}", id, next_var_++);
  std::string rhs;
  switch (v.kind) {
    case ValueKind::kInput:
    case ValueKind::kView: {
      const ir::Value& in = region_.ViewSource(id);
      std::set<Part> parts;
      std::string offset;
      if (level == Level::kElement) {
        offset = ElementIndex(n);
        parts = SpaceParts(region_, false);
      } else {
        offset = Offset(ir::OffsetTerms(v.shape, frame, row_space, region_.outer, region_.reduce,
                                        region_.inner),
                        row_space, n, parts);
      }
      const std::string mask = Mask(parts, row_space, n);
      rhs = mask.empty()
                ? fmt::format("tl.load(in{} + {})", in.abi_index, offset)
                : fmt::format("tl.load(in{} + {}, mask={}, other=0)", in.abi_index, offset, mask);
      if (in.dtype == core::DType::kBool) rhs = "(" + rhs + " != 0)";
      break;
    }
    case ValueKind::kIota: {
      std::set<Part> parts;
      const std::string offset = Offset(
          ir::OffsetTerms({}, v.shape, false, region_.outer, region_.reduce, region_.inner, v.dim),
          false, n, parts);
      rhs = offset == "0" ? "0.0" : "(" + offset + ").to(tl.float32)";
      break;
    }
    case ValueKind::kElementwise:
      rhs = Elementwise(v, row_space, n, block, frame);
      break;
    case ValueKind::kReduce:
      throw core::InternalError("triton_rowwise: reduction v" + std::to_string(id) +
                                " emitted as an element value");
  }
  block.lines.push_back(fmt::format("{} = {}", var, rhs));
  block.memo[key] = var;
  return var;
}

std::string TritonEmitter::Elementwise(const ir::Value& v, bool row_space, const TritonIndex& n,
                                       TritonBlock& block, const std::vector<int64_t>& frame) {
  std::map<std::string, std::string> vars = region_.Operands(
      v, frame, [&](int op, const std::vector<int64_t>& f) { return Emit(op, row_space, n, block, f); });
  std::string error;
  std::string rhs = TritonElementwiseExpr(v.node, vars, error);
  if (!error.empty()) throw core::InternalError("triton_rowwise: " + v.node.target + ": " + error);
  return rhs;
}

std::string TritonEmitter::RowDefinition(int id, const TritonIndex& n, TritonBlock& block) {
  const ir::Value& v = region_.graph.values[static_cast<size_t>(id)];
  return Elementwise(v, true, n, block, v.shape);
}

std::string TritonEmitter::Unsupported() const {
  for (const auto& v : region_.graph.values) {
    if (v.kind != ValueKind::kElementwise) continue;
    std::map<std::string, std::string> vars;
    for (int op : v.operands) vars[ir::ValueName(op)] = "x";
    std::string error;
    TritonElementwiseExpr(v.node, vars, error);
    if (!error.empty()) return fmt::format("unsupported_op: {} ({})", v.node.target, error);
  }
  return "";
}

}  // namespace kernelevolve::operators::templates
