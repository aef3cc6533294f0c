#include "operators/codegen/triton/main_loop_triton.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <regex>
#include <unordered_map>
#include <vector>

#include "operators/codegen/prim_spelling.h"
#include "operators/codegen/triton/tf32_round.h"

namespace kernelevolve::operators::codegen {
namespace {

/// tl.dot's smallest tile edge (Triton requires M, N, K >= 16 for a dot).
constexpr int64_t kMinDotTile = 16;
/// Output channels per group below which a convolution keeps the plain reduction: a
/// 16-row tl.dot tile of 8 channels still does half useful work, one of a depthwise
/// convolution's single channel 1/16.
constexpr int64_t kMinConvChannels = 8;
/// Row tiles that sweep the column tiles together, so that the B panels they share
/// stay in L2 (the grouped ordering of Triton's matrix-multiplication tutorial).
constexpr int kGroupM = 8;
constexpr int64_t kInt32Limit = int64_t{1} << 31;

int64_t NextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

/// The block for an extent: the knob, down to the extent's next power of two, at
/// least tl.dot's 16.
int64_t BlockFor(int64_t extent, int knob) {
  return std::max<int64_t>(kMinDotTile, std::min<int64_t>(knob, NextPow2(extent)));
}

int64_t Product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t k = from; k < v.size(); ++k) p *= v[k];
  return p;
}

/// Whether a product is a plain TF32 dot: the knob asks for it and the reference runs
/// this product in TF32 (`reference_tf32`, ReferenceRunsInTf32).
bool PlainTf32(const TritonMainLoopSchedule& s, bool reference_tf32) {
  return s.input_precision == "tf32" && reference_tf32;
}

/// `, input_precision="..."` for float32 operands: "tf32" only where the reference
/// runs the product in TF32, else "tf32x3" in its place.
std::string Precision(const TritonMainLoopSchedule& s, bool reference_tf32) {
  return fmt::format(", input_precision=\"{}\"", PlainTf32(s, reference_tf32)   ? "tf32"
                                                 : s.input_precision == "tf32" ? "tf32x3"
                                                                               : s.input_precision);
}

std::string Launch(int out, const std::string& args, const std::string& grid, int64_t bm,
                   int64_t bn, int64_t bk, const TritonMainLoopSchedule& s) {
  return fmt::format(
      "    _k{}[({},)]({}, BLOCK_M={}, BLOCK_N={}, BLOCK_K={}, num_warps={}, num_stages={})\n", out,
      grid, args, bm, bn, bk, s.num_warps, s.num_stages);
}

/// The kernel's tensor parameters: the operands, what the epilogue loads, the target.
/// Each tensor once: both operands may be one buffer (attention's q @ k^T, both slices
/// of one in-projection).
std::vector<int> ParamTensors(int a, int b, int out, const TritonEpilogue* epilogue) {
  std::vector<int> tensors = {a, b};
  if (epilogue != nullptr) tensors.insert(tensors.end(), epilogue->tensors.begin(), epilogue->tensors.end());
  tensors.push_back(epilogue != nullptr ? epilogue->target : out);
  std::vector<int> once;
  for (int t : tensors) {
    if (std::find(once.begin(), once.end(), t) == once.end()) once.push_back(t);
  }
  return once;
}

/// ParamTensors as a parameter (and argument) list: "t3, t4, t7".
std::string Params(int a, int b, int out, const TritonEpilogue* epilogue) {
  std::string params;
  for (int t : ParamTensors(a, b, out, epilogue)) params += fmt::format("{}t{}", params.empty() ? "" : ", ", t);
  return params;
}

/// How a plain TF32 dot gets its operands rounded (codegen/triton/tf32_round.h): the
/// launch arguments (the parameters with the operand buffers `a`, `b` passed as rounded
/// copies) and whether the loop must round its tiles instead, which it does when the
/// epilogue reads an operand buffer too (one parameter serves both). Without `tf32`:
/// the parameters as they are, no rounding.
struct Tf32Operands {
  std::string launch_args;
  bool in_loop = false;
};

Tf32Operands RoundedOperands(int a, int b, int out, bool tf32, const TritonEpilogue* epilogue) {
  const bool shared = epilogue != nullptr && (std::count(epilogue->tensors.begin(), epilogue->tensors.end(), a) > 0 ||
                                              std::count(epilogue->tensors.begin(), epilogue->tensors.end(), b) > 0);
  Tf32Operands r{"", tf32 && shared};
  for (int t : ParamTensors(a, b, out, epilogue)) {
    const std::string name = fmt::format("t{}", t);
    const bool copy = tf32 && !shared && (t == a || t == b);
    r.launch_args += (r.launch_args.empty() ? "" : ", ") + (copy ? RoundedCopy(name) : name);
  }
  return r;
}

