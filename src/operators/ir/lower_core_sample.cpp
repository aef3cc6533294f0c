// Core ATen lowering rules for resampling: bilinear upsampling, grid sampling and
// col2im (F.fold). Each output element reads a few input elements at computed
// positions (bilinear: four, weighted), or sums the patches that cover it (col2im).
//
// Formulas follow PyTorch's CPU kernels (aten/src/ATen/native/UpSample.h:
// area_pixel_compute_scale and area_pixel_compute_source_index; GridSampler.h:
// grid_sampler_unnormalize and clip_coordinates; Im2Col.h: col2im): source positions
// in float32 as PyTorch computes them for float32 tensors, so the same neighbours are
// read; the weighted blend in float64.
#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using V = std::vector<Expr>;
using Outs = std::vector<int>;

Expr F32(double v) { return Float(v, DType::kFloat32); }
Expr FMul(const Expr& a, const Expr& b) { return Op(Prim::kMul, {a, b}); }
Expr FAdd(const Expr& a, const Expr& b) { return Op(Prim::kAdd, {a, b}); }
Expr FSub(const Expr& a, const Expr& b) { return Op(Prim::kSub, {a, b}); }
Expr ToF32(const Expr& e) { return Cast(e, DType::kFloat32); }
Expr ToF64(const Expr& e) { return Cast(e, DType::kFloat64); }
Expr F64(double v) { return Float(v, DType::kFloat64); }

/// upsample_bilinear2d.vec(input, output_size, align_corners, scale_factors) and
/// upsample_bilinear2d.default(self, output_size, align_corners, scales_h, scales_w):
///   scale = align_corners ? (in - 1) / (out - 1) (0 for out = 1) : 1 / scale_factor or in / out
///   src   = align_corners ? scale dst : max(scale (dst + 0.5) - 0.5, 0)
///   i0 = floor(src), i1 = min(i0 + 1, in - 1), w1 = src - i0, w0 = 1 - w1 per spatial dim.
Outs UpsampleBilinear(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, CoreLowerer::IsTensor(n, "input") ? "input" : "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  if (s.size() != 4 || n.shape.size() != 4 || !core::IsFloatingPoint(n.dtype)) {
    l.Unsupported(n, "bilinear upsampling of a 4-d floating tensor only");
    return {};
  }
  const bool align = l.IntArg(n, "align_corners", 0) != 0;
  std::vector<double> factors;
  const auto sf = CoreLowerer::Value(n, "scale_factors");
  if (sf.is_array()) {
    for (const auto& v : sf) factors.push_back(v.get<double>());
  }
  const auto sh = CoreLowerer::Value(n, "scales_h"), sw = CoreLowerer::Value(n, "scales_w");
  if (sh.is_number() && sw.is_number()) factors = {sh.get<double>(), sw.get<double>()};
  Expr i0[2], i1[2], w0[2], w1[2];
  for (int a = 0; a < 2; ++a) {
    const size_t d = static_cast<size_t>(2 + a);
    const double in = static_cast<double>(s[d]), out = static_cast<double>(n.shape[d]);
    double scale;
    if (align) scale = out > 1 ? (in - 1) / (out - 1) : 0.0;
    else scale = factors.size() == 2 && factors[static_cast<size_t>(a)] > 0 ? 1.0 / factors[static_cast<size_t>(a)] : in / out;
    const Expr dst = ToF32(Var(static_cast<int>(d)));
    const Expr src = align ? FMul(F32(scale), dst)
                           : Op(Prim::kMaximum, {FSub(FMul(F32(scale), FAdd(dst, F32(0.5))), F32(0.5)), F32(0)});
    i0[a] = Cast(src, DType::kInt64);  // src >= 0: truncation is floor
    i1[a] = Op(Prim::kMinimum, {IAdd(i0[a], 1), Int(s[d] - 1)});
    // Positions in float32 as PyTorch picks them; the blend in float64, so neighbours of
    // opposite sign (a large-magnitude input) cancel without float32's rounding.
    w1[a] = FSub(ToF64(src), ToF64(i0[a]));
    w0[a] = FSub(F64(1), w1[a]);
  }
  const auto at = [&](const Expr& h, const Expr& w) { return ToF64(l.Read(x, {Var(0), Var(1), h, w})); };
  const Expr top = FAdd(FMul(w0[1], at(i0[0], i0[1])), FMul(w1[1], at(i0[0], i1[1])));
  const Expr bottom = FAdd(FMul(w0[1], at(i1[0], i0[1])), FMul(w1[1], at(i1[0], i1[1])));
  return {l.Compute(n.shape, n.dtype, Cast(FAdd(FMul(w0[0], top), FMul(w1[0], bottom)), n.dtype))};
}

