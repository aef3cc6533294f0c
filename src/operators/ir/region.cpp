#include "operators/ir/region.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace kernelevolve::operators::ir {
namespace {

struct Ori {
  int64_t o = 1, r = 1, i = 1;
  bool operator==(const Ori& x) const { return o == x.o && r == x.r && i == x.i; }
};

/// [O, R, I] of reducing `dims` of `shape`, or nullopt when the reduced dims are not
/// contiguous once size-1 dims are dropped (or reduce nothing).
std::optional<Ori> RegionOf(const std::vector<int64_t>& shape, const std::vector<int>& dims) {
  std::vector<bool> red(shape.size(), false);
  for (int d : dims) red[static_cast<size_t>(d)] = true;
  int first = -1, last = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (red[d] && shape[d] != 1) {
      if (first < 0) first = static_cast<int>(d);
      last = static_cast<int>(d);
    }
  }
  if (first < 0) return std::nullopt;
  Ori ori;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int di = static_cast<int>(d);
    if (di < first) ori.o *= shape[d];
    if (di > last) ori.i *= shape[d];
    if (di >= first && di <= last) {
      if (!red[d] && shape[d] != 1) return std::nullopt;
      ori.r *= shape[d];
    }
  }
  return ori;
}

bool IsFull(const std::vector<int64_t>& shape, const std::vector<int>& dims) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1 && std::find(dims.begin(), dims.end(), static_cast<int>(d)) == dims.end()) {
      return false;
    }
  }
  return true;
}

int OperandId(const std::string& ref) { return std::stoi(ref.substr(1)); }

/// Copies `g`, splitting every reduction of a full-size value over all its dims into
/// a row reduction over the region's dims followed by a reduction of the rows.
std::optional<Graph> SplitFull(const Graph& g, int64_t n, const Ori& region, std::string& why) {
  Graph out;
  std::vector<int> remap(g.values.size(), -1);
  auto push = [&](Value v) {
    v.id = static_cast<int>(out.values.size());
    out.values.push_back(std::move(v));
    return out.values.back().id;
  };
  for (const Value& src : g.values) {
    Value v = src;
    for (int& op : v.operands) op = remap[static_cast<size_t>(op)];
    for (auto& a : v.node.args) {
      if (a.IsRef()) a.ref = ValueName(remap[static_cast<size_t>(OperandId(a.ref))]);
    }
    const auto& opshape = v.operands.empty() ? v.shape : out.values[v.operands[0]].shape;
    if (v.kind == ValueKind::kReduce && Numel(opshape) == n && IsFull(opshape, v.dims)) {
      // dims of the operand covering the region's R part
      Value row = v;
      row.dims.clear();
      row.shape = opshape;
      int64_t inner = 1;
      for (int d = static_cast<int>(opshape.size()) - 1; d >= 0; --d) {
        const int64_t lo = inner, hi = inner * opshape[d];
        inner = hi;
        if (opshape[d] == 1) continue;
        if (lo >= region.i && hi <= region.i * region.r) {
          row.dims.insert(row.dims.begin(), d);
          row.shape[d] = 1;
        } else if (!(hi <= region.i || lo >= region.i * region.r)) {
          why = "unsupported_graph: a full reduction of shape " + ShapeText(opshape) +
                " does not split along the region's reduced dims";
          return std::nullopt;
        }
      }
      const int row_id = push(row);
      v.operands = {row_id};
      std::vector<int> all;
      for (size_t d = 0; d < opshape.size(); ++d) all.push_back(static_cast<int>(d));
      v.dims = all;
    }
    remap[static_cast<size_t>(src.id)] = push(std::move(v));
  }
  for (int o : g.outputs) out.outputs.push_back(remap[static_cast<size_t>(o)]);
  out.output_dtypes = g.output_dtypes;
  return out;
}

RegionResult Fail(std::string why) { return {std::nullopt, std::move(why)}; }

bool RowIdentity(const std::vector<IndexTerm>& terms, int64_t outer, int64_t inner) {
  std::vector<IndexTerm> want;
  if (outer > 1) want.push_back({Part::kOuter, 1, 0, inner});
  if (inner > 1) want.push_back({Part::kInner, 1, 0, 1});
  if (terms.size() != want.size()) return false;
  for (const auto& t : want) {
    const bool found = std::any_of(terms.begin(), terms.end(), [&](const IndexTerm& x) {
      return x.part == t.part && x.divisor == 1 && x.modulus == 0 && x.stride == t.stride;
    });
    if (!found) return false;
  }
  return true;
}

}  // namespace

