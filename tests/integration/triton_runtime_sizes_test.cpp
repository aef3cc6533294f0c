// Triton kernels whose sizes are read at run time (issue 19), under TRITON_INTERPRET=1
// (no GPU): the loop-nest printer on a generalized program (ir::Generalize), the
// embedding_bag, index_add, sort, unique and masked_select families, every draft,
// checked in one Python process per test (tests/integration/triton_runtime_sizes_check.py)
// at sizes they were not generated for.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../unit/sized_test_program.h"
#include "interpret_check.h"
#include "operators/families/embedding_bag/triton_embedding_bag_template.h"
#include "operators/families/index_add/triton_index_add_template.h"
#include "operators/families/loop_nest/triton_loop_nest_template.h"
#include "operators/families/masked_select/triton_masked_select_template.h"
#include "operators/families/sort/triton_sort_template.h"
#include "operators/families/unique/triton_unique_template.h"
#include "operators/ir/generalize.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;
using namespace operators;

/// ir::SizedProgram(n) plus w [4] = column sums over the varying dim (a reduction whose
/// extent is read at run time) and c [n, 4] = cumsum of x along it (a scan of run-time
/// length); outputs y, z, w, c.
ir::TensorProgram SizedWithColumnWork(int64_t n) {
  ir::TensorProgram p = ir::SizedProgram(n);
  ir::TensorDef w;
  w.id = 4;
  w.kind = ir::DefKind::kReduce;
  w.shape = {4};
  w.reduce_extents = {n};
  w.body = ir::Load(0, core::DType::kFloat32, {ir::Var(1), ir::Var(0)});
  ir::TensorDef c;
  c.id = 5;
  c.kind = ir::DefKind::kScan;
  c.shape = {n, 4};
  c.scan_dim = 0;
  c.body = ir::Load(0, core::DType::kFloat32, {ir::Var(0), ir::Var(1)});
  p.defs.push_back(w);
  p.defs.push_back(c);
  p.outputs = {2, 3, 4, 5};
  return p;
}

