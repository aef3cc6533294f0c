// Core ATen lowering rules for the heavy ops: the matmul family, convolution (any
// rank, transposed, grouped, dilated, strided, padded) and pooling (max with
// indices, average, adaptive). Each is a reduction whose body computes the operand
// indices, so it runs as a plain loop nest; the heavy families of the next issue
// replace these loops with tiled main loops, the IR stays the same.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using V = std::vector<Expr>;
using Outs = std::vector<int>;

/// sum_k a[..., i, k] * b[..., k, j] with `batch` leading dims (0: mm, 1: bmm).
int MatMul(CoreLowerer& l, int a, int b, size_t batch, DType dt) {
  const auto as = l.Def(a).shape;
  const auto bs = l.Def(b).shape;
  const int64_t K = as.back();
  std::vector<int64_t> shape(as.begin(), as.begin() + static_cast<long>(batch));
  shape.push_back(as[batch]);
  shape.push_back(bs[batch + 1]);
  const int r = static_cast<int>(shape.size());
  V ai = IndexVars(batch), bi = IndexVars(batch);
  ai.push_back(Var(static_cast<int>(batch)));
  ai.push_back(Var(r));
  bi.push_back(Var(r));
  bi.push_back(Var(static_cast<int>(batch) + 1));
  const Expr term = Op(Prim::kMul, {Cast(l.Read(a, ai), dt), Cast(l.Read(b, bi), dt)});
  return l.Reduce(shape, dt, {K}, ReduceOp::kSum, term);
}

Outs Mm(CoreLowerer& l, const OpNode& n) {
  const int a = l.Tensor(n, "self"), b = l.Tensor(n, n.Arg("vec") ? "vec" : "mat2");
  if (a < 0 || b < 0) return {};
  if (l.Def(b).shape.size() == 1) {  // mv
    const int64_t K = l.Def(a).shape[1];
    return {l.Reduce(n.shape, n.dtype, {K}, ReduceOp::kSum,
                     Op(Prim::kMul, {l.Read(a, {Var(0), Var(1)}), l.Read(b, {Var(1)})}))};
  }
  return {MatMul(l, a, b, l.Def(a).shape.size() - 2, n.dtype)};
}

Outs Dot(CoreLowerer& l, const OpNode& n) {
  const int a = l.Tensor(n, "self"), b = l.Tensor(n, "tensor");
  if (a < 0 || b < 0) return {};
  return {l.Reduce({}, n.dtype, {l.Def(a).shape[0]}, ReduceOp::kSum,
                   Op(Prim::kMul, {l.Read(a, {Var(0)}), l.Read(b, {Var(0)})}))};
}

/// addmm / baddbmm / addmv: beta * self + alpha * (mat1 @ mat2).
Outs AddMm(CoreLowerer& l, const OpNode& n) {
  const bool mv = n.Arg("vec") != nullptr;
  const int a = l.Tensor(n, mv ? "mat" : (n.Arg("mat1") ? "mat1" : "batch1"));
  const int b = l.Tensor(n, mv ? "vec" : (n.Arg("mat2") ? "mat2" : "batch2"));
  if (a < 0 || b < 0) return {};
  int prod;
  if (mv) {
    prod = l.Reduce(n.shape, n.dtype, {l.Def(a).shape[1]}, ReduceOp::kSum,
                    Op(Prim::kMul, {l.Read(a, {Var(0), Var(1)}), l.Read(b, {Var(1)})}));
  } else {
    prod = MatMul(l, a, b, l.Def(a).shape.size() - 2, n.dtype);
  }
  const DType dt = n.dtype;
  const double beta = l.Number(n, "beta", 1), alpha = l.Number(n, "alpha", 1);
  Expr p = l.Read(prod, IndexVars(n.shape.size()));
  if (alpha != 1) p = Op(Prim::kMul, {p, Constant(alpha, dt)});
  if (beta != 0) {
    Expr c = l.Operand(n, "self", n.shape, dt);
    if (beta != 1) c = Op(Prim::kMul, {c, Constant(beta, dt)});
    p = Op(Prim::kAdd, {c, p});
  }
  return {l.Compute(n.shape, dt, p)};
}

