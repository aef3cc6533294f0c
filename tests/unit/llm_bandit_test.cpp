// The model bandit: UCB1 on fitness gained per dollar.
#include <gtest/gtest.h>

#include "operators/llm/model_bandit.h"

namespace kernelevolve::operators::llm {
namespace {

TEST(LlmBandit, TriesEveryModelOnceInOrder) {
  ModelBandit b({"a", "b", "c"});
  EXPECT_EQ(b.Choose(), 0u);
  b.Record(0, 0.5, 0.01);
  EXPECT_EQ(b.Choose(), 1u);
  b.Record(1, 0.5, 0.01);
  EXPECT_EQ(b.Choose(), 2u);
}

TEST(LlmBandit, FavoursTheModelWithMoreImprovementPerDollar) {
  // Same gains, one model ten times cheaper: it is picked most of the time.
  ModelBandit b({"expensive", "cheap"}, 0.5);
  int cheap = 0;
  for (int i = 0; i < 200; ++i) {
    size_t arm = b.Choose();
    if (arm == 1) ++cheap;
    b.Record(arm, 0.2, arm == 1 ? 0.001 : 0.01);
  }
  EXPECT_GT(cheap, 150);
  EXPECT_GT(b.pulls(0), 1);  // but the other keeps being explored
}

TEST(LlmBandit, FailuresEarnNothingAndFreeModelsDoNotDivideByZero) {
  ModelBandit b({"broken", "local"});
  b.RecordNothing(0);
  b.Record(1, 0.3, 0.0);  // a free local model: min_cost keeps the reward finite
  EXPECT_DOUBLE_EQ(b.mean(0), 0.0);
  EXPECT_DOUBLE_EQ(b.mean(1), 0.3 / 1e-4);
  EXPECT_EQ(b.Choose(), 1u);
  b.Record(1, -0.5, 0.01);  // a regression counts as no gain, not as a loss
  EXPECT_DOUBLE_EQ(b.mean(1), 0.3 / 1e-4 / 2);
  EXPECT_EQ(b.Find("local"), 1);
  EXPECT_EQ(b.Find("nope"), -1);
}

}  // namespace
}  // namespace kernelevolve::operators::llm