/// grid_sampler_2d(input [N, C, H, W], grid [N, Ho, Wo, 2], interpolation_mode,
/// padding_mode, align_corners) -> [N, C, Ho, Wo]. Modes: bilinear (0) and nearest (1,
/// half to even); padding zeros (0: reads outside give 0) and border (1: coordinates
/// clipped to the image). Reflection padding and bicubic are refused.
Outs GridSampler2d(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "input"), grid = l.Tensor(n, "grid");
  if (x < 0 || grid < 0) return {};
  const auto s = l.Def(x).shape;
  const int64_t mode = l.IntArg(n, "interpolation_mode", 0), padding = l.IntArg(n, "padding_mode", 0);
  if (s.size() != 4 || (mode != 0 && mode != 1) || (padding != 0 && padding != 1)) {
    l.Unsupported(n, "grid sampling other than bilinear/nearest with zeros/border padding on a 4-d input");
    return {};
  }
  const bool align = l.IntArg(n, "align_corners", 0) != 0;
  // grid[n, y, x, 0] is the x (width) coordinate, [..., 1] the y (height) one.
  Expr coord[2];  // [0] height, [1] width: unnormalized source coordinates
  for (int a = 0; a < 2; ++a) {
    const double size = static_cast<double>(s[static_cast<size_t>(2 + a)]);
    const Expr g = ToF32(l.Read(grid, {Var(0), Var(2), Var(3), Int(1 - a)}));
    Expr c = align ? FMul(FMul(FAdd(g, F32(1)), F32(0.5)), F32(size - 1))
                   : FMul(FSub(FMul(FAdd(g, F32(1)), F32(size)), F32(1)), F32(0.5));
    if (padding == 1) c = Op(Prim::kMinimum, {Op(Prim::kMaximum, {c, F32(0)}), F32(size - 1)});
    coord[a] = c;
  }
  const auto read = [&](const Expr& h, const Expr& w) {
    const Expr inside = Op(Prim::kLogicalAnd, {InRange(h, s[2]), InRange(w, s[3])});
    return ToF64(l.Read(x, {Var(0), Var(1), h, w}, inside));
  };
  if (mode == 1) {
    const Expr h = Cast(Op(Prim::kRound, {coord[0]}), DType::kInt64);
    const Expr w = Cast(Op(Prim::kRound, {coord[1]}), DType::kInt64);
    return {l.Compute(n.shape, n.dtype, Cast(read(h, w), n.dtype))};
  }
  const Expr h0f = Op(Prim::kFloor, {coord[0]}), w0f = Op(Prim::kFloor, {coord[1]});
  const Expr h0 = Cast(h0f, DType::kInt64), w0 = Cast(w0f, DType::kInt64);
  const Expr h1 = IAdd(h0, 1), w1 = IAdd(w0, 1);
  // Weights of the far side; the blend in float64 (as for upsampling).
  const Expr dh = ToF64(FSub(coord[0], h0f)), dw = ToF64(FSub(coord[1], w0f));
  const Expr ch = FSub(F64(1), dh), cw = FSub(F64(1), dw);
  Expr sum = FMul(FMul(ch, cw), read(h0, w0));
  sum = FAdd(sum, FMul(FMul(ch, dw), read(h0, w1)));
  sum = FAdd(sum, FMul(FMul(dh, cw), read(h1, w0)));
  sum = FAdd(sum, FMul(FMul(dh, dw), read(h1, w1)));
  return {l.Compute(n.shape, n.dtype, Cast(sum, n.dtype))};
}