/// _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal,
/// attn_mask, scale) -> (output, logsumexp): what F.scaled_dot_product_attention captures
/// to on the CPU (core_aten.py keeps it whole). softmax(scale q k^T + mask) v as the
/// scores (a batched product, the tiled main loop's on the CPU), the row max, the sum of
/// exponentials and the weighted sum of v; causal masks j > i; a row with every key
/// masked gives 0 (as PyTorch); logsumexp = max + log(sum). The CPU's attention family
/// (families/attention) fuses a graph that is this node alone.
Outs Attention(CoreLowerer& l, const OpNode& n) {
  const int q = l.Tensor(n, "query"), k = l.Tensor(n, "key"), v = l.Tensor(n, "value");
  if (q < 0 || k < 0 || v < 0) return {};
  if (l.Number(n, "dropout_p", 0) != 0) {
    l.Unsupported(n, "dropout_p > 0 draws random numbers");
    return {};
  }
  const auto qs = l.Def(q).shape, ks = l.Def(k).shape, vs = l.Def(v).shape;
  if (qs.size() != 4 || ks.size() != 4 || vs.size() != 4 || ks[0] != qs[0] || ks[1] != qs[1] || vs[0] != qs[0] ||
      vs[1] != qs[1] || vs[2] != ks[2] || ks[3] != qs[3]) {
    l.Unsupported(n, "q, k, v are not [B, H, L, E], [B, H, S, E], [B, H, S, Ev]");
    return {};
  }
  const DType dt = l.Def(q).dtype;
  const int64_t B = qs[0], H = qs[1], L = qs[2], S = ks[2], E = qs[3], Ev = vs[3];
  const nlohmann::json given = CoreLowerer::Value(n, "scale");
  const double scale = given.is_number() ? given.get<double>() : 1.0 / std::sqrt(static_cast<double>(E));
  const bool causal = l.IntArg(n, "is_causal", 0) != 0;
  const std::vector<int64_t> scores_shape = {B, H, L, S};
  const int dot = l.Reduce(scores_shape, dt, {E}, ReduceOp::kSum,
                           Op(Prim::kMul, {l.Read(q, {Var(0), Var(1), Var(2), Var(4)}),
                                           l.Read(k, {Var(0), Var(1), Var(3), Var(4)})}));
  Expr s = Op(Prim::kMul, {l.Read(dot, IndexVars(4)), Constant(scale, dt)});
  const Expr minus_inf = Constant(-std::numeric_limits<double>::infinity(), dt);
  if (CoreLowerer::IsTensor(n, "attn_mask")) {
    const int mask = l.Tensor(n, "attn_mask");
    if (mask < 0) return {};
    const Expr m = l.ReadBroadcast(mask, scores_shape);
    s = l.Def(mask).dtype == DType::kBool ? Op(Prim::kWhere, {m, s, minus_inf})
                                          : Op(Prim::kAdd, {s, Cast(m, dt)});
  }
  if (causal) s = Op(Prim::kWhere, {Op(Prim::kGt, {Var(3), Var(2)}), minus_inf, s});
  const int x = l.Compute(scores_shape, dt, s);
  const int mx = ReduceDims(l, x, {3}, true, ReduceOp::kMax, dt);
  const Expr mk = l.ReadBroadcast(mx, scores_shape);
  const Expr safe = ZeroWhereInfinite(mk, dt);
  const int e = l.Compute(scores_shape, dt, Op(Prim::kExp, {Op(Prim::kSub, {l.Read(x, IndexVars(4)), safe})}));
  const int z = ReduceDims(l, e, {3}, true, ReduceOp::kSum, dt);
  const Expr zk = l.ReadBroadcast(z, scores_shape);
  const int p = l.Compute(scores_shape, dt,
                          Op(Prim::kWhere, {Op(Prim::kGt, {zk, Constant(0, dt)}),
                                            Op(Prim::kDiv, {l.Read(e, IndexVars(4)), zk}), Constant(0, dt)}));
  const int out = l.Reduce({B, H, L, Ev}, dt, {S}, ReduceOp::kSum,
                           Op(Prim::kMul, {l.Read(p, {Var(0), Var(1), Var(2), Var(4)}),
                                           l.Read(v, {Var(0), Var(1), Var(4), Var(3)})}));
  const Expr m3 = l.Read(mx, {Var(0), Var(1), Var(2), Int(0)});
  const Expr z3 = l.Read(z, {Var(0), Var(1), Var(2), Int(0)});
  const int lse = l.Compute({B, H, L}, dt,
                            Op(Prim::kAdd, {ZeroWhereInfinite(m3, dt),
                                            Op(Prim::kLog, {z3})}));
  return {out, lse};
}

