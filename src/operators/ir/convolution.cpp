#include "operators/ir/convolution.h"

#include "operators/ir/contraction.h"

namespace kernelevolve::operators::ir {
namespace {

/// The first operands of the `ge` comparisons of a mask, in the order the lowering's
/// And chain holds them (one `0 <= i` per spatial dim).
std::vector<Expr> LowerBounds(const Expr& mask) {
  std::vector<Expr> out;
  VisitPostOrder(mask, [&](const ExprNode& n) {
    if (n.kind == ExprKind::kOp && n.op == Prim::kGe && n.args.size() == 2) out.push_back(n.args[0]);
  });
  return out;
}

/// The term lower_core_heavy.cpp's Convolution builds for `c` (float32), with the
/// lowerer's rule that a size-1 dim is read at index 0.
Expr ConvolutionTerm(const Convolution& c, const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                     size_t out_rank) {
  const size_t sp = c.kernel.size();
  const int c0 = c.batched ? 1 : 0;
  const Expr co = Var(c0);
  const Expr ci = Var(static_cast<int>(out_rank));
  const Expr xc = IAdd(IMul(IFloorDiv(co, c.CoutPerGroup()), c.CinPerGroup()), ci);
  std::vector<Expr> xi, wi = {co, ci};
  if (c.batched) xi.push_back(Var(0));
  xi.push_back(xc);
  Expr mask;
  for (size_t d = 0; d < sp; ++d) {
    const Expr o = Var(c0 + 1 + static_cast<int>(d));
    const Expr k = Var(static_cast<int>(out_rank + 1 + d));
    wi.push_back(k);
    const Expr i = IAdd(IAdd(IMul(o, c.stride[d]), -c.pad[d]), IMul(k, c.dilation[d]));
    xi.push_back(i);
    mask = And(mask, InRange(i, c.in[d]));
  }
  for (size_t k = 0; k < xi.size(); ++k) {
    if (xs[k] == 1) xi[k] = Int(0);
  }
  for (size_t k = 0; k < wi.size(); ++k) {
    if (ws[k] == 1) wi[k] = Int(0);
  }
  const core::DType f32 = core::DType::kFloat32;
  return Op(Prim::kMul, {Cast(Load(c.x, f32, xi, mask), f32), Cast(Load(c.w, f32, wi, mask), f32)});
}

}  // namespace

int64_t Convolution::Depth() const {
  int64_t d = CinPerGroup();
  for (int64_t k : kernel) d *= k;
  return d;
}

int64_t Convolution::OutPositions() const {
  int64_t n = 1;
  for (int64_t o : out) n *= o;
  return n;
}

std::optional<Convolution> MatchConvolution(const TensorProgram& program, const TensorDef& def) {
  const core::DType f32 = core::DType::kFloat32;
  if (def.kind != DefKind::kReduce || def.reduce != ReduceOp::kSum || def.dtype != f32) return std::nullopt;
  const Expr& body = def.body;
  if (body->kind != ExprKind::kOp || body->op != Prim::kMul || body->args.size() != 2) return std::nullopt;
  const Expr& xl = body->args[0];
  const Expr& wl = body->args[1];
  if (xl->kind != ExprKind::kLoad || wl->kind != ExprKind::kLoad || !xl->mask) return std::nullopt;
  const TensorDef& xd = program.defs.at(static_cast<size_t>(xl->tensor));
  const TensorDef& wd = program.defs.at(static_cast<size_t>(wl->tensor));
  if (xd.dtype != f32 || wd.dtype != f32 || wd.shape.size() < 3 || wd.shape.size() > 5) return std::nullopt;
  const size_t sp = wd.shape.size() - 2;
  Convolution c;
  c.x = xl->tensor;
  c.w = wl->tensor;
  c.batched = xd.shape.size() == sp + 2;
  if (!c.batched && xd.shape.size() != sp + 1) return std::nullopt;
  if (def.shape.size() != xd.shape.size() || def.reduce_extents.size() != sp + 1) return std::nullopt;
  const size_t c0 = c.batched ? 1 : 0;
  c.images = c.batched ? def.shape[0] : 1;
  c.cin = xd.shape[c0];
  c.cout = def.shape[c0];
  if (wd.shape[0] != c.cout || def.reduce_extents[0] != wd.shape[1] || wd.shape[1] <= 0 || c.cin % wd.shape[1] != 0) {
    return std::nullopt;
  }
  c.groups = c.cin / wd.shape[1];
  if (c.groups <= 0 || c.cout % c.groups != 0) return std::nullopt;
  const std::vector<Expr> bounds = LowerBounds(xl->mask);
  if (bounds.size() != sp) return std::nullopt;
  const int out_rank = static_cast<int>(def.shape.size());
  for (size_t d = 0; d < sp; ++d) {
    c.in.push_back(xd.shape[c0 + 1 + d]);
    c.out.push_back(def.shape[c0 + 1 + d]);
    c.kernel.push_back(wd.shape[2 + d]);
    if (def.reduce_extents[1 + d] != c.kernel.back()) return std::nullopt;
    const auto f = AffineOf(bounds[d]);
    if (!f) return std::nullopt;
    c.stride.push_back(f->Coeff(static_cast<int>(c0 + 1 + d)));
    c.dilation.push_back(f->Coeff(out_rank + 1 + static_cast<int>(d)));
    c.pad.push_back(-f->constant);
    // A size-1 output or kernel dim has no var (index 0): any stride / dilation is
    // equivalent, and 1 keeps the packer's arithmetic plain.
    if (c.out.back() == 1 && c.stride.back() == 0) c.stride.back() = 1;
    if (c.kernel.back() == 1 && c.dilation.back() == 0) c.dilation.back() = 1;
    if (c.stride.back() <= 0 || c.dilation.back() <= 0 || c.pad.back() < 0) return std::nullopt;
  }
  if (ExprText(ConvolutionTerm(c, xd.shape, wd.shape, def.shape.size())) != ExprText(body)) return std::nullopt;
  return c;
}

}  // namespace kernelevolve::operators::ir
