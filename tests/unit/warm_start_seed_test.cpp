// A warm start's prior kernel written again for the problem at hand (cli/knowledge_hooks.h
// SeedAdapter, operators::TemplateOperator::Rederive): a template kernel has its sizes in
// its text, so the stored source of a run at other sizes would fail its checks and take a
// slot of the budget. Knobs outside the problem's space are fitted to it; a prior of
// another template is dropped with the reason and the next match takes its place; an
// LLM's kernel runs as stored.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "cli/knowledge_hooks.h"
#include "knowledge/experience.h"
#include "knowledge_test_util.h"
#include "operators/template/template_operator.h"
#include "operators/template/triton_softmax.h"

namespace kernelevolve::cli {
namespace {

using knowledge::testing::MakeNode;
using knowledge::testing::SoftmaxProblem;

class WarmStartSeedTest : public knowledge::testing::KnowledgeTest {
 protected:
  void SetUp() override {
    KnowledgeTest::SetUp();
    ::setenv("KERNELEVOLVE_CORPUS", corpus_.c_str(), 1);  // no built-in corpus to index
  }
  void TearDown() override {
    ::unsetenv("KERNELEVOLVE_CORPUS");
    KnowledgeTest::TearDown();
  }

  /// Records a one-node run of `problem` whose best kernel is `source`, written by
  /// `operator_name` with `knobs`, at 1.5x.
  void Record(const core::Problem& problem, const std::string& operator_name, const nlohmann::json& knobs,
              const std::string& source, const std::string& template_name = "softmax_lastdim") {
    auto kb = knowledge::KnowledgeBase::Open(db_path_, {corpus_});
    search::Node n = MakeNode(1, -1, knobs, 1.5, source);
    n.candidate.operator_name = operator_name;
    n.candidate.template_name = template_name;
    const knowledge::DistillContext ctx{"cpu", "m", "/runs/prior", 0};
    kb.RecordExperience(*knowledge::DistillExperience(problem, {n}, ctx));
  }

  KnowledgeSession Start(const core::Problem& problem, SeedAdapter adapt) {
    KnowledgeHookOptions options;
    options.kb_path = db_path_;
    options.cache_dir = dir_;
    options.quiet = true;
    options.machine = "m";
    options.adapt_seed = std::move(adapt);
    return StartKnowledge(options, problem);
  }