/// An int list argument of `count` entries (a single value repeated; empty: `fallback`).
std::vector<int64_t> Per(CoreLowerer& l, const OpNode& n, const std::string& name, size_t count,
                         const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = l.IntList(n, name);
  if (v.empty()) v = fallback;
  if (v.size() == 1 && count > 1) v.assign(count, v[0]);
  if (v.size() != count) {
    l.Unsupported(n, fmt::format("'{}' has {} entries for {} spatial dims", name, v.size(), count));
    v.assign(count, fallback.empty() ? 0 : fallback[0]);
  }
  return v;
}

/// A transposed convolution as a plain one (stride 1): the input upsampled by the
/// stride with zeros between (x_up[j] = x[j / s] where j % s == 0, else 0; (in - 1) s + 1
/// wide), read with padding (K - 1) d - p and dilation d by the flipped, transposed
/// weight W'[co, ci, k] = W[g cin_g + ci, co % cout_g, K - 1 - k] (V. Dumoulin and F.
/// Visin, "A guide to convolution arithmetic for deep learning", 2016, section 4). The
/// same terms as the masked transposed sum, spelled as aten.convolution's own, so that
/// the tiled main loop (convolution.h) takes it; output_padding needs nothing: reads
/// past the upsampled input's end are masked to 0.
struct PlainForm {
  int x = -1, w = -1;
  std::vector<int64_t> pad;
};

/// A transposed convolution's weight W [cin, cout_g, K...] as a plain convolution's
/// [cout, cin_g, E...], its taps read backwards: W'[co, ci, m] = W[g cin_g + ci, co mod
/// cout_g, last_d - step_d m_d], m_d < extent_d (the whole kernel flipped: last K - 1,
/// step 1; one output phase's taps: TransposedAsPlain and PhaseConvolution).
int FlippedWeight(CoreLowerer& l, int w, int64_t groups, const std::vector<int64_t>& extent,
                  const std::vector<int64_t>& last, const std::vector<int64_t>& step) {
  const auto ws = l.Def(w).shape;
  const int64_t cout_g = ws[1], cin_g = ws[0] / groups;
  std::vector<int64_t> shape = {cout_g * groups, cin_g};
  V index = {IAdd(IMul(IFloorDiv(Var(0), cout_g), cin_g), Var(1)), IRem(Var(0), cout_g)};
  for (size_t d = 0; d < extent.size(); ++d) {
    shape.push_back(extent[d]);
    index.push_back(IAdd(IMul(Var(static_cast<int>(2 + d)), -step[d]), last[d]));
  }
  return l.Compute(shape, l.Def(w).dtype, l.Read(w, index));
}

PlainForm TransposedAsPlain(CoreLowerer& l, int x, int w, bool batched, const std::vector<int64_t>& stride,
                            const std::vector<int64_t>& pad, const std::vector<int64_t>& dil, int64_t groups) {
  const auto xs = l.Def(x).shape;
  const auto ws = l.Def(w).shape;  // [cin, cout_g, K...]
  const size_t sp = ws.size() - 2, lead = batched ? 2 : 1;
  PlainForm out;
  // The upsampled input (x itself at stride 1).
  out.x = x;
  if (std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s != 1; })) {
    std::vector<int64_t> up = xs;
    V idx = IndexVars(xs.size());
    Expr on_grid;
    for (size_t d = 0; d < sp; ++d) {
      const size_t dim = lead + d;
      up[dim] = (xs[dim] - 1) * stride[d] + 1;
      on_grid = And(on_grid, Op(Prim::kEq, {IRem(Var(static_cast<int>(dim)), stride[d]), Int(0)}));
      idx[dim] = IFloorDiv(Var(static_cast<int>(dim)), stride[d]);
    }
    out.x = l.Compute(up, l.Def(x).dtype, l.Read(x, idx, on_grid));
  }
  // The flipped, transposed weight.
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  std::vector<int64_t> last;
  for (size_t d = 0; d < sp; ++d) {
    last.push_back(kernel[d] - 1);
    out.pad.push_back((kernel[d] - 1) * dil[d] - pad[d]);
  }
  out.w = FlippedWeight(l, w, groups, kernel, last, std::vector<int64_t>(sp, 1));
  return out;
}

