// ir::Generalize (sizes read at run time, issue 19): programs lowered from input sets of
// other sizes become one program whose size-dependent constants are expressions of
// the inputs' sizes; the printed kernel serves sizes it was never lowered for.
#include <gtest/gtest.h>

#include <vector>

#include "operators/families/loop_nest/loop_nest_template.h"
#include "operators/ir/generalize.h"
#include "operators/ir/kernel_plan.h"
#include "sized_test_program.h"
#include "template_test_util.h"

namespace kernelevolve::operators::ir {
namespace {

TEST(Generalize, SizesThatDifferBecomeOneSymbolReadAtRunTime) {
  const GeneralizeResult r = Generalize(SizedProgram(10), {SizedProgram(13), SizedProgram(7)});
  ASSERT_TRUE(r.program.has_value()) << r.unsupported;
  const TensorProgram& p = *r.program;
  // x's dim 0 and lengths' dim 0 agree on every set: one symbol, read from x.
  ASSERT_EQ(p.symbols.size(), 1u);
  EXPECT_EQ(p.symbols[0].abi_index, 0);
  EXPECT_EQ(p.symbols[0].dim, 0);
  EXPECT_EQ(p.symbols[0].value, 10);
  EXPECT_EQ(p.symbols[0].min_value, 7);
  EXPECT_EQ(p.symbols[0].max_value, 13);
  ASSERT_EQ(p.defs[2].symbolic_shape.size(), 2u);
  EXPECT_EQ(ExprText(p.defs[2].symbolic_shape[0]), "s0");
  EXPECT_EQ(ExprText(p.defs[2].symbolic_shape[1]), "4");
  EXPECT_EQ(ExprText(p.defs[3].symbolic_shape[0]), "s0");
  EXPECT_TRUE(p.defs[3].symbolic_reduce_extents.empty()) << "the reduced extent 4 does not vary";
  // The baked n - 1 is s0 - 1 now; the rest of the body is the first program's.
  EXPECT_NE(ExprText(p.defs[2].body).find("lt(i0, add(s0, -1))"), std::string::npos) << ExprText(p.defs[2].body);
  // Sizes that never vary: the first program as it is.
  const GeneralizeResult same = Generalize(SizedProgram(10), {SizedProgram(10)});
  ASSERT_TRUE(same.program.has_value());
  EXPECT_TRUE(same.program->symbols.empty());
  EXPECT_TRUE(same.program->defs[2].symbolic_shape.empty());
}

TEST(Generalize, RefusesWhatNoInputSizeExplains) {
  // A float constant that changes with the size (a mean's 1/n would): refused.
  GeneralizeResult r = Generalize(SizedProgram(10, 0.1), {SizedProgram(13, 1.0 / 13), SizedProgram(7, 1.0 / 7)});
  EXPECT_FALSE(r.program.has_value());
  EXPECT_NE(r.unsupported.find("depends on their sizes"), std::string::npos) << r.unsupported;
  // An integer constant that is no a * n + b on every set (n - 1 on two, n + 4 on one).
  r = Generalize(SizedProgram(10), {SizedProgram(13), SizedProgram(7, 2.0, 5)});
  EXPECT_FALSE(r.program.has_value());
  EXPECT_NE(r.unsupported.find("no a * size + b"), std::string::npos) << r.unsupported;
  // Another structure (one output fewer).
  TensorProgram other = SizedProgram(13);
  other.outputs.pop_back();
  r = Generalize(SizedProgram(10), {other});
  EXPECT_FALSE(r.program.has_value());
  EXPECT_NE(r.unsupported.find("another structure"), std::string::npos) << r.unsupported;
}

TEST(Generalize, ThePrintedKernelServesSizesItWasNotLoweredFor) {
  const GeneralizeResult r = Generalize(SizedProgram(1), {SizedProgram(40), SizedProgram(7)});
  ASSERT_TRUE(r.program.has_value()) << r.unsupported;
  families::LoopNestTemplate tmpl(PlanKernels(*r.program), /*multithread=*/true);
  std::vector<std::string> sources;
  for (const auto& k : tmpl.Drafts()) sources.push_back(tmpl.Generate(k));
  const auto kernels = template_test::CompileAll(sources);
  for (size_t j = 0; j < kernels.size(); ++j) {
    ASSERT_NE(kernels[j]->entry, nullptr) << kernels[j]->log << sources[j];
    for (int64_t n : {1, 5, 31, 41}) {
      std::vector<float> x(static_cast<size_t>(n) * 4), y(x.size(), -1.0f), z(static_cast<size_t>(n), -1.0f);
      std::vector<int64_t> lengths(static_cast<size_t>(n));
      for (size_t e = 0; e < x.size(); ++e) x[e] = static_cast<float>(e % 5) - 1.5f;
      for (int64_t i = 0; i < n; ++i) lengths[static_cast<size_t>(i)] = 3 * i;
      std::vector<int64_t> xs = {n, 4}, ls = {n}, zs = {n};
      DLTensor in[2] = {{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs.data(), nullptr, 0},
                        {lengths.data(), {kDLCPU, 0}, 1, {kDLInt, 64, 1}, ls.data(), nullptr, 0}};
      DLTensor out[2] = {{y.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs.data(), nullptr, 0},
                         {z.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, zs.data(), nullptr, 0}};
      if (n > 40) {  // past the sizes the input sets showed (1 .. 40): refused
        EXPECT_EQ(kernels[j]->entry(in, 2, out, 2), 3) << "n = " << n;
        continue;
      }
      ASSERT_EQ(kernels[j]->entry(in, 2, out, 2), 0) << "n = " << n << "\n" << sources[j];
      for (int64_t i = 0; i < n; ++i) {
        float sum = 0;
        for (int64_t c = 0; c < 4; ++c) {
          const float v = x[static_cast<size_t>(i * 4 + c)];
          sum += v;
          const float want = (i < n - 1 ? v * 2.0f : 0.0f) + static_cast<float>(3 * i);
          EXPECT_EQ(y[static_cast<size_t>(i * 4 + c)], want) << "n = " << n << ", y[" << i << ", " << c << "]";
        }
        EXPECT_FLOAT_EQ(z[static_cast<size_t>(i)], sum) << "n = " << n << ", z[" << i << "]";
      }
      // Inputs that disagree on the shared size: refused (3, the element count), not read past.
      std::vector<int64_t> short_lengths = {n + 1};
      in[1].shape = short_lengths.data();
      EXPECT_EQ(kernels[j]->entry(in, 2, out, 2), 3) << "n = " << n;
    }
  }
}

}  // namespace
}  // namespace kernelevolve::operators::ir
