#include <gtest/gtest.h>

#include "core/error.h"
#include "search/selection_policy.h"
#include "search/termination.h"

namespace kernelevolve::search {
namespace {

TEST(TerminationTest, BudgetComesBeforeTimeLimit) {
  TerminationOptions o{.budget = 5, .time_limit_seconds = 10};
  EXPECT_EQ(CheckTermination(o, 4, 1.0), std::nullopt);
  EXPECT_EQ(CheckTermination(o, 5, 1.0), "budget");
  EXPECT_EQ(CheckTermination(o, 5, 20.0), "budget");
  EXPECT_EQ(CheckTermination(o, 2, 10.0), "time_limit");
}

Node MakeNode(int64_t id, int64_t parent, bool correct, double fitness) {
  Node n;
  n.id = id;
  n.parent_id = parent;
  n.source_hash = std::to_string(id);
  n.evaluation.correct = correct;
  n.evaluation.fitness = fitness;
  n.evaluation.status = correct ? core::Status::kOk : core::Status::kIncorrect;
  return n;
}

TEST(GreedyPolicyTest, OrdersCorrectNodesByFitnessAndSkipsExhausted) {
  Tree tree;
  tree.Add(MakeNode(1, kRootId, true, 1.2));
  tree.Add(MakeNode(2, kRootId, true, 2.5));
  tree.Add(MakeNode(3, kRootId, false, 0));
  tree.Add(MakeNode(4, 2, true, 1.9));
  GreedyPolicy policy;
  EXPECT_EQ(policy.Select(tree, 3), (std::vector<int64_t>{2, 4, 1}));
  tree.MarkExhausted(2);
  EXPECT_EQ(policy.Select(tree, 1), (std::vector<int64_t>{4}));
  EXPECT_EQ(tree.Best()->id, 2);  // exhausted nodes still count as the best
}

TEST(GreedyPolicyTest, FallsBackToRepairThenRoot) {
  Tree tree;
  GreedyPolicy policy;
  EXPECT_EQ(policy.Select(tree, 1), (std::vector<int64_t>{kRootId}));
  tree.Add(MakeNode(1, kRootId, false, 0));
  tree.Add(MakeNode(2, kRootId, false, 0));
  EXPECT_EQ(policy.Select(tree, 2), (std::vector<int64_t>{2, kRootId}));
  tree.MarkExhausted(2);
  tree.MarkExhausted(1);
  tree.MarkExhausted(kRootId);
  EXPECT_TRUE(policy.Select(tree, 1).empty());
}

TEST(GreedyPolicyTest, UnknownPolicyNameIsAnError) {
  EXPECT_THROW(MakePolicy("annealing"), core::InvalidInputError);
  EXPECT_EQ(MakePolicy("greedy")->Name(), "greedy");
}

}  // namespace
}  // namespace kernelevolve::search