TEST(TritonRuntimeSizes, LoopNestServesSizesItWasNotLoweredFor) {
  const ir::GeneralizeResult r = ir::Generalize(SizedWithColumnWork(1), {SizedWithColumnWork(40), SizedWithColumnWork(7)});
  ASSERT_TRUE(r.program.has_value()) << r.unsupported;
  ASSERT_EQ(r.program->symbols.size(), 1u);
  families::TritonLoopNestTemplate tmpl(ir::PlanKernels(*r.program));
  const fs::path dir = testing_util::FreshTestDir("ke_triton_sizes");
  nlohmann::json manifest = nlohmann::json::array();
  int k = 0;
  for (const auto& knobs : tmpl.Drafts()) {
    const std::string source = tmpl.Generate(knobs);
    EXPECT_NE(source.find("s0 = int(inputs[0].shape[0])"), std::string::npos) << source;
    const fs::path module = dir / fmt::format("sized_{}.py", k++);
    std::ofstream(module) << source;
    // 1 .. 40 were seen; 5 and 31 were never lowered; 41 is past them.
    manifest.push_back({{"module", module.string()}, {"check", "sized_program"}, {"sizes", {1, 5, 31, 40}},
                        {"refused", {41}}});
  }
  testing_util::RunInterpretChecker("triton_runtime_sizes_check.py", dir, manifest);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

TEST(TritonRuntimeSizes, EmbeddingBagMatchesTorchOnEveryModeAndDraft) {
  const fs::path dir = testing_util::FreshTestDir("ke_triton_sizes");
  nlohmann::json manifest = nlohmann::json::array();
  using Mode = ir::EmbeddingBagSpec::Mode;
  struct Variant {
    Mode mode;
    bool last, weighted;
  };
  int k = 0;
  for (const Variant& v : {Variant{Mode::kSum, false, false}, Variant{Mode::kMean, true, false},
                           Variant{Mode::kMax, false, false}, Variant{Mode::kSum, true, true}}) {
    ir::EmbeddingBagSpec spec;
    spec.mode = v.mode;
    spec.include_last_offset = v.last;
    spec.indices = 0;
    spec.weight = 1;
    spec.offsets = 2;
    spec.per_sample_weights = v.weighted ? 3 : -1;
    spec.num_inputs = v.weighted ? 4 : 3;
    families::TritonEmbeddingBagTemplate tmpl(spec);
    for (const auto& knobs : tmpl.Drafts()) {
      const fs::path module = dir / fmt::format("bag_{}.py", k++);
      std::ofstream(module) << tmpl.Generate(knobs);
      manifest.push_back({{"module", module.string()}, {"check", "embedding_bag"}, {"mode", static_cast<int>(v.mode)},
                          {"last", v.last}, {"weighted", v.weighted}});
    }
  }
  testing_util::RunInterpretChecker("triton_runtime_sizes_check.py", dir, manifest);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

TEST(TritonRuntimeSizes, IndexAddMatchesTorchInBothFormsOnEveryDraft) {
  const fs::path dir = testing_util::FreshTestDir("ke_triton_sizes");
  nlohmann::json manifest = nlohmann::json::array();
  struct Variant {
    bool segments, mean, self;
  };
  int k = 0;
  for (const Variant& v : {Variant{false, false, true}, Variant{false, false, false}, Variant{true, false, false},
                           Variant{true, true, false}, Variant{true, false, true}}) {
    ir::IndexAddSpec spec;  // inputs: values, index or lengths, then self
    spec.values = 0;
    spec.segments = v.segments;
    (v.segments ? spec.lengths : spec.index) = 1;
    spec.mean = v.mean;
    spec.self_is_input = v.self;
    spec.self = v.self ? 2 : -1;
    spec.num_inputs = v.self ? 3 : 2;
    families::TritonIndexAddTemplate tmpl(spec);
    for (const auto& knobs : tmpl.Drafts()) {
      const fs::path module = dir / fmt::format("index_add_{}.py", k++);
      std::ofstream(module) << tmpl.Generate(knobs);
      manifest.push_back({{"module", module.string()}, {"check", "index_add"}, {"segments", v.segments},
                          {"mean", v.mean}, {"self", v.self}});
    }
  }
  testing_util::RunInterpretChecker("triton_runtime_sizes_check.py", dir, manifest);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

const fs::path kCases = fs::path(KE_TEST_DATA_DIR) / "unit" / "data" / "loop_nest";

core::OpGraph CaseGraph(const std::string& name) {
  std::ifstream in(kCases / (name + ".json"));
  if (!in) ADD_FAILURE() << "missing " << (kCases / (name + ".json"));
  return core::OpGraphFromJson(nlohmann::json::parse(in));
}

TEST(TritonRuntimeSizes, SortAndTopKMatchTorchOnEveryDraft) {
  const fs::path dir = testing_util::FreshTestDir("ke_triton_sizes");
  nlohmann::json manifest = nlohmann::json::array();
  int k = 0;
  // Recorded cases: a stable descending sort with NaN and ties; topk(smallest) along dim 0.
  for (const std::string name : {"sort_desc_nan_ties", "topk_smallest_dim0"}) {
    const auto match = families::MatchTritonSort(CaseGraph(name));
    ASSERT_TRUE(match.has_value() && match->tmpl != nullptr) << name;
    EXPECT_EQ(match->tmpl->Name(), "triton_sort");
    for (const auto& knobs : match->tmpl->Drafts()) {
      const fs::path module = dir / fmt::format("sort_{}.py", k++);
      std::ofstream(module) << match->tmpl->Generate(knobs);
      manifest.push_back({{"module", module.string()}, {"check", "case"},
                          {"case", (kCases / (name + ".safetensors")).string()}});
    }
  }
  // Hand-built: every order and output subset at rows of several lengths (ties, -0.0,
  // NaN, a row longer than any power of two below it), along the last and a middle dim.
  struct Variant {
    int dim;
    bool descending;
    int64_t k;
    std::vector<int> outputs;
  };
  for (const Variant& v : {Variant{2, false, -1, {0, 1}}, Variant{1, true, -1, {1}}, Variant{2, true, 5, {0, 1}},
                           Variant{1, false, 3, {0}}}) {
    ir::SortSpec spec;
    spec.rank = 3;
    spec.dim = v.dim;
    spec.descending = v.descending;
    spec.k = v.k;
    spec.outputs = v.outputs;
    families::TritonSortTemplate tmpl(spec);
    const auto knobs = tmpl.Drafts().front();
    const fs::path module = dir / fmt::format("sort_{}.py", k++);
    std::ofstream(module) << tmpl.Generate(knobs);
    manifest.push_back({{"module", module.string()}, {"check", "sort"}, {"dim", v.dim}, {"descending", v.descending},
                        {"k", v.k}, {"outputs", v.outputs}});
  }
  testing_util::RunInterpretChecker("triton_runtime_sizes_check.py", dir, manifest);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

TEST(TritonRuntimeSizes, UniqueMatchesTorchWithBoundedAndExactOutputs) {
  const fs::path dir = testing_util::FreshTestDir("ke_triton_sizes");
  nlohmann::json manifest = nlohmann::json::array();
  using O = ir::UniqueOutput;
  int k = 0;
  for (const std::vector<O>& outputs : {std::vector<O>{O::kValues, O::kInverse, O::kCounts}, std::vector<O>{O::kValues},
                                        std::vector<O>{O::kCounts, O::kInverse}}) {
    ir::UniqueSpec spec;
    spec.rank = 2;
    spec.outputs = outputs;
    families::TritonUniqueTemplate tmpl(spec);
    std::vector<int> which;
    for (O o : outputs) which.push_back(static_cast<int>(o));
    for (const auto& knobs : tmpl.Drafts()) {
      const fs::path module = dir / fmt::format("unique_{}.py", k++);
      std::ofstream(module) << tmpl.Generate(knobs);
      manifest.push_back({{"module", module.string()}, {"check", "unique"}, {"outputs", which}});
    }
  }
  testing_util::RunInterpretChecker("triton_runtime_sizes_check.py", dir, manifest);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

TEST(TritonRuntimeSizes, MaskedSelectPacksRowsInOrderWithBoundedAndExactOutputs) {
  const fs::path dir = testing_util::FreshTestDir("ke_triton_sizes");
  nlohmann::json manifest = nlohmann::json::array();
  int k = 0;
  // A comparison mask over a 1-D float tensor, a length mask over the first two dims of
  // a 3-D one, a bool input over an int64 tensor (tests/unit/data/loop_nest/families).
  for (const std::string name : {"masked_select_compare", "masked_select_lengths", "masked_select_int_rows"}) {
    const auto match = families::MatchTritonMaskedSelect(CaseGraph("families/" + name), {});
    ASSERT_TRUE(match.has_value() && match->tmpl != nullptr) << name << ": " << (match ? match->unsupported : "");
    EXPECT_EQ(match->tmpl->Name(), "triton_masked_select");
    for (const auto& knobs : match->tmpl->Drafts()) {
      const fs::path module = dir / fmt::format("masked_{}.py", k++);
      std::ofstream(module) << match->tmpl->Generate(knobs);
      manifest.push_back({{"module", module.string()}, {"check", "bounded_case"},
                          {"case", (kCases / "families" / (name + ".safetensors")).string()}});
    }
  }
  testing_util::RunInterpretChecker("triton_runtime_sizes_check.py", dir, manifest);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