/// The kernel's comment, signature and tile counts of an `rows` x `columns` output.
std::string Head(const std::string& comment, int out, const std::string& params, int64_t rows,
                 int64_t columns) {
  return fmt::format(
      "# t{}: main loop, {}\n"
      "@triton.jit\n"
      "def _k{}({}, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):\n"
      "    pid = tl.program_id(0)\n"
      "    tiles_m = tl.cdiv({}, BLOCK_M)\n"
      "    tiles_n = tl.cdiv({}, BLOCK_N)\n",
      out, comment, out, params, rows, columns);
}

/// `assignments` ("    name = expr" lines, in order) without those whose name neither
/// `uses` nor a kept later line reads: the epilogue's index vars it does not need (a
/// bias reads only the column, i{rank-1}), and the batch split feeding only those.
std::string DropUnusedAssignments(const std::string& assignments, const std::string& uses) {
  std::vector<std::string> lines;
  for (size_t at = 0; at < assignments.size();) {
    const size_t end = assignments.find('\n', at);
    lines.push_back(assignments.substr(at, end == std::string::npos ? end : end - at + 1));
    at = end == std::string::npos ? assignments.size() : end + 1;
  }
  std::string live = uses, kept;
  for (size_t k = lines.size(); k-- > 0;) {
    const std::string& line = lines[k];
    const size_t eq = line.find(" = ");
    const std::string name =
        eq == std::string::npos ? "" : line.substr(line.find_first_not_of(' '), eq - line.find_first_not_of(' '));
    if (!name.empty() && !std::regex_search(live, std::regex("\\b" + name + "\\b"))) continue;
    live += line;
    kept.insert(0, line);
  }
  return kept;
}

/// The tile's store at offsets `c_off` under `mask` (both defined): the accumulator,
/// or the epilogue's value after `index_lines` define the heavy definition's index vars.
std::string Store(int out, core::DType store, const std::string& index_lines,
                  const TritonEpilogue* epilogue) {
  if (epilogue == nullptr) {
    return fmt::format("    tl.store(t{} + c_off, acc.to({}), mask=mask)\n", out,
                       SpellType(Language::kTriton, store));
  }
  std::string lines = "    zero = c_off * 0\n";
  const std::string value = epilogue->print(lines);
  const std::string store_line = fmt::format("    tl.store(t{} + c_off, ({}).to({}), mask=mask)\n",
                                        epilogue->target, value,
                                        SpellType(Language::kTriton, epilogue->dtype));
  return "    # epilogue, applied to the accumulator tile\n" +
         DropUnusedAssignments(index_lines, lines + store_line) + lines + store_line;
}

}  // namespace

bool TritonRunsContraction(const ir::Contraction& c) { return !ir::IsMatrixVector(c) && c.k > 0; }

bool TritonRunsConvolution(const ir::Convolution& c) {
  return c.CoutPerGroup() >= kMinConvChannels && c.Depth() >= kMinDotTile;
}

bool ReferenceRunsInTf32(const ir::TensorProgram& program, const ir::TensorDef& def, bool conv_tf32,
                         bool matmul_tf32, bool rnn_tf32) {
  // The products of an nn.LSTM / GRU / RNN run in cuDNN, under cuDNN's RNN flag.
  if (ir::MatchContraction(program, def)) return def.backend == "cudnn" ? rnn_tf32 : matmul_tf32;
  return conv_tf32 && ir::MatchConvolution(program, def).has_value();
}

bool TritonRunsMainLoop(const ir::TensorProgram& program, const ir::TensorDef& def) {
  if (def.kind != ir::DefKind::kReduce || !program.symbols.empty()) return false;
  if (const auto c = ir::MatchContraction(program, def)) return TritonRunsContraction(*c);
  if (const auto c = ir::MatchConvolution(program, def)) return TritonRunsConvolution(*c);
  return false;
}