/// The sum of a convolution of x by w into `shape` ([n,] cout, o...): a reduction over
/// (input channels of the group, kernel positions) with masked reads outside the
/// input. `transposed`: w is [cin, cout_g, K...] and output o reads input
/// (o + pad - k dil) / stride where that division is exact.
int ConvolutionSum(CoreLowerer& l, int x, int w, const std::vector<int64_t>& shape, bool batched, bool transposed,
                   const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                   const std::vector<int64_t>& dil, int64_t groups, DType dt) {
  const auto xs = l.Def(x).shape;
  const auto ws = l.Def(w).shape;
  const size_t sp = ws.size() - 2;
  const size_t ro = shape.size();
  // Output vars: [n,] co, o_0 .. ; reduce vars: ci, k_0 ..
  const Expr nv = batched ? Var(0) : nullptr;
  const int c0 = batched ? 1 : 0;
  const Expr co = Var(c0);
  const Expr ci = Var(static_cast<int>(ro));
  const int64_t cin = batched ? xs[1] : xs[0];
  const int64_t cout = shape[static_cast<size_t>(c0)];
  const int64_t cin_g = cin / groups, cout_g = cout / groups;
  const Expr g = IFloorDiv(co, cout_g);
  const Expr xc = IAdd(IMul(g, cin_g), ci);  // input channel
  V xi, wi;
  if (batched) xi.push_back(nv);
  xi.push_back(xc);
  if (transposed) {
    wi = {xc, IRem(co, cout_g)};
  } else {
    wi = {co, ci};
  }
  Expr mask;
  std::vector<int64_t> extents = {cin_g};
  for (size_t d = 0; d < sp; ++d) {
    const Expr o = Var(c0 + 1 + static_cast<int>(d));
    const Expr k = Var(static_cast<int>(ro + 1 + d));
    const int64_t in = xs[xs.size() - sp + d];
    extents.push_back(ws[2 + d]);
    wi.push_back(k);
    if (!transposed) {
      const Expr i = IAdd(IAdd(IMul(o, stride[d]), -pad[d]), IMul(k, dil[d]));
      xi.push_back(i);
      mask = And(mask, InRange(i, in));
    } else {
      // o = i * stride - pad + k * dil  =>  i = (o + pad - k * dil) / stride when exact.
      const Expr num = IAdd(IAdd(o, pad[d]), IMul(k, -dil[d]));
      const Expr i = IFloorDiv(num, stride[d]);
      xi.push_back(i);
      Expr exact = stride[d] == 1 ? nullptr : Op(Prim::kEq, {IRem(num, stride[d]), Int(0)});
      mask = And(mask, And(exact, InRange(i, in)));
    }
  }
  const Expr term = Op(Prim::kMul, {Cast(l.Read(x, xi, mask), dt), Cast(l.Read(w, wi, mask), dt)});
  return l.Reduce(shape, dt, extents, ReduceOp::kSum, term);
}

