#include "operators/template/triton_rowwise_kernels.h"

#include "operators/template/triton_rowwise_writer.h"

namespace kernelevolve::operators::templates {
namespace triton_rowwise {

std::string Identity(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum:
      return "0.0";
    case ReduceKind::kProd:
      return "1.0";
    case ReduceKind::kMax:
      return "float('-inf')";
    case ReduceKind::kMin:
      return "float('inf')";
  }
  return "0.0";
}

std::string Combine(ReduceKind k, const std::string& a, const std::string& b) {
  switch (k) {
    case ReduceKind::kSum:
      return a + " + " + b;
    case ReduceKind::kProd:
      return a + " * " + b;
    case ReduceKind::kMax:
      return "tl.maximum(" + a + ", " + b + ")";
    case ReduceKind::kMin:
      return "tl.minimum(" + a + ", " + b + ")";
  }
  return a;
}

/// A reduction of tile `x` along `axis` ("" keeps no dims: a scalar).
std::string ReduceText(ReduceKind k, const std::string& x, int axis, bool keep) {
  const std::string kd = keep ? ", keep_dims=True" : "";
  switch (k) {
    case ReduceKind::kSum:
      return fmt::format("tl.sum({}, axis={}{})", x, axis, kd);
    case ReduceKind::kProd:
      return fmt::format("tl.reduce({}, {}, _mul{})", x, axis, kd);
    case ReduceKind::kMax:
      return fmt::format("tl.max({}, axis={}{})", x, axis, kd);
    case ReduceKind::kMin:
      return fmt::format("tl.min({}, axis={}{})", x, axis, kd);
  }
  return x;
}

void Append(Lines& out, const Lines& in, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  for (const auto& l : in) out.push_back(pad + l);
}

std::string Join(const Lines& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

/// `row<id> = ...` for the row values ready after stage `s` (-1: before all).
Lines Writer::RowSection(int s, const TritonIndex& n) {
  TritonBlock b;
  for (const auto& v : g_.values) {
    if (!DefinedRow(v.id) || RowStage(v.id) != s) continue;
    const std::string rhs = emit_.RowDefinition(v.id, n, b);
    b.lines.push_back(fmt::format("row{} = {}", v.id, rhs));
  }
  return b.lines;
}

/// Stores of row outputs and tail buffers at row (o, i).
Lines Writer::RowOutputs(const TritonIndex& n) {
  TritonBlock b;
  const std::string q = emit_.RowIndex(n), m = emit_.RowMask(n);
  for (size_t k = 0; k < g_.outputs.size(); ++k) {
    if (L(g_.outputs[k]) != Level::kRow) continue;
    b.lines.push_back(Store(fmt::format("out{} + {}", k, q),
                            fmt::format("row{}.to({})", emit_.Base(g_.outputs[k]), OutType(k)), m));
  }
  for (int id : region_.tail_inputs) {
    const std::string v = emit_.Emit(id, true, n, b);
    b.lines.push_back(Store(fmt::format("tb{} + {}", id, q), v, m));
  }
  return b.lines;
}

/// Stores of element outputs at (o, r, i), into `b`.
void Writer::ElementOutputs(const TritonIndex& n, TritonBlock& b) {
  const std::string e = emit_.ElementIndex(n), m = emit_.ElementMask(n);
  for (size_t k = 0; k < g_.outputs.size(); ++k) {
    if (L(g_.outputs[k]) != Level::kElement) continue;
    const std::string v = emit_.Emit(g_.outputs[k], false, n, b);
    b.lines.push_back(
        Store(fmt::format("out{} + {}", k, e), fmt::format("({}).to({})", v, OutType(k)), m));
  }
}

/// One program per row block (kRows) or column block (kColumns); stages one after
/// another, each a sweep over r (or one block holding all of r: single pass).
std::string Writer::Fused() {
  const bool rows = s_.layout == TritonLayout::kRows;
  const int64_t O = region_.outer, R = region_.reduce, I = region_.inner;
  const int axis = rows ? 1 : 0;
  const std::string r_range = rows ? "tl.arange(0, BR)[None, :]" : "tl.arange(0, BR)[:, None]";
  const std::string tile = rows ? "[BQ, BR]" : "[BR, BI]";
  const std::string red_mask = rows ? "omask & rmask" : "rmask & imask";
  TritonIndex n;
  Lines body;
  body.push_back(big_ ? "pid = tl.program_id(0).to(tl.int64)" : "pid = tl.program_id(0)");
  if (rows) {
    body.push_back("o = pid * BQ + tl.arange(0, BQ)[:, None]");
    body.push_back(fmt::format("omask = o < {}", O));
    n.o_mask = "omask";
    n.i = "0";
  } else {
    body.push_back(fmt::format("o = pid // {}", (I + s_.block_i - 1) / s_.block_i));
    body.push_back(fmt::format("i = (pid % {}) * BI + tl.arange(0, BI)[None, :]",
                               (I + s_.block_i - 1) / s_.block_i));
    body.push_back(fmt::format("imask = i < {}", I));
    n.i_mask = "imask";
  }
  n.r_mask = "rmask";
  Append(body, RowSection(-1, n), 0);
  if (s_.single_pass) {
    body.push_back("r = " + r_range);
    body.push_back(fmt::format("rmask = r < {}", R));
    TritonBlock b;
    for (size_t s = 0; s < region_.stages.size(); ++s) {
      for (int id : region_.stages[s].reductions) {
        const ReduceKind k = V(id).reduce;
        const std::string v = emit_.Emit(V(id).operands[0], false, n, b);
        const std::string x =
            ToAcc(k, fmt::format("tl.where({}, {}, {})", red_mask, v, Identity(k)));
        b.lines.push_back(
            fmt::format("row{} = {}.to(tl.float32)", id, ReduceText(k, x, axis, true)));
      }
      const Lines rs = RowSection(static_cast<int>(s), n);
      b.lines.insert(b.lines.end(), rs.begin(), rs.end());
    }
    ElementOutputs(n, b);
    Append(body, b.lines, 0);
  } else {
    const std::string loop = fmt::format("for r0 in tl.range(0, {}, BR, num_stages=NS):", R);
    n.r_start = "r0";
    n.r_block = s_.block_r;
    for (size_t s = 0; s < region_.stages.size(); ++s) {
      const auto& reds = region_.stages[s].reductions;
      for (int id : reds) {
        body.push_back(fmt::format("acc{} = tl.full({}, {}, {})", id, tile, Identity(V(id).reduce),
                                   Acc(V(id).reduce)));
      }
      body.push_back(loop);
      body.push_back("    r = r0 + " + r_range);
      body.push_back(fmt::format("    rmask = r < {}", R));
      TritonBlock b;
      for (int id : reds) {
        const ReduceKind k = V(id).reduce;
        const std::string v = emit_.Emit(V(id).operands[0], false, n, b);
        const std::string x =
            ToAcc(k, fmt::format("tl.where({}, {}, {})", red_mask, v, Identity(k)));
        b.lines.push_back(fmt::format("acc{} = {}", id, Combine(k, "acc" + std::to_string(id), x)));
      }
      Append(body, b.lines, 4);
      for (int id : reds) {
        body.push_back(
            fmt::format("row{} = {}.to(tl.float32)", id,
                        ReduceText(V(id).reduce, "acc" + std::to_string(id), axis, true)));
      }
      Append(body, RowSection(static_cast<int>(s), n), 0);
    }
    if (HasElementOutputs()) {
      body.push_back(loop);
      body.push_back("    r = r0 + " + r_range);
      body.push_back(fmt::format("    rmask = r < {}", R));
      TritonBlock b;
      ElementOutputs(n, b);
      Append(body, b.lines, 4);
    }
  }
  Append(body, RowOutputs(n), 0);
  Lines out = {"@triton.jit",
               "def _rowwise(" + Params() +
                   "BQ: tl.constexpr, BR: tl.constexpr, BI: tl.constexpr, NS: tl.constexpr):"};
  Append(out, body, 4);
  return Join(out);
}
}  // namespace triton_rowwise

int64_t PowerOfTwoAtLeast(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

std::string TritonRowwiseModule(const ir::Region& region, const TritonRowwiseSettings& settings,
                                const std::string& header) {
  return triton_rowwise::Writer(region, settings).Run(header);
}

}  // namespace kernelevolve::operators::templates
