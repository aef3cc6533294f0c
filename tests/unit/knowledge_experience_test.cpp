// Distilling a run into an experience, matching experiences to new problems, and the
// warm-start plan built from them.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "core/candidate.h"
#include "core/error.h"
#include "knowledge/experience.h"
#include "knowledge/warm_start.h"
#include "knowledge_test_util.h"

namespace kernelevolve::knowledge {
namespace {

using KnowledgeWarmStartTest = testing::KnowledgeTest;

using testing::MakeNode;
using testing::SoftmaxProblem;

/// A run: draft (1) scalar 0.8x -> child (2) vectorized 1.5x -> child (3) all threads 2.4x,
/// plus a failed sibling (4) and a later worse draft (5).
std::vector<search::Node> SampleRun() {
  const nlohmann::json base = {{"math", "libm"}, {"threads", "1"}};
  const nlohmann::json vec = {{"math", "vectorized"}, {"threads", "1"}};
  const nlohmann::json all = {{"math", "vectorized"}, {"threads", "all"}};
  return {MakeNode(1, -1, base, 0.8, "// base"), MakeNode(2, 1, vec, 1.5, "// vec"),
          MakeNode(3, 2, all, 2.4, "// all"), MakeNode(4, 2, {{"math", "poly"}}, 0.0, "// broken"),
          MakeNode(5, -1, base, 0.5, "// other")};
}

TEST(KnowledgeExperienceTest, DistillKeepsTheBestKernelAndTheGainsAlongItsLineage) {
  const core::Problem problem = SoftmaxProblem(32, 512);
  DistillContext ctx{"cpu", "AMD EPYC", "/runs/a", 2.2};
  auto x = DistillExperience(problem, SampleRun(), ctx);
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->problem, "softmax");
  EXPECT_EQ(x->operator_family, "softmax_lastdim");
  EXPECT_EQ(x->op_signature, "aten._softmax.default(dim=-1,half_to_float=false)|float32->float32");
  EXPECT_EQ(x->shape_class, "r2[5,9]");
  EXPECT_EQ(x->source, "// all");
  EXPECT_EQ(x->source_hash, core::ContentHash("// all"));
  EXPECT_DOUBLE_EQ(x->fitness, 2.4);
  EXPECT_DOUBLE_EQ(x->speedup, 2.2);
  EXPECT_TRUE(x->speedup_confirmed);
  EXPECT_EQ(x->evaluations, 5);
  EXPECT_EQ(x->evaluations_to_best, 3);
  EXPECT_EQ(x->knobs["threads"], "all");
  ASSERT_EQ(x->improvements.size(), 2u);
  EXPECT_EQ(x->improvements[0]["changes"], nlohmann::json({{"math", {"libm", "vectorized"}}}));
  EXPECT_EQ(x->improvements[1]["changes"], nlohmann::json({{"threads", {"1", "all"}}}));
  EXPECT_DOUBLE_EQ(x->improvements[1]["fitness_after"].get<double>(), 2.4);
  const std::string summary = x->Summary();
  EXPECT_NE(summary.find("2.20x"), std::string::npos) << summary;
  EXPECT_NE(summary.find("math libm->vectorized"), std::string::npos) << summary;
  EXPECT_NE(summary.find("evaluation 3 of 5"), std::string::npos) << summary;