std::vector<IndexTerm> OffsetTerms(const std::vector<int64_t>& operand,
                                   const std::vector<int64_t>& frame, bool row_space,
                                   int64_t outer, int64_t reduce, int64_t inner, int iota_dim) {
  struct Span {
    Part part;
    int64_t start, end;
  };
  const int64_t r = row_space ? 1 : reduce;
  const std::vector<Span> parts = {{Part::kInner, 1, inner},
                                   {Part::kReduce, inner, inner * r},
                                   {Part::kOuter, inner * r, inner * r * outer}};
  const int64_t total = inner * r * outer;
  struct Dim {
    Part part;
    int64_t lo, size, stride, extent;
  };
  std::vector<Dim> dims;  // innermost first
  const size_t fr = frame.size(), opr = operand.size();
  int64_t op_stride = 1, lin = 1;
  for (size_t k = 0; k < fr; ++k) {
    const size_t d = fr - 1 - k;
    int64_t stride = 0;
    if (iota_dim >= 0) {
      stride = static_cast<int>(d) == iota_dim ? 1 : 0;
    } else if (k < opr) {
      stride = operand[opr - 1 - k] == 1 ? 0 : op_stride;
      op_stride *= operand[opr - 1 - k];
    }
    const int64_t size = frame[d], lo = lin;
    lin *= size;
    if (size == 1) continue;
    Dim dim{Part::kLinear, lo, size, stride, total};
    for (const auto& p : parts) {
      if (p.end > p.start && lo >= p.start && lo * size <= p.end) {
        dim = {p.part, lo / p.start, size, stride, p.end / p.start};
      }
    }
    if (!dims.empty()) {
      Dim& prev = dims.back();
      if (prev.part == dim.part && dim.stride == prev.stride * prev.size &&
          dim.lo == prev.lo * prev.size) {
        prev.size *= dim.size;
        continue;
      }
    }
    dims.push_back(dim);
  }
  std::vector<IndexTerm> terms;
  for (const Dim& d : dims) {
    if (d.stride == 0) continue;
    terms.push_back({d.part, d.lo, d.lo * d.size == d.extent ? 0 : d.size, d.stride});
  }
  return terms;
}