/// A strided transposed convolution of dilation 1 as s_0 x .. x s_{d-1} plain ones
/// over the input itself, one per output phase (W. Shi et al., "Is the deconvolution
/// layer the same as a convolutional layer?", arXiv:1609.07009, 2016). Per spatial
/// dim, output o = q s + r - p (q = (o + p) // s, phase r = (o + p) % s) sums the taps
/// k = r + j s, j = 0 .. T_r - 1 (T_r = ceil((K - r) / s)), at input q - j: a stride-1
/// convolution with padding T_r - 1 by the phase's flipped taps w_r[m] = W[r + (T_r - 1 -
/// m) s], Q_r = (O - 1 + p - r) // s + 1 outputs long. The upsampled form multiplies
/// the s - 1 inserted zeros of every s input positions too (s^d times the multiply-adds).
/// Returns the interleaved sum, shape `shape`; bias is the caller's.
int PhaseConvolution(CoreLowerer& l, int x, int w, const std::vector<int64_t>& shape, bool batched,
                     const std::vector<int64_t>& stride, const std::vector<int64_t>& pad, int64_t groups,
                     DType dt) {
  const auto ws = l.Def(w).shape;  // [cin, cout_g, K...]
  const size_t sp = ws.size() - 2, lead = batched ? 2 : 1;
  int64_t phases = 1;
  for (int64_t s : stride) phases *= s;
  Expr sum;
  for (int64_t ph = 0; ph < phases; ++ph) {
    std::vector<int64_t> r(sp), taps(sp), last(sp), zpad(sp);
    std::vector<int64_t> zshape(shape.begin(), shape.begin() + static_cast<long>(lead));
    bool empty = false;
    for (size_t d = 0, rest = static_cast<size_t>(ph); d < sp; ++d) {
      r[d] = static_cast<int64_t>(rest) % stride[d];
      rest /= static_cast<size_t>(stride[d]);
      taps[d] = (ws[2 + d] - r[d] + stride[d] - 1) / stride[d];
      const int64_t span = shape[lead + d] - 1 + pad[d] - r[d];  // (O - 1 + p - r): the last output's q s
      const int64_t q = span >= 0 ? span / stride[d] + 1 : 0;
      empty = empty || taps[d] <= 0 || q <= 0;
      zshape.push_back(q);
      zpad[d] = taps[d] - 1;
      last[d] = r[d] + (taps[d] - 1) * stride[d];
    }
    if (empty) continue;  // no tap or no output of this phase
    const int wr = FlippedWeight(l, w, groups, taps, last, stride);
    const int z = ConvolutionSum(l, x, wr, zshape, batched, false, std::vector<int64_t>(sp, 1), zpad,
                                 std::vector<int64_t>(sp, 1), groups, dt);
    V zi = IndexVars(lead);
    Expr on_phase;
    for (size_t d = 0; d < sp; ++d) {
      const Expr shifted = IAdd(Var(static_cast<int>(lead + d)), pad[d]);  // o + p
      zi.push_back(IFloorDiv(shifted, stride[d]));
      on_phase = And(on_phase, Op(Prim::kEq, {IRem(shifted, stride[d]), Int(r[d])}));
    }
    const Expr read = l.Read(z, zi, on_phase);
    sum = sum ? Op(Prim::kAdd, {sum, read}) : read;
  }
  return l.Compute(shape, dt, sum ? sum : Constant(0, dt));  // no phase: an empty output
}

/// convolution(input, weight, bias, stride, padding, dilation, transposed,
/// output_padding, groups). A transposed convolution whose padding leaves
/// (K - 1) d - p >= 0 is first rewritten: strided with dilation 1 as one plain
/// convolution per output phase (PhaseConvolution), else as a plain one over the
/// upsampled input (TransposedAsPlain); others keep the masked transposed sum.
Outs Convolution(CoreLowerer& l, const OpNode& n) {
  int x = l.Tensor(n, "input"), w = l.Tensor(n, "weight");
  if (x < 0 || w < 0) return {};
  const auto ws0 = l.Def(w).shape;
  const size_t sp = ws0.size() - 2;  // spatial dims
  const auto xs0 = l.Def(x).shape;
  const bool batched = xs0.size() == sp + 2;
  if (!batched && xs0.size() != sp + 1) {
    l.Unsupported(n, "input rank does not match the weight");
    return {};
  }
  auto stride = Per(l, n, "stride", sp, {1});
  auto pad = Per(l, n, "padding", sp, {0});
  const auto dil = Per(l, n, "dilation", sp, {1});
  bool transposed = l.IntArg(n, "transposed", 0) != 0;
  const int64_t groups = std::max<int64_t>(l.IntArg(n, "groups", 1), 1);
  const DType dt = n.dtype;
  int conv = -1;
  if (transposed) {
    bool plain_pad = true, strided = false, dilated = false;
    for (size_t d = 0; d < sp; ++d) {
      plain_pad = plain_pad && (ws0[2 + d] - 1) * dil[d] - pad[d] >= 0;
      strided = strided || stride[d] != 1;
      dilated = dilated || dil[d] != 1;
    }
    if (plain_pad && strided && !dilated) {
      conv = PhaseConvolution(l, x, w, n.shape, batched, stride, pad, groups, dt);
    } else if (plain_pad) {
      const PlainForm plain = TransposedAsPlain(l, x, w, batched, stride, pad, dil, groups);
      x = plain.x;
      w = plain.w;
      pad = plain.pad;
      stride.assign(sp, 1);
      transposed = false;
    }
  }
  if (conv < 0) conv = ConvolutionSum(l, x, w, n.shape, batched, transposed, stride, pad, dil, groups, dt);
  if (!CoreLowerer::IsTensor(n, "bias")) return {conv};
  const int bias = l.Tensor(n, "bias");
  const Expr co = Var(batched ? 1 : 0);
  const Expr y = Op(Prim::kAdd, {l.Read(conv, IndexVars(n.shape.size())), Cast(l.Read(bias, {co}), dt)});
  return {l.Compute(n.shape, dt, y)};
}