  std::vector<search::Node> failed = {MakeNode(1, -1, {}, 0.0, "// x")};
  EXPECT_FALSE(DistillExperience(problem, failed, ctx).has_value());
}

TEST(KnowledgeExperienceTest, OperatorFamilyNamesPointwiseOps) {
  core::Problem p = SoftmaxProblem(4, 4, "aten.gelu.default");
  EXPECT_EQ(OperatorFamily(p, "pointwise"), "pointwise:aten.gelu.default");
  EXPECT_EQ(OperatorFamily(p, ""), "graph:aten.gelu.default");
  p.graph = {};
  EXPECT_EQ(OperatorFamily(p, ""), "problem:softmax");
  EXPECT_EQ(OpSignature(p), "problem:softmax|float32->float32");
}

TEST(KnowledgeExperienceTest, ShapeClassesBucketByPowersOfTwo) {
  EXPECT_EQ(ShapeClassOf({{32, 512}}).Text(), "r2[5,9]");
  EXPECT_EQ(ShapeClassOf({{48, 700}}).Text(), "r2[5,9]");
  EXPECT_EQ(ShapeClassOf({{1}, {}}).Text(), "r1[0];r0[]");
  EXPECT_EQ(ShapeDistance(ShapeClassOf({{32, 512}}), ShapeClassOf({{64, 2048}})), 3);
  EXPECT_EQ(ShapeDistance(ShapeClassOf({{32, 512}}), ShapeClassOf({{32, 512, 1}})), -1);
  EXPECT_EQ(ShapeDistance(ShapeClassOf({{32, 512}}), ShapeClassOf({{32, 512}, {512}})), -1);
}

TEST(KnowledgeExperienceTest, MatchNeedsSameSignatureAndPlatformAndASimilarShape) {
  DistillContext ctx{"cpu", "AMD EPYC", "/runs/a", 0};
  Experience seen = *DistillExperience(SoftmaxProblem(32, 512), SampleRun(), ctx);
  seen.id = 1;
  Experience other_shape = *DistillExperience(SoftmaxProblem(64, 1024), SampleRun(), ctx);
  other_shape.id = 2;
  other_shape.fitness = 9.0;  // better, but a less similar shape
  Experience far = *DistillExperience(SoftmaxProblem(4096, 512), SampleRun(), ctx);
  far.id = 3;
  Experience gpu = seen;
  gpu.id = 4;
  gpu.platform = "cuda";
  Experience log_softmax = *DistillExperience(SoftmaxProblem(32, 512, "aten._log_softmax.default"), SampleRun(), ctx);
  log_softmax.id = 5;
  const std::vector<Experience> records = {seen, other_shape, far, gpu, log_softmax};

  auto matches = MatchExperiences(ExperienceKeyFor(SoftmaxProblem(32, 512), "cpu", "AMD EPYC"), records, 3);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].experience.id, 1);  // exact shape first
  EXPECT_EQ(matches[0].shape_distance, 0);
  EXPECT_TRUE(matches[0].same_machine);
  EXPECT_EQ(matches[1].experience.id, 2);
  EXPECT_EQ(matches[1].shape_distance, 2);
  EXPECT_NE(matches[0].why.find("distance 0"), std::string::npos) << matches[0].why;

  // A similar but not identical shape still matches; a different op or platform does not.
  EXPECT_EQ(MatchExperiences(ExperienceKeyFor(SoftmaxProblem(40, 600), "cpu", ""), records, 3).size(), 2u);
  EXPECT_TRUE(MatchExperiences(ExperienceKeyFor(SoftmaxProblem(32, 512), "triton", ""), records, 3).empty());
  auto gelu = MatchExperiences(ExperienceKeyFor(SoftmaxProblem(32, 512, "aten.gelu.default"), "cpu", ""), records, 3);
  EXPECT_TRUE(gelu.empty());
}