std::optional<TritonKernelText> PrintMainLoopTriton(const ir::TensorProgram& program,
                                                    const ir::TensorDef& def,
                                                    const TritonMainLoopSchedule& s,
                                                    const TritonEpilogue* epilogue) {
  // TritonRunsMainLoop's tests, each matcher run once.
  if (def.kind != ir::DefKind::kReduce || !program.symbols.empty()) return std::nullopt;
  if (const auto c = ir::MatchContraction(program, def)) {
    if (!TritonRunsContraction(*c)) return std::nullopt;
    return PrintContractionTriton(*c, def.id, def.dtype, s,
                                  ReferenceRunsInTf32(program, def, s.tf32_conv, s.tf32_matmul, s.tf32_rnn), epilogue);
  }
  const auto c = ir::MatchConvolution(program, def);
  if (!c || !TritonRunsConvolution(*c)) return std::nullopt;
  return PrintConvolutionTriton(*c, def.id, def.dtype, s, s.tf32_conv, epilogue);
}

std::unordered_map<int, ir::MainLoopEpilogue> PlanTritonMainLoopEpilogues(
    const ir::KernelPlan& plan) {
  return ir::PlanMainLoopEpilogues(
      plan, [&plan](const ir::TensorDef& d) { return TritonRunsMainLoop(plan.program, d); });
}

TritonKernelText PrintContractionTriton(const ir::Contraction& c, int out, core::DType store,
                                        const TritonMainLoopSchedule& s, bool reference_tf32,
                                        const TritonEpilogue* epilogue) {
  const int64_t bm = BlockFor(c.m, s.block_m), bn = BlockFor(c.n, s.block_n),
                bk = BlockFor(c.k, s.block_k);
  const int64_t batches = Product(c.batch);
  // Batch offsets: the flat batch index split into its dims, last dim fastest.
  std::string batch_lines, a_base = std::to_string(c.a_offset), b_base = std::to_string(c.b_offset);
  if (!c.batch.empty()) batch_lines += "    rest = batch.to(tl.int64)\n";
  for (size_t d = c.batch.size(); d-- > 0;) {
    if (c.a_batch[d] == 0 && c.b_batch[d] == 0) {
      batch_lines += fmt::format("    rest = rest // {}\n", c.batch[d]);
      continue;
    }
    batch_lines += fmt::format("    b{0} = rest % {1}\n    rest = rest // {1}\n", d, c.batch[d]);
    if (c.a_batch[d] != 0) a_base += fmt::format(" + b{} * {}", d, c.a_batch[d]);
    if (c.b_batch[d] != 0) b_base += fmt::format(" + b{} * {}", d, c.b_batch[d]);
  }
  // Rows and columns past the edge wrap around (% M, % N): the operand loads need no
  // row or column mask, and the store drops them. Depth past the edge is masked to 0
  // unless BLOCK_K divides K.
  const bool k_mask = c.k % bk != 0;
  const std::string a_mask =
      k_mask ? fmt::format(", mask=rk[None, :] < {} - k0, other=0.0", c.k) : "";
  const std::string b_mask =
      k_mask ? fmt::format(", mask=rk[:, None] < {} - k0, other=0.0", c.k) : "";
  // The epilogue's index vars: the output's batch dims from the flat batch, the rows
  // and columns of the tile.
  const size_t nb = c.out_batch.size();
  std::string index_lines = nb > 0 ? "    rest = batch.to(tl.int64)\n" : "";
  for (size_t d = nb; d-- > 0;) {
    index_lines +=
        fmt::format("    i{0} = rest % {1}\n    rest = rest // {1}\n", d, c.out_batch[d]);
  }
  index_lines += fmt::format("    i{} = om[:, None]\n    i{} = on[None, :]\n", nb, nb + 1);
  const std::string params = Params(c.a, c.b, out, epilogue);
  const Tf32Operands tf32 = RoundedOperands(c.a, c.b, out, PlainTf32(s, reference_tf32), epilogue);
  const std::string store_lines = Store(out, store, index_lines, epilogue);
  TritonKernelText t;
  t.kernel =
      Head(fmt::format("matrix product {}{} x {} x {} (tl.dot tiles)",
                       c.batch.empty() ? "" : fmt::format("{} x ", batches), c.m, c.n, c.k),
           out, params, c.m, c.n) +
      fmt::format(
          "    batch = pid // (tiles_m * tiles_n)\n"
          "    tile = pid % (tiles_m * tiles_n)\n"
          "    group = tile // ({g} * tiles_n)\n"
          "    first_m = group * {g}\n"
          "    group_rows = min(tiles_m - first_m, {g})\n"
          "    pm = first_m + (tile % ({g} * tiles_n)) % group_rows\n"
          "    pn = (tile % ({g} * tiles_n)) // group_rows\n"
          "{batch_lines}"
          "    om = pm * BLOCK_M + tl.arange(0, BLOCK_M)\n"
          "    on = pn * BLOCK_N + tl.arange(0, BLOCK_N)\n"
          "    rk = tl.arange(0, BLOCK_K)\n"
          "    a_ptrs = t{a} + ({a_base}) + (om % {m}).to(tl.int64)[:, None] * {a_m} + rk[None, :] "
          "* {a_k}\n"
          "    b_ptrs = t{b} + ({b_base}) + rk[:, None] * {b_k} + (on % {n}).to(tl.int64)[None, :] "
          "* {b_n}\n"
          "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
          "    for k0 in range(0, {k}, BLOCK_K):\n"
          "        a = tl.load(a_ptrs{a_mask})\n"
          "        b = tl.load(b_ptrs{b_mask})\n"
          "        acc = tl.dot({dot_a}, {dot_b}, acc{precision})\n"
          "        a_ptrs += BLOCK_K * {a_k}\n"
          "        b_ptrs += BLOCK_K * {b_k}\n"
          "    c_off = batch.to(tl.int64) * {mn} + om.to(tl.int64)[:, None] * {n} + on[None, :]\n"
          "    mask = (om[:, None] < {m}) & (on[None, :] < {n})\n"
          "{store_lines}",
          fmt::arg("a", c.a), fmt::arg("b", c.b), fmt::arg("m", c.m), fmt::arg("n", c.n),
          fmt::arg("k", c.k), fmt::arg("mn", c.m * c.n), fmt::arg("g", kGroupM),
          fmt::arg("batch_lines", batch_lines), fmt::arg("a_base", a_base),
          fmt::arg("b_base", b_base), fmt::arg("a_m", c.a_m), fmt::arg("a_k", c.a_k),
          fmt::arg("b_k", c.b_k), fmt::arg("b_n", c.b_n), fmt::arg("a_mask", a_mask),
          fmt::arg("b_mask", b_mask), fmt::arg("precision", Precision(s, reference_tf32)),
          fmt::arg("dot_a", DotOperand("a", tf32.in_loop)), fmt::arg("dot_b", DotOperand("b", tf32.in_loop)),
          fmt::arg("store_lines", store_lines));
  const int64_t programs = batches * ((c.m + bm - 1) / bm) * ((c.n + bn - 1) / bn);
  t.launch = Launch(out, tf32.launch_args, std::to_string(programs), bm, bn, bk, s);
  return t;
}