/// The window of a pooling op: per spatial dim, the input index of output `o` and
/// kernel position `k`, and whether it lies inside the input.
struct Window {
  size_t sp = 0;                            // spatial dims (the last sp dims)
  std::vector<int64_t> kernel;              // extents
  std::vector<int64_t> stride, pad, dil;    // per spatial dim (dil all 1 without dilation)
  V index;                      // the input index (all dims)
  Expr inside;                  // null when always inside
};

Window PoolWindow(CoreLowerer& l, const OpNode& n, int x, bool with_dilation) {
  Window win;
  const auto xs = l.Def(x).shape;
  const auto kernel = l.IntList(n, "kernel_size");
  win.sp = kernel.size() == 1 ? (n.target.find("1d") != std::string::npos ? 1 : (n.target.find("3d") != std::string::npos ? 3 : 2)) : kernel.size();
  win.kernel = Per(l, n, "kernel_size", win.sp, {1});
  win.stride = Per(l, n, "stride", win.sp, win.kernel);
  win.pad = Per(l, n, "padding", win.sp, {0});
  win.dil = with_dilation ? Per(l, n, "dilation", win.sp, {1}) : std::vector<int64_t>(win.sp, 1);
  const size_t rank = xs.size();
  win.index = IndexVars(rank);
  for (size_t d = 0; d < win.sp; ++d) {
    const size_t dim = rank - win.sp + d;
    const Expr k = Var(static_cast<int>(rank + d));
    const Expr i = IAdd(IAdd(IMul(Var(static_cast<int>(dim)), win.stride[d]), -win.pad[d]), IMul(k, win.dil[d]));
    win.index[dim] = i;
    win.inside = And(win.inside, InRange(i, xs[dim]));
  }
  return win;
}

/// max_pool{1,2,3}d_with_indices(self, kernel_size, stride, padding, dilation,
/// ceil_mode) -> (values, indices into each input plane, row-major). Without a reader
/// of the indices, one max reduction over the window. With one, one reduction, the
/// argmax with pooling's NaN rule (kArgMaxLastNaN: the last NaN of a window, where
/// torch.argmax gives the first); the value is the input read at that position (a
/// gather instead of a second pass over the window). A window whose inside is all -inf
/// has its argmax on a padded position when one comes first (they read -inf too); torch
/// then gives the first inside position, so the index falls back to it (ATen's max-pool
/// kernels start from it and replace it only for a greater value or a NaN).
Outs MaxPool(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto xs = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const Window win = PoolWindow(l, n, x, true);
  const Expr lowest = ExtremeValue(dt, /*lowest=*/true);
  const Expr term = win.inside ? Op(Prim::kWhere, {win.inside, l.Read(x, win.index, win.inside), lowest}) : l.Read(x, win.index);
  if (!l.ResultRead(n, 1)) return {l.Reduce(n.shape, dt, win.kernel, ReduceOp::kMax, term), -1};
  const int arg = l.Reduce(n.shape, DType::kInt64, win.kernel, ReduceOp::kArgMaxLastNaN, term);
  // The window position of the argmax, substituted for the window's loop vars.
  const size_t rank = xs.size();
  V at = IndexVars(rank);
  for (const Expr& k : Unflatten(l.Read(arg, IndexVars(rank)), win.kernel)) at.push_back(k);
  V index, plane, first;
  std::vector<int64_t> plane_shape;
  for (size_t dim = 0; dim < rank; ++dim) index.push_back(SubstituteVars(win.index[dim], at));
  for (size_t d = 0; d < win.sp; ++d) {
    const size_t dim = rank - win.sp + d;
    plane.push_back(index[dim]);
    plane_shape.push_back(xs[dim]);
    // The first k with o s - p + k dil >= 0: max(0, -((o s - p) // dil)).
    const Expr start = IAdd(IMul(Var(static_cast<int>(dim)), win.stride[d]), -win.pad[d]);
    const Expr k = Op(Prim::kMaximum, {IMul(IFloorDiv(start, win.dil[d]), -1), Int(0)});
    first.push_back(IAdd(start, IMul(k, win.dil[d])));
  }
  if (!win.inside) return {l.Compute(n.shape, dt, l.Read(x, index)), l.Compute(n.shape, DType::kInt64, FlatOffset(plane, plane_shape))};
  const Expr inside = SubstituteVars(win.inside, at);
  const Expr value = Op(Prim::kWhere, {inside, l.Read(x, index, inside), lowest});
  const Expr flat = Op(Prim::kWhere, {inside, FlatOffset(plane, plane_shape), FlatOffset(first, plane_shape)});
  return {l.Compute(n.shape, dt, value), l.Compute(n.shape, DType::kInt64, flat)};
}