TEST_F(KnowledgeWarmStartTest, WarmStartSeedsTheBestPriorKernelAndCarriesNotes) {
  auto kb = KnowledgeBase::Open(db_path_, {corpus_});
  const core::Problem problem = SoftmaxProblem(32, 512);
  EXPECT_TRUE(PlanWarmStart(kb, ExperienceKeyFor(problem, "cpu", "m")).seeds.empty());

  DistillContext ctx{"cpu", "m", "/runs/first", 0};
  kb.RecordExperience(*DistillExperience(problem, SampleRun(), ctx));
  auto second = SampleRun();
  second[2].candidate.source = "// even better";
  second[2].evaluation.fitness = 3.0;
  kb.RecordExperience(*DistillExperience(SoftmaxProblem(32, 1024), second, ctx));

  WarmStartPlan plan = PlanWarmStart(kb, ExperienceKeyFor(problem, "cpu", "m"), WarmStartOptions{2, 5, 3});
  ASSERT_EQ(plan.seeds.size(), 2u);
  EXPECT_EQ(plan.seeds[0].source, "// all");  // exact shape class before a faster neighbour
  EXPECT_EQ(plan.seeds[0].operator_name, "template");
  EXPECT_EQ(plan.seeds[0].template_name, "softmax_lastdim");
  EXPECT_EQ(plan.seeds[0].knobs["threads"], "all");
  EXPECT_TRUE(core::IsWarmStartSeed(plan.seeds[0])) << plan.seeds[0].rationale;
  EXPECT_EQ(plan.seeds[1].source, "// even better");
  ASSERT_EQ(plan.notes.size(), 2u);
  EXPECT_NE(plan.notes[0].find("softmax_lastdim on cpu"), std::string::npos) << plan.notes[0];

  // The same prior kernel recorded twice is seeded once.
  kb.RecordExperience(*DistillExperience(problem, SampleRun(), ctx));
  plan = PlanWarmStart(kb, ExperienceKeyFor(problem, "cpu", "m"), WarmStartOptions{3, 5, 3});
  EXPECT_EQ(plan.seeds.size(), 2u);
  EXPECT_EQ(plan.matches.size(), 3u);
}

TEST_F(KnowledgeWarmStartTest, ADamagedRecordIsSkippedAndNamedTheOthersStillSeed) {
  auto kb = KnowledgeBase::Open(db_path_, {corpus_});
  const core::Problem problem = SoftmaxProblem(32, 512);
  DistillContext ctx{"cpu", "m", "/runs/first", 0};
  const int64_t good = kb.RecordExperience(*DistillExperience(problem, SampleRun(), ctx));
  auto other = SampleRun();
  other[2].candidate.source = "// damaged later";
  const int64_t damaged = kb.RecordExperience(*DistillExperience(problem, other, ctx));
  const int64_t bad_shapes = kb.RecordExperience(*DistillExperience(problem, other, ctx));
  // Another writer (or a disk fault) leaves one row with JSON that does not parse and one
  // whose shapes are not a list of shapes.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.string().c_str(), &db), SQLITE_OK);
  const std::string edit = fmt::format(
      "UPDATE experiences SET knobs_json = '{{\"threads\": ' WHERE id = {}; "
      "UPDATE experiences SET shapes_json = '\"32x512\"' WHERE id = {};",
      damaged, bad_shapes);
  ASSERT_EQ(sqlite3_exec(db, edit.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);

  const WarmStartPlan plan = PlanWarmStart(kb, ExperienceKeyFor(problem, "cpu", "m"));
  ASSERT_EQ(plan.seeds.size(), 1u);
  EXPECT_EQ(plan.seeds[0].source, "// all");
  EXPECT_EQ(plan.seed_sources[0].experience.id, good);
  ASSERT_EQ(plan.unreadable.size(), 2u);
  EXPECT_NE(plan.unreadable[0].find(fmt::format("experience {}: experiences.shapes_json is not a list", bad_shapes)),
            std::string::npos)
      << plan.unreadable[0];
  EXPECT_NE(plan.unreadable[1].find(fmt::format("experience {}: experiences.knobs_json is not valid JSON", damaged)),
            std::string::npos)
      << plan.unreadable[1];
  // Without somewhere to put them, the damage is an error, not a silent omission.
  EXPECT_THROW(kb.Experiences({}), core::IoError);
}

TEST_F(KnowledgeWarmStartTest, APriorKernelSlowerThanEagerIsANoteNotASeed) {
  auto kb = KnowledgeBase::Open(db_path_, {corpus_});
  const core::Problem problem = SoftmaxProblem(32, 512);
  DistillContext ctx{"cpu", "m", "/runs/slow", 0.19};  // confirmed at 0.19x of eager
  kb.RecordExperience(*DistillExperience(problem, SampleRun(), ctx));
  WarmStartPlan plan = PlanWarmStart(kb, ExperienceKeyFor(problem, "cpu", "m"));
  EXPECT_EQ(plan.matches.size(), 1u);
  EXPECT_EQ(plan.notes.size(), 1u);
  EXPECT_TRUE(plan.seeds.empty());
}

}  // namespace
}  // namespace kernelevolve::knowledge