/// col2im(self [N, C kh kw, L] or [C kh kw, L], output_size, kernel_size, dilation,
/// padding, stride) -> [N, C, H, W] (or [C, H, W]): each output pixel sums the patch
/// entries that cover it, a reduction over the kernel offsets (ki, kj):
///   ty = y + pad_h - ki dil_h; it counts when ty >= 0, ty % stride_h == 0 and
///   ty / stride_h < blocks_h (likewise for x); block l = by blocks_w + bx.
Outs Col2Im(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const auto ksize = l.IntList(n, "kernel_size"), dil = l.IntList(n, "dilation");
  const auto pad = l.IntList(n, "padding"), stride = l.IntList(n, "stride");
  if ((s.size() != 2 && s.size() != 3) || ksize.size() != 2 || dil.size() != 2 || pad.size() != 2 || stride.size() != 2) {
    l.Unsupported(n, "col2im of a 2-d or 3-d input with 2-d kernel, dilation, padding and stride");
    return {};
  }
  const bool batched = s.size() == 3;
  const size_t rank = n.shape.size();  // 4 or 3
  const int64_t H = n.shape[rank - 2], W = n.shape[rank - 1];
  const int64_t blocks[2] = {(H + 2 * pad[0] - dil[0] * (ksize[0] - 1) - 1) / stride[0] + 1,
                             (W + 2 * pad[1] - dil[1] * (ksize[1] - 1) - 1) / stride[1] + 1};
  const int c = static_cast<int>(rank) - 3;  // the channel var
  const Expr ki = Var(static_cast<int>(rank)), kj = Var(static_cast<int>(rank) + 1);
  Expr valid;
  Expr block[2];
  for (int a = 0; a < 2; ++a) {
    const Expr t = IAdd(Var(static_cast<int>(rank) - 2 + a), IAdd(IMul(a == 0 ? ki : kj, -dil[static_cast<size_t>(a)]),
                                                                    pad[static_cast<size_t>(a)]));
    const int64_t st = stride[static_cast<size_t>(a)];
    valid = And(valid, Op(Prim::kGe, {t, Int(0)}));
    if (st != 1) valid = And(valid, Op(Prim::kEq, {IRem(t, st), Int(0)}));
    block[a] = st == 1 ? t : IFloorDiv(t, st);
    valid = And(valid, Op(Prim::kLt, {block[a], Int(blocks[a])}));
  }
  const Expr row = IAdd(IMul(IAdd(IMul(Var(c), ksize[0]), ki), ksize[1]), kj);
  const Expr col = IAdd(IMul(block[0], blocks[1]), block[1]);
  V at = batched ? V{Var(0), row, col} : V{row, col};
  const Expr term = Op(Prim::kWhere, {valid, l.Read(x, at, valid), Constant(0, n.dtype)});
  return {l.Reduce(n.shape, n.dtype, {ksize[0], ksize[1]}, ReduceOp::kSum, term)};
}

const std::vector<LoweringRule> kRules = {
    {"aten.upsample_bilinear2d.vec", UpsampleBilinear, "element: four reads at the source position, weighted (align_corners or half-pixel)"},
    {"aten.upsample_bilinear2d.default", UpsampleBilinear, "element: four reads at the source position, weighted (align_corners or half-pixel)"},
    {"aten.grid_sampler_2d.default", GridSampler2d, "element: bilinear (four masked reads) or nearest at the unnormalized grid position; zeros or border padding"},
    {"aten.col2im.default", Col2Im, "reduce sum over the kernel offsets of the patch entries covering the pixel"},
};

}  // namespace

const std::vector<LoweringRule>& SampleRules() { return kRules; }

}  // namespace kernelevolve::operators::ir