/// avg_pool{1,2,3}d(self, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override): torch's window clipping and divisor.
Outs AvgPool(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto xs = l.Def(x).shape;
  const DType dt = n.dtype;
  const Window win = PoolWindow(l, n, x, false);
  const auto& stride = win.stride;
  const auto& pad = win.pad;
  const Expr term = Cast(l.Read(x, win.index, win.inside), dt);
  const int sum = l.Reduce(n.shape, dt, win.kernel, ReduceOp::kSum, term);
  const bool include_pad = l.IntArg(n, "count_include_pad", 1) != 0;
  const auto override_v = CoreLowerer::Value(n, "divisor_override");
  const size_t rank = xs.size();
  Expr divisor;
  if (override_v.is_number_integer()) {
    divisor = Int(override_v.get<int64_t>());
  } else {
    divisor = Int(1);
    for (size_t d = 0; d < win.sp; ++d) {
      const size_t dim = rank - win.sp + d;
      const Expr start = IAdd(IMul(Var(static_cast<int>(dim)), stride[d]), -pad[d]);
      const Expr end = Op(Prim::kMinimum, {IAdd(start, win.kernel[d]), Int(xs[dim] + pad[d])});
      Expr size = IAdd(end, Op(Prim::kNeg, {start}));
      if (!include_pad) {
        const Expr s0 = Op(Prim::kMaximum, {start, Int(0)});
        const Expr e0 = Op(Prim::kMinimum, {end, Int(xs[dim])});
        size = IAdd(e0, Op(Prim::kNeg, {s0}));
      }
      divisor = IMul(divisor, size);
    }
  }
  return {l.Compute(n.shape, dt, Op(Prim::kDiv, {l.Read(sum, IndexVars(rank)), Cast(divisor, dt)}))};
}

/// Adaptive pooling windows: start = floor(o In / Out), end = ceil((o + 1) In / Out).
struct AdaptiveWindow {
  size_t sp = 0;
  std::vector<int64_t> extents;  // the largest window per dim
  V index;
  Expr inside;
  Expr count;  // int64 window size
  V start;
};

AdaptiveWindow Adaptive(CoreLowerer& l, const OpNode& n, int x) {
  AdaptiveWindow a;
  const auto xs = l.Def(x).shape;
  a.sp = l.IntList(n, "output_size").size();
  const size_t rank = xs.size();
  a.index = IndexVars(rank);
  a.count = Int(1);
  for (size_t d = 0; d < a.sp; ++d) {
    const size_t dim = rank - a.sp + d;
    const int64_t in = xs[dim], out = n.shape[dim];
    int64_t widest = 1;
    for (int64_t o = 0; o < out; ++o) widest = std::max(widest, ((o + 1) * in + out - 1) / out - (o * in) / out);
    a.extents.push_back(widest);
    const Expr o = Var(static_cast<int>(dim));
    const Expr start = IFloorDiv(IMul(o, in), out);
    const Expr end = IFloorDiv(IAdd(IMul(IAdd(o, 1), in), out - 1), out);
    const Expr i = IAdd(start, Var(static_cast<int>(rank + d)));
    a.index[dim] = i;
    a.inside = And(a.inside, Op(Prim::kLt, {i, end}));
    a.count = IMul(a.count, IAdd(end, Op(Prim::kNeg, {start})));
    a.start.push_back(start);
  }
  return a;
}

Outs AdaptiveAvgPool(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const DType dt = n.dtype;
  const AdaptiveWindow a = Adaptive(l, n, x);
  const int sum = l.Reduce(n.shape, dt, a.extents, ReduceOp::kSum, Cast(l.Read(x, a.index, a.inside), dt));
  const size_t rank = n.shape.size();
  return {l.Compute(n.shape, dt, Op(Prim::kDiv, {l.Read(sum, IndexVars(rank)), Cast(a.count, dt)}))};
}