  /// The adapter `kernelevolve optimize` uses.
  static SeedAdapter Adapter(const operators::TemplateOperator& op, const core::Problem& problem) {
    return [&op, &problem](const core::Candidate& prior, std::string* why) -> std::optional<core::Candidate> {
      if (prior.operator_name != op.Name()) return prior;
      return op.Rederive(problem, prior, 2, why);
    };
  }
};

TEST_F(WarmStartSeedTest, ATemplateKernelFromOtherSizesIsWrittenAgainWithItsKnobs) {
  const core::Problem now = SoftmaxProblem(64, 1024);
  const auto match = operators::templates::MatchTemplateForTarget("cpu", now, 2);
  ASSERT_NE(match.tmpl, nullptr) << match.unsupported;
  const nlohmann::json knobs = match.tmpl->Drafts().back();
  Record(SoftmaxProblem(32, 512), "template", knobs, "// the kernel written for 32 x 512");

  operators::TemplateOperator op("cpu");
  KnowledgeSession session = Start(now, Adapter(op, now));
  ASSERT_EQ(session.plan.seeds.size(), 1u) << session.dropped_seeds.dump();
  const core::Candidate& seed = session.plan.seeds[0];
  EXPECT_EQ(seed.source, match.tmpl->Generate(knobs));
  EXPECT_EQ(seed.knobs, match.tmpl->Space().Canonical(knobs));
  EXPECT_EQ(seed.template_name, match.tmpl->Name());
  EXPECT_TRUE(core::IsWarmStartSeed(seed)) << seed.rationale;
  EXPECT_NE(seed.rationale.find("written again"), std::string::npos) << seed.rationale;
  EXPECT_TRUE(session.seed_regenerated);
  EXPECT_EQ(session.seed_hash, core::ContentHash(seed.source));
  EXPECT_TRUE(session.dropped_seeds.empty());

  // Without an adapter the stored source is evaluated as it was recorded.
  KnowledgeSession as_stored = Start(now, nullptr);
  ASSERT_EQ(as_stored.plan.seeds.size(), 1u);
  EXPECT_EQ(as_stored.plan.seeds[0].source, "// the kernel written for 32 x 512");
  EXPECT_FALSE(as_stored.seed_regenerated);
}

TEST_F(WarmStartSeedTest, KnobsOutsideTheSpaceAreFittedToIt) {
  const core::Problem now = SoftmaxProblem(32, 512);
  const auto match = operators::templates::MatchTemplateForTarget("cpu", now, 2);
  ASSERT_NE(match.tmpl, nullptr) << match.unsupported;
  nlohmann::json knobs = match.tmpl->Drafts().back();
  knobs["math"] = "bogus";
  Record(now, "template", knobs, "// stale");
  operators::TemplateOperator op("cpu");
  KnowledgeSession session = Start(now, Adapter(op, now));
  ASSERT_EQ(session.plan.seeds.size(), 1u) << session.dropped_seeds.dump();
  const core::Candidate& seed = session.plan.seeds[0];
  EXPECT_EQ(seed.knobs, match.tmpl->Space().Fit(knobs));
  EXPECT_EQ(seed.source, match.tmpl->Generate(seed.knobs));
  EXPECT_NE(seed.rationale.find("knobs fitted"), std::string::npos) << seed.rationale;
  EXPECT_NE(seed.rationale.find("bogus"), std::string::npos) << seed.rationale;
  EXPECT_EQ(seed.rationale.find("with the prior's knobs"), std::string::npos) << seed.rationale;
  EXPECT_TRUE(session.dropped_seeds.empty());
  EXPECT_TRUE(session.seed_knobs_fitted);
  const nlohmann::json doc = FinishKnowledge(session, now, {}, 0, dir_ / "run");
  EXPECT_TRUE(doc["prior"]["knobs_fitted"].get<bool>());
  EXPECT_EQ(doc["prior"]["seed_knobs"], seed.knobs);
  EXPECT_EQ(doc["prior"]["knobs"], knobs);  // the stored ones
}

TEST_F(WarmStartSeedTest, AnotherTemplatesPriorIsDroppedWithTheReason) {
  const core::Problem now = SoftmaxProblem(32, 512);
  Record(now, "template", {{"threads", "1"}}, "// stale", "rowwise");
  operators::TemplateOperator op("cpu");
  KnowledgeSession session = Start(now, Adapter(op, now));
  EXPECT_TRUE(session.plan.seeds.empty());
  EXPECT_TRUE(session.plan.seed_sources.empty());
  EXPECT_TRUE(session.seed_hash.empty());
  ASSERT_EQ(session.dropped_seeds.size(), 1u);
  const std::string why = session.dropped_seeds[0]["why"];
  EXPECT_NE(why.find("template 'rowwise'"), std::string::npos) << why;
  EXPECT_EQ(session.plan.notes.size(), 1u);  // the experience stays a note

  // The record's result.json section names the dropped seed.
  const nlohmann::json doc = FinishKnowledge(session, now, {}, 0, dir_ / "run");
  EXPECT_TRUE(doc["prior"].is_null());
  EXPECT_EQ(doc["dropped_seeds"], session.dropped_seeds);
}

TEST_F(WarmStartSeedTest, ADroppedPriorMakesWayForTheNextMatch) {
  const core::Problem now = SoftmaxProblem(32, 512);
  const auto match = operators::templates::MatchTemplateForTarget("cpu", now, 2);
  ASSERT_NE(match.tmpl, nullptr) << match.unsupported;
  const nlohmann::json knobs = match.tmpl->Drafts().back();
  Record(SoftmaxProblem(64, 512), "template", knobs, "// recorded at 64 x 512");  // farther, usable
  Record(now, "template", {{"threads", "1"}}, "// same shape, another template", "rowwise");  // nearest, dropped
  operators::TemplateOperator op("cpu");
  KnowledgeSession session = Start(now, Adapter(op, now));
  ASSERT_EQ(session.dropped_seeds.size(), 1u) << session.dropped_seeds.dump();
  ASSERT_EQ(session.plan.seeds.size(), 1u);
  EXPECT_EQ(session.plan.seeds[0].source, match.tmpl->Generate(knobs));
  ASSERT_EQ(session.plan.seed_sources.size(), 1u);
  EXPECT_NE(session.plan.seed_sources[0].experience.id, session.dropped_seeds[0]["experience_id"].get<int64_t>());
  EXPECT_NE(session.dropped_seeds[0]["why"].get<std::string>().find("rowwise"), std::string::npos)
      << session.dropped_seeds[0].dump();
}

TEST_F(WarmStartSeedTest, AnotherOperatorsKernelRunsAsStored) {
  const core::Problem now = SoftmaxProblem(64, 1024);
  Record(SoftmaxProblem(32, 512), "llm:test-model", nlohmann::json::object(), "// written by a model");
  operators::TemplateOperator op("cpu");
  KnowledgeSession session = Start(now, Adapter(op, now));
  ASSERT_EQ(session.plan.seeds.size(), 1u);
  EXPECT_EQ(session.plan.seeds[0].source, "// written by a model");
  EXPECT_FALSE(session.seed_regenerated);

  // Rederive itself refuses it: only the templates can write their kernels again.
  std::string why;
  EXPECT_FALSE(op.Rederive(now, session.plan.seeds[0], 2, &why).has_value());
  EXPECT_NE(why.find("llm:test-model"), std::string::npos) << why;
}

TEST_F(WarmStartSeedTest, AnAdapterThatThrowsDropsItsSeedAndTheRunGoesOn) {
  const core::Problem now = SoftmaxProblem(32, 512);
  Record(now, "template", {{"math", "libm"}}, "// stored");
  KnowledgeSession session = Start(now, [](const core::Candidate&, std::string*) -> std::optional<core::Candidate> {
    throw std::runtime_error("generator failed");
  });
  EXPECT_TRUE(session.plan.seeds.empty());
  ASSERT_EQ(session.dropped_seeds.size(), 1u);
  EXPECT_EQ(session.dropped_seeds[0]["why"], "generator failed");
}

}  // namespace
}  // namespace kernelevolve::cli