TritonKernelText PrintConvolutionTriton(const ir::Convolution& c, int out, core::DType store,
                                        const TritonMainLoopSchedule& s, bool reference_tf32,
                                        const TritonEpilogue* epilogue) {
  const int64_t cpg_out = c.CoutPerGroup(), cpg_in = c.CinPerGroup(), depth = c.Depth();
  const int64_t positions = c.OutPositions(), columns = c.images * positions;
  const int64_t window = Product(c.kernel), in_volume = Product(c.in);
  const int64_t bm = BlockFor(cpg_out, s.block_m), bn = BlockFor(columns, s.block_n),
                bk = BlockFor(depth, s.block_k);
  const size_t dims = c.in.size();
  // Output position -> window origin per spatial dim, [BLOCK_N] (outside the loop).
  std::string origin, window_lines, bounds, offset;
  for (size_t d = 0; d < dims; ++d) {
    origin += fmt::format("    h{0} = (pos // {1}) % {2} * {3} - {4}\n", d, Product(c.out, d + 1),
                          c.out[d], c.stride[d], c.pad[d]);
    window_lines +=
        fmt::format("        i{0} = h{0}[None, :] + ((wk // {1}) % {2})[:, None] * {3}\n", d,
                    Product(c.kernel, d + 1), c.kernel[d], c.dilation[d]);
    if (c.pad[d] != 0 ||
        c.stride[d] * (c.out[d] - 1) + c.dilation[d] * (c.kernel[d] - 1) >= c.in[d]) {
      bounds += fmt::format(" & (i{0} >= 0) & (i{0} < {1})", d, c.in[d]);
    }
    offset += fmt::format(" + i{} * {}", d, Product(c.in, d + 1));
  }
  // Index math inside the loop is int32 (int64 division and multiplication cost
  // several instructions each on the GPU) unless one image's group of input channels,
  // or the column count, reaches 2^31 elements; image offsets are int64 either way.
  const bool wide = cpg_in * in_volume >= kInt32Limit || columns >= kInt32Limit;
  const bool k_mask = depth % bk != 0;
  // The epilogue's index vars: image (when batched), channel, spatial position.
  const int first = c.batched ? 1 : 0;
  std::string index_lines = c.batched ? "    i0 = img.to(tl.int64)[None, :]\n" : "";
  index_lines += fmt::format("    i{} = (g * {} + om)[:, None]\n", first, cpg_out);
  for (size_t d = 0; d < dims; ++d) {
    index_lines += fmt::format("    i{} = ((pos // {}) % {})[None, :]\n",
                               first + 1 + static_cast<int>(d), Product(c.out, d + 1), c.out[d]);
  }
  const std::string params = Params(c.x, c.w, out, epilogue);
  const Tf32Operands tf32 = RoundedOperands(c.x, c.w, out, PlainTf32(s, reference_tf32), epilogue);
  const std::string store_lines = Store(out, store, index_lines, epilogue);
  TritonKernelText t;
  t.kernel =
      Head(fmt::format("convolution as implicit GEMM, {} group(s) of {} x {} x {}", c.groups,
                       cpg_out, columns, depth),
           out, params, cpg_out, columns) +
      fmt::format(
          "    g = pid // (tiles_m * tiles_n)\n"
          "    tile = pid % (tiles_m * tiles_n)\n"
          "    pm = tile % tiles_m\n"
          "    pn = tile // tiles_m\n"
          "    om = pm * BLOCK_M + tl.arange(0, BLOCK_M)\n"
          "    on = pn * BLOCK_N + tl.arange(0, BLOCK_N){wide}\n"
          "    col_ok = on < {columns}\n"
          "    img = on // {positions}\n"
          "    pos = on % {positions}\n"
          "{origin}"
          "    x_cols = t{x} + (img.to(tl.int64) * {cin} + g * {cpg_in}) * {in_volume}\n"
          "    w_rows = t{w} + (g * {cpg_out} + om % {cpg_out}).to(tl.int64) * {depth}\n"
          "    rk = tl.arange(0, BLOCK_K)\n"
          "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
          "    for k0 in range(0, {depth}, BLOCK_K):\n"
          "        kk = k0 + rk\n"
          "        wk = kk % {window}\n"
          "{window_lines}"
          "        x_ok = col_ok[None, :]{kx}{bounds}\n"
          "        x = tl.load(x_cols[None, :] + {channel}[:, None] * {in_volume}{offset}, "
          "mask=x_ok, other=0.0)\n"
          "        w = tl.load(w_rows[:, None] + kk[None, :]{w_mask})\n"
          "        acc = tl.dot({dot_w}, {dot_x}, acc{precision})\n"
          "    c_off = (img.to(tl.int64)[None, :] * {cout} + g * {cpg_out} + om[:, None]) * "
          "{positions} + "
          "pos[None, :]\n"
          "    mask = (om[:, None] < {cpg_out}) & col_ok[None, :]\n"
          "{store_lines}",
          fmt::arg("x", c.x), fmt::arg("w", c.w), fmt::arg("cpg_out", cpg_out),
          fmt::arg("cpg_in", cpg_in), fmt::arg("cin", c.cin), fmt::arg("cout", c.cout),
          fmt::arg("columns", columns), fmt::arg("depth", depth), fmt::arg("positions", positions),
          fmt::arg("in_volume", in_volume), fmt::arg("window", window), fmt::arg("origin", origin),
          fmt::arg("window_lines", window_lines), fmt::arg("bounds", bounds),
          fmt::arg("offset", offset), fmt::arg("wide", wide ? ".to(tl.int64)" : ""),
          fmt::arg("channel", fmt::format("(kk // {}){}", window, wide ? ".to(tl.int64)" : "")),
          fmt::arg("kx", k_mask ? fmt::format(" & (kk < {})[:, None]", depth) : ""),
          fmt::arg("w_mask",
                   k_mask ? fmt::format(", mask=(kk < {})[None, :], other=0.0", depth) : ""),
          fmt::arg("precision", Precision(s, reference_tf32)), fmt::arg("store_lines", store_lines),
          fmt::arg("dot_w", DotOperand("w", tf32.in_loop)), fmt::arg("dot_x", DotOperand("x", tf32.in_loop)));
  const int64_t programs = c.groups * ((cpg_out + bm - 1) / bm) * ((columns + bn - 1) / bn);
  t.launch = Launch(out, tf32.launch_args, std::to_string(programs), bm, bn, bk, s);
  return t;
}

}  // namespace kernelevolve::operators::codegen