RegionResult AnalyzeRegion(const Graph& input) {
  int64_t n = 1;
  for (const Value& v : input.values) n = std::max(n, Numel(v.shape));
  // Pass 1: the region from the reductions of full-size values.
  std::optional<Ori> region;
  bool any_full = false;
  for (const Value& v : input.values) {
    if (v.kind != ValueKind::kReduce) continue;
    const auto& shape = input.values[v.operands[0]].shape;
    if (Numel(shape) != n) continue;
    if (IsFull(shape, v.dims)) {
      any_full = true;
      continue;
    }
    const auto ori = RegionOf(shape, v.dims);
    if (!ori) {
      return Fail(fmt::format("unsupported_graph: reduction over dims [{}] of {} is not over "
                              "contiguous dims",
                              fmt::join(v.dims, ", "), ShapeText(shape)));
    }
    if (region && !(*region == *ori)) {
      return Fail(fmt::format("unsupported_graph: reductions over different dim sets "
                              "([{}, {}, {}] and [{}, {}, {}] as [outer, reduced, inner])",
                              region->o, region->r, region->i, ori->o, ori->r, ori->i));
    }
    region = ori;
  }
  Region out;
  if (region) {
    std::string why;
    auto split = SplitFull(input, n, *region, why);
    if (!split) return Fail(why);
    out.graph = std::move(*split);
  } else {
    out.graph = input;
    if (any_full) {
      region = Ori{1, n, 1};
    } else {  // a map: rows over trailing dims of about 1024+ elements
      region = Ori{n, 1, 1};
      const Value& o = out.graph.values[out.graph.outputs[0]];
      if (Numel(o.shape) == n) {
        int64_t r = 1;
        for (auto d = o.shape.rbegin(); d != o.shape.rend() && r < 1024; ++d) r *= *d;
        region = Ori{n / r, r, 1};
      }
    }
  }
  out.outer = region->o;
  out.reduce = region->r;
  out.inner = region->i;
  const int64_t rows = out.outer * out.inner;
  const Graph& g = out.graph;
  out.level.assign(g.values.size(), Level::kSmall);
  out.row_stage.assign(g.values.size(), -1);
  std::vector<std::set<int>> deps(g.values.size());  // row reductions a value depends on
  std::vector<int> reductions;
  for (const Value& v : g.values) {
    Level& level = out.level[static_cast<size_t>(v.id)];
    for (int op : v.operands) deps[v.id].insert(deps[op].begin(), deps[op].end());
    const std::string where = v.origin.empty() ? "" : " (from " + v.origin.substr(0, 60) + ")";
    switch (v.kind) {
      case ValueKind::kInput:
        level = Numel(v.shape) == n ? Level::kElement : Level::kSmall;
        break;
      case ValueKind::kIota:
        if (Numel(v.shape) != n) return Fail("unsupported_graph: an index along a dim of a "
                                             "value smaller than the kernel's shape" + where);
        if (v.shape[static_cast<size_t>(v.dim)] > (int64_t{1} << 24)) {
          return Fail("unsupported_graph: index dim longer than 2^24 (float indices)" + where);
        }
        level = Level::kElement;
        break;
      case ValueKind::kView: {
        const Value& op = g.values[v.operands[0]];
        level = out.level[op.id];
        if (level == Level::kSmall && op.kind != ValueKind::kInput && op.kind != ValueKind::kView) {
          return Fail("unsupported_graph: view of a computed broadcast value" + where);
        }
        break;
      }
      case ValueKind::kElementwise: {
        bool tail = false;
        for (int op : v.operands) tail = tail || out.level[op] == Level::kTail;
        level = Level::kSmall;
        for (int op : v.operands) {
          const Level l = out.level[op];
          if (tail && l != Level::kTail && Numel(g.values[op].shape) != 1) {
            return Fail("unsupported_graph: an op mixes a reduced scalar with a tensor" + where);
          }
          if (!tail && (l == Level::kElement || (l == Level::kRow && level == Level::kSmall))) {
            level = l;
          }
        }
        if (tail) level = Level::kTail;
        if (level == Level::kSmall && Numel(v.shape) == n && n > 1) level = Level::kElement;
        const int64_t want = level == Level::kElement ? n : level == Level::kRow ? rows : -1;
        if (want >= 0 && Numel(v.shape) != want) {
          return Fail(fmt::format("unsupported_graph: {} value of shape {} does not fill the "
                                  "[{}, {}, {}] region{}",
                                  level == Level::kRow ? "row" : "element", ShapeText(v.shape),
                                  out.outer, out.reduce, out.inner, where));
        }
        for (int op : v.operands) {
          if (out.level[op] != Level::kRow || level == Level::kTail) continue;
          const auto terms = OffsetTerms(g.values[op].shape, v.shape, level == Level::kRow,
                                         out.outer, out.reduce, out.inner);
          if (!RowIdentity(terms, out.outer, out.inner)) {
            return Fail("unsupported_graph: a reduced value of shape " +
                        ShapeText(g.values[op].shape) + " broadcasts against " +
                        ShapeText(v.shape) + " other than along its reduced dims" + where);
          }
        }
        break;
      }
      case ValueKind::kReduce: {
        const Value& op = g.values[v.operands[0]];
        const Level l = out.level[op.id];
        if (l == Level::kElement) {
          const auto ori = RegionOf(op.shape, v.dims);
          if (!ori || !(*ori == *region)) {
            return Fail("unsupported_graph: reduction outside the kernel's region" + where);
          }
          level = Level::kRow;
          reductions.push_back(v.id);
          deps[v.id].insert(v.id);
        } else if ((l == Level::kRow || (l == Level::kSmall && Numel(op.shape) == rows)) &&
                   IsFull(op.shape, v.dims) && !out.SplitR()) {
          level = Level::kTail;
          out.tail_inputs.push_back(op.id);
        } else if (l == Level::kRow && IsFull(op.shape, v.dims) && out.SplitR()) {
          // reducing the single row again changes nothing but the shape
          level = Level::kRow;
        } else {
          return Fail("unsupported_graph: a reduction of an already reduced or broadcast "
                      "value over part of its dims" + where);
        }
        break;
      }
    }
  }
  // Stages: consecutive row reductions that do not depend on each other.
  for (int id : reductions) {
    bool fits = !out.stages.empty();
    if (fits) {
      for (int other : out.stages.back().reductions) {
        const auto& operand_deps = deps[g.values[id].operands[0]];
        if (operand_deps.count(other) > 0) fits = false;
      }
    }
    if (!fits) out.stages.push_back({});
    out.stages.back().reductions.push_back(id);
  }
  std::map<int, int> stage_of;
  for (size_t s = 0; s < out.stages.size(); ++s) {
    for (int id : out.stages[s].reductions) stage_of[id] = static_cast<int>(s);
  }
  for (const Value& v : g.values) {
    for (int d : deps[v.id]) out.row_stage[v.id] = std::max(out.row_stage[v.id], stage_of[d]);
  }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const Value& v = g.values[g.outputs[k]];
    const Level l = out.level[v.id];
    if (l == Level::kSmall) {
      return Fail("unsupported_graph: output " + std::to_string(k) +
                  " is computed from broadcast inputs only");
    }
    if (l == Level::kTail && Numel(v.shape) != 1) {
      return Fail("unsupported_graph: output " + std::to_string(k) + " is not a scalar");
    }
  }
  return {std::move(out), ""};
}

}  // namespace kernelevolve::operators::ir
