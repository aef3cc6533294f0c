// Index-set splitting at the mask bounds of a loop body (ir/interior_split.h): which
// masks it reads, the bounds it returns, and the unmasked interior body.
#include <gtest/gtest.h>

#include "operators/ir/interior_split.h"

namespace kernelevolve::operators::ir {
namespace {

/// The window read x[2 i1 - 1 + i2] of a stride-2, padding-1 pooling row of 10 inputs,
/// masked to 0 <= 2 i1 - 1 + i2 < 10.
Expr PaddedWindowRead() {
  const Expr pos = IAdd(IAdd(IMul(Var(1), 2), -1), Var(2));
  const Expr mask = And(Op(Prim::kGe, {pos, Int(0)}, core::DType::kBool),
                        Op(Prim::kLt, {pos, Int(10)}, core::DType::kBool));
  return Load(0, core::DType::kFloat32, {Var(0), pos}, mask);
}

int MaskedLoads(const Expr& e) {
  int n = 0;
  VisitPostOrder(e, [&](const ExprNode& node) { n += node.kind == ExprKind::kLoad && node.mask ? 1 : 0; });
  return n;
}

TEST(InteriorSplit, ReadsTheRangeChecksOfAPaddedWindow) {
  const Expr read = PaddedWindowRead();
  // The mask also guards a where(), as the capture of max pooling does.
  const Expr body = Op(Prim::kWhere, {read->mask, read, Float(-1e30)}, core::DType::kFloat32);
  const auto split = SplitAtMaskBounds(body);
  ASSERT_TRUE(split.has_value());
  ASSERT_EQ(split->bounds.size(), 2u);
  // pos >= 0: 2 i1 + i2 - 1 >= 0; pos < 10: 9 - pos = -2 i1 - i2 + 10 >= 0.
  const Affine& low = split->bounds[0].form;
  const Affine& high = split->bounds[1].form;
  EXPECT_EQ(low.Coeff(1), 2);
  EXPECT_EQ(low.Coeff(2), 1);
  EXPECT_EQ(low.constant, -1);
  EXPECT_EQ(high.Coeff(1), -2);
  EXPECT_EQ(high.Coeff(2), -1);
  EXPECT_EQ(high.constant, 10);
  EXPECT_EQ(MaskedLoads(body), 1);
  EXPECT_EQ(MaskedLoads(split->interior_body), 0);
  EXPECT_EQ(ExprText(split->interior_body).find("ge("), std::string::npos) << ExprText(split->interior_body);
}

TEST(InteriorSplit, RefusesMasksItCannotBound) {
  EXPECT_FALSE(SplitAtMaskBounds(Load(0, core::DType::kFloat32, {Var(0)})).has_value());  // nothing masked
  // A mask read from a bool tensor (data-dependent).
  const Expr from_data = Load(1, core::DType::kBool, {Var(0)});
  EXPECT_FALSE(SplitAtMaskBounds(Load(0, core::DType::kFloat32, {Var(0)}, from_data)).has_value());
  // An equality (a strided transposed convolution's (i - k) mod s == 0).
  const Expr eq = Op(Prim::kEq, {IRem(IAdd(Var(0), -1), 2), Int(0)}, core::DType::kBool);
  EXPECT_FALSE(SplitAtMaskBounds(Load(0, core::DType::kFloat32, {Var(0)}, eq)).has_value());
  // A bound on a floor division that does not cancel (not affine).
  const Expr ge = Op(Prim::kGe, {IFloorDiv(Var(0), 3), Int(1)}, core::DType::kBool);
  EXPECT_FALSE(SplitAtMaskBounds(Load(0, core::DType::kFloat32, {Var(0)}, ge)).has_value());
  // An or of two bounds.
  const Expr either = Op(Prim::kLogicalOr, {Op(Prim::kGe, {Var(0), Int(1)}, core::DType::kBool),
                                            Op(Prim::kLt, {Var(0), Int(3)}, core::DType::kBool)},
                         core::DType::kBool);
  EXPECT_FALSE(SplitAtMaskBounds(Load(0, core::DType::kFloat32, {Var(0)}, either)).has_value());
}

}  // namespace
}  // namespace kernelevolve::operators::ir
