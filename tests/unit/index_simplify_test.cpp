// Index simplification over loop ranges (ir/index_simplify.h): which index chains it
// rewrites, which it must leave, and that a body keeps its shape and masks.
#include <gtest/gtest.h>

#include "operators/ir/index_simplify.h"

namespace kernelevolve::operators::ir {
namespace {

/// The single load's index expressions of `e`.
std::vector<Expr> LoadIndex(const Expr& e) {
  std::vector<Expr> index;
  VisitPostOrder(e, [&](const ExprNode& n) {
    if (n.kind == ExprKind::kLoad && n.tensor == 0) index = n.args;
  });
  return index;
}

TEST(IndexSimplify, RemainderAndDivisionOfAFlatOffsetBecomeTheIndices) {
  // A bias read through a reshape of a [64, 192] product's flat offset: t0[(192 i0 + i1) % 192]
  // and a row index t0[(192 i0 + i1) // 192], with i1 < 192, are t0[i1] and t0[i0].
  const Expr flat = IAdd(IMul(Var(0), 192), Var(1));
  const Expr body = Op(Prim::kAdd, {Load(0, core::DType::kFloat32, {IRem(flat, 192)}),
                                    Load(1, core::DType::kFloat32, {IFloorDiv(flat, 192)})});
  const Expr simple = SimplifyIndices(body, {64, 192});
  EXPECT_EQ(ExprText(simple), ExprText(Op(Prim::kAdd, {Load(0, core::DType::kFloat32, {Var(1)}),
                                                        Load(1, core::DType::kFloat32, {Var(0)})})));
  // With i1 up to 192 inclusive the remainder is not i1 (i1 = 192 wraps): kept.
  const Expr kept = SimplifyIndices(body, {64, 193});
  EXPECT_EQ(ExprText(kept), ExprText(body));
}

TEST(IndexSimplify, TheConstantTermOfAnOffsetIsSplitOffThroughSumsAndConstantFactors) {
  // Row t = 4 of a [*, 256] buffer at column 192 + i1: (i0 + 4) * 256 + (i1 + 192) is
  // i0 * 256 + i1 plus 1216.
  int64_t constant = 0;
  const Expr offset = IAdd(IMul(IAdd(Var(0), 4), 256), IAdd(Var(1), 192));
  const Expr rest = SplitConstantTerm(offset, &constant);
  EXPECT_EQ(constant, 1216);
  EXPECT_EQ(ExprText(rest), ExprText(IAdd(IMul(Var(0), 256), Var(1))));
  // A difference and a negation: 10 - (i0 + 3) is -i0 ... plus 7.
  constant = 0;
  const Expr flipped = SplitConstantTerm(Op(Prim::kSub, {Int(10), IAdd(Var(0), 3)}, core::DType::kInt64), &constant);
  EXPECT_EQ(constant, 7);
  EXPECT_EQ(ExprText(flipped), ExprText(Op(Prim::kSub, {Int(0), Var(0)}, core::DType::kInt64)));
  // A floor division keeps its constants: (i0 + 3) // 2 + 5 splits off only the 5.
  constant = 0;
  const Expr divided = IFloorDiv(IAdd(Var(0), 3), 2);
  EXPECT_EQ(SplitConstantTerm(IAdd(divided, 5), &constant), divided);
  EXPECT_EQ(constant, 5);
}

TEST(IndexSimplify, AffineSubexpressionsOfAnIndexThatIsNotAffine) {
  // t0[((4 i0 + i1) // 4) * t2[i0]]: the product with a loaded value is not affine, its
  // left factor (i1 < 4) is i0.
  const Expr gathered = Load(2, core::DType::kInt64, {Var(0)});
  const Expr index = Op(Prim::kMul, {IFloorDiv(IAdd(IMul(Var(0), 4), Var(1)), 4), gathered}, core::DType::kInt64);
  const Expr simple = SimplifyIndices(Load(0, core::DType::kFloat32, {index}), {5, 4});
  const auto idx = LoadIndex(simple);
  ASSERT_EQ(idx.size(), 1u);
  EXPECT_EQ(ExprText(idx[0]), ExprText(Op(Prim::kMul, {Var(0), gathered}, core::DType::kInt64)));
}

TEST(IndexSimplify, ARemainderOfAReshapeChainIsRetriedOnceTheChainIsAffine) {
  // A [2, 7, 29] consumer re-indexed over a [14, 29] product: its last index i2 becomes
  // ((x // 203) * 7 + (x // 29) % 7) * 29 + x % 29 with x = 29 i0 + i1, and a bias read
  // at i2 % 29 is t0[(that) % 29]. The dividend cancels to x only once simplified, and
  // x % 29 = i1 for i1 < 29.
  const Expr x = IAdd(IMul(Var(0), 29), Var(1));
  const Expr chain =
      IAdd(IMul(IAdd(IMul(IFloorDiv(x, 203), 7), IRem(IFloorDiv(x, 29), 7)), 29), IRem(x, 29));
  const Expr simple = SimplifyIndices(Load(0, core::DType::kFloat32, {IRem(chain, 29)}), {14, 29});
  EXPECT_EQ(ExprText(simple), ExprText(Load(0, core::DType::kFloat32, {Var(1)})));
}

TEST(IndexSimplify, LeavesIndicesItCannotProveAndKeepsMasks) {
  // floor(i0 / 3) over i0 < 9 is not affine; a size read at run time and a var past the
  // extents are unknown ranges.
  const Expr not_affine = Load(0, core::DType::kFloat32, {IFloorDiv(Var(0), 3)});
  EXPECT_EQ(ExprText(SimplifyIndices(not_affine, {9})), ExprText(not_affine));
  const Expr sized = Load(0, core::DType::kFloat32, {IRem(IAdd(IMul(SizeVar(0), 4), Var(0)), 4)});
  EXPECT_EQ(ExprText(SimplifyIndices(sized, {4})), ExprText(sized));
  const Expr outside = Load(0, core::DType::kFloat32, {IRem(IAdd(IMul(Var(0), 4), Var(1)), 4)});
  EXPECT_EQ(ExprText(SimplifyIndices(outside, {3})), ExprText(outside)) << "var 1 has no extent";
  // A masked load keeps its mask; its index simplifies.
  const Expr pos = IAdd(IMul(Var(0), 8), Var(1));
  const Expr mask = Op(Prim::kLt, {Var(1), Int(5)}, core::DType::kBool);
  const Expr masked = Load(0, core::DType::kFloat32, {IRem(pos, 8)}, mask);
  const Expr simple = SimplifyIndices(masked, {2, 8});
  EXPECT_EQ(ExprText(simple), ExprText(Load(0, core::DType::kFloat32, {Var(1)}, mask)));
}

}  // namespace
}  // namespace kernelevolve::operators::ir