/// adaptive_max_pool{1,2,3}d(self, output_size) -> (values, indices into the plane), as
/// MaxPool: one max reduction without a reader of the indices, else the argmax and the
/// input read there. A window's first position is always inside it (the outside
/// positions of a narrower window come last), so an all -inf window's argmax is too.
Outs AdaptiveMaxPool(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto xs = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const AdaptiveWindow a = Adaptive(l, n, x);
  const Expr lowest = ExtremeValue(dt, /*lowest=*/true);
  const Expr term = Op(Prim::kWhere, {a.inside, l.Read(x, a.index, a.inside), lowest});
  if (!l.ResultRead(n, 1)) return {l.Reduce(n.shape, dt, a.extents, ReduceOp::kMax, term), -1};
  const int arg = l.Reduce(n.shape, DType::kInt64, a.extents, ReduceOp::kArgMaxLastNaN, term);
  const size_t rank = xs.size();
  const auto pos = Unflatten(l.Read(arg, IndexVars(rank)), a.extents);
  V plane, index = IndexVars(rank);
  std::vector<int64_t> plane_shape;
  for (size_t d = 0; d < a.sp; ++d) {
    const size_t dim = rank - a.sp + d;
    plane.push_back(IAdd(a.start[d], pos[d]));
    plane_shape.push_back(xs[dim]);
    index[dim] = plane.back();
  }
  return {l.Compute(n.shape, dt, l.Read(x, index)), l.Compute(n.shape, DType::kInt64, FlatOffset(plane, plane_shape))};
}

const std::vector<LoweringRule> kRules = {
    {"aten.mm.default", Mm, "reduce sum of products over k; CPU main_loop=tiled: packed GEMM, epilogue fused"},
    {"aten.bmm.default", Mm,
     "reduce sum of products over k per batch; CPU main_loop=tiled: packed GEMM per batch, epilogue fused"},
    {"aten.mv.default", Mm, "reduce sum of products over k (loop nest)"},
    {"aten.dot.default", Dot, "reduce sum of products"},
    {"aten.addmm.default", AddMm,
     "reduce (mm), then beta self + alpha product; CPU main_loop=tiled: packed GEMM, that sum its fused epilogue"},
    {"aten.baddbmm.default", AddMm,
     "reduce (bmm), then beta self + alpha product; CPU main_loop=tiled: packed GEMM, that sum its fused epilogue"},
    {"aten.addmv.default", AddMm, "reduce (mv), then beta self + alpha product"},
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", Attention,
     "reduce (scores q k^T), reduce max, reduce sum of exp, reduce (weights v); CPU: a graph of this node alone is the "
     "attention family's fused kernel (online softmax)"},
    {"aten.convolution.default", Convolution,
     "reduce over group channels and kernel positions, masked reads (any rank, groups; transposed: strided of "
     "dilation 1 as one plain one per output phase, else a plain one over the zero-upsampled input with the "
     "flipped weight); CPU main_loop=tiled: implicit GEMM (1-3 spatial dims), epilogue fused"},
    {"aten.max_pool1d_with_indices.default", MaxPool, "reduce max over the window; with indices read, argmax and a gather"},
    {"aten.max_pool2d_with_indices.default", MaxPool, "reduce max over the window; with indices read, argmax and a gather"},
    {"aten.max_pool3d_with_indices.default", MaxPool, "reduce max over the window; with indices read, argmax and a gather"},
    {"aten.avg_pool1d.default", AvgPool, "reduce sum over the window, div by torch's divisor"},
    {"aten.avg_pool2d.default", AvgPool, "reduce sum over the window, div by torch's divisor"},
    {"aten.avg_pool3d.default", AvgPool, "reduce sum over the window, div by torch's divisor"},
    {"aten._adaptive_avg_pool2d.default", AdaptiveAvgPool, "reduce sum over the adaptive window, div by its size"},
    {"aten._adaptive_avg_pool3d.default", AdaptiveAvgPool, "reduce sum over the adaptive window, div by its size"},
    {"aten.adaptive_avg_pool1d.default", AdaptiveAvgPool, "reduce sum over the adaptive window, div by its size"},
    {"aten.adaptive_max_pool1d.default", AdaptiveMaxPool, "reduce max over the adaptive window; with indices read, argmax and a gather"},
    {"aten.adaptive_max_pool2d.default", AdaptiveMaxPool, "reduce max over the adaptive window; with indices read, argmax and a gather"},
    {"aten.adaptive_max_pool3d.default", AdaptiveMaxPool, "reduce max over the adaptive window; with indices read, argmax and a gather"},
};

}  // namespace

const std::vector<LoweringRule>& HeavyRules() { return kRules; }

}  // namespace kernelevolve::operators::ir
