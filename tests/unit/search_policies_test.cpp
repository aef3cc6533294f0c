// Each selection policy's choices on small hand-built trees.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/error.h"
#include "search/evolutionary_policy.h"
#include "search/mcts_policy.h"
#include "search/random_policy.h"
#include "search/selection_policy.h"
#include "search/ucb1_policy.h"

namespace kernelevolve::search {
namespace {

Node MakeNode(int64_t id, int64_t parent, double fitness) {
  Node n;
  n.id = id;
  n.parent_id = parent;
  n.source_hash = "h" + std::to_string(id);
  n.evaluation.correct = fitness > 0;
  n.evaluation.fitness = fitness;
  n.evaluation.status = fitness > 0 ? core::Status::kOk : core::Status::kIncorrect;
  return n;
}

/// Adds a node and notifies the policy, as the search loop does.
void Grow(Tree& tree, SelectionPolicy& policy, int64_t id, int64_t parent, double fitness) {
  tree.Add(MakeNode(id, parent, fitness));
  policy.Notify(tree, tree.Get(id));
}

TEST(Ucb1PolicyTest, SelectsTheHighestScoreWithFitnessNormalizedByTheBest) {
  Tree tree;
  Ucb1Policy policy(std::sqrt(2.0));
  tree.Add(MakeNode(1, kRootId, 2.0));  // best, heavily explored below
  tree.Add(MakeNode(2, kRootId, 1.0));  // half as fit, never expanded
  for (int64_t id = 3; id <= 7; ++id) tree.Add(MakeNode(id, 1, 0));  // 5 failed children
  // score(1) = 1 + sqrt2 * sqrt(ln 7 / 6) = 1.805; score(2) = 0.5 + sqrt2 * sqrt(ln 7) = 2.473;
  // a failed leaf: 0 + sqrt2 * sqrt(ln 6 / 1) = 1.893.
  EXPECT_NEAR(policy.Score(tree, 1), 1.0 + std::sqrt(2.0) * std::sqrt(std::log(7.0) / 6), 1e-12);
  EXPECT_NEAR(policy.Score(tree, 2), 0.5 + std::sqrt(2.0) * std::sqrt(std::log(7.0)), 1e-12);
  EXPECT_NEAR(policy.Score(tree, 3), std::sqrt(2.0) * std::sqrt(std::log(6.0)), 1e-12);
  EXPECT_EQ(policy.Select(tree, 1), (std::vector<int64_t>{2}));
  EXPECT_EQ(policy.Select(tree, 3), (std::vector<int64_t>{2, 3, 4}));  // ties: earlier first
}

TEST(Ucb1PolicyTest, WithoutExplorationItIsGreedyAndInFlightWorkLowersAScore) {
  Tree tree;
  tree.Add(MakeNode(1, kRootId, 1.0));
  tree.Add(MakeNode(2, kRootId, 3.0));
  tree.Add(MakeNode(3, kRootId, 2.0));
  Ucb1Policy exploit(0.0);
  EXPECT_EQ(exploit.Select(tree, 2), (std::vector<int64_t>{2, 3}));
  Ucb1Policy explore(2.0);
  const double before = explore.Score(tree, 2);
  PendingCandidate p;
  p.id = 50;
  p.parent_id = 2;
  p.source_hash = "p";
  tree.AddPending(p);
  EXPECT_LT(explore.Score(tree, 2), before);
  tree.MarkExhausted(2);
  EXPECT_EQ(exploit.Select(tree, 1), (std::vector<int64_t>{3}));
  tree.MarkExhausted(1);
  tree.MarkExhausted(3);
  EXPECT_EQ(exploit.Select(tree, 1), (std::vector<int64_t>{kRootId}));  // only the root left
  tree.MarkExhausted(kRootId);
  EXPECT_TRUE(exploit.Select(tree, 1).empty());
}

TEST(MctsPolicyTest, BackPropagatesNormalizedRewardsToTheRoot) {
  Tree tree;
  MctsPolicy policy(1.0);
  Grow(tree, policy, 1, kRootId, 2.0);  // reward 1 (the best so far)
  Grow(tree, policy, 2, 1, 1.0);        // reward 0.5
  Grow(tree, policy, 3, 2, 0);          // failure: reward 0
  Grow(tree, policy, 4, kRootId, 4.0);  // reward 1; earlier rewards stay as they were
  EXPECT_EQ(tree.Stats(1).visits, 3);
  EXPECT_DOUBLE_EQ(tree.Stats(1).value_sum, 1.5);
  EXPECT_EQ(tree.Stats(2).visits, 2);
  EXPECT_DOUBLE_EQ(tree.Stats(2).value_sum, 0.5);
  EXPECT_EQ(tree.Stats(kRootId).visits, 4);
  EXPECT_DOUBLE_EQ(tree.Stats(kRootId).value_sum, 2.5);
  // Rebuilding from scratch gives the same numbers.
  Tree copy;
  for (const Node& n : tree.Nodes()) copy.Add(MakeNode(n.id, n.parent_id, n.evaluation.fitness));
  MctsPolicy::Rebuild(copy);
  for (int64_t id : {1, 2, 3, 4, -1}) {
    EXPECT_EQ(copy.Stats(id).visits, tree.Stats(id).visits) << id;
    EXPECT_DOUBLE_EQ(copy.Stats(id).value_sum, tree.Stats(id).value_sum) << id;
  }
}

TEST(MctsPolicyTest, DescendsByUctWithProgressiveWidening) {
  Tree tree;
  MctsPolicy policy(0.5);
  Grow(tree, policy, 1, kRootId, 2.0);  // reward 1
  Grow(tree, policy, 2, kRootId, 1.0);  // reward 0.5
  Grow(tree, policy, 3, kRootId, 1.5);  // reward 0.75
  // Root: 3 visits, floor(sqrt 3) = 1 < 3 children: no new draft. Node 1 has the best
  // Q (1.0) and it is a leaf (1 visit, 0 children < 1): expand it.
  EXPECT_EQ(policy.Select(tree, 1), (std::vector<int64_t>{1}));
  Grow(tree, policy, 4, 1, 0);  // its child fails: Q(1) = 0.5 over 2 visits
  // UCT at the root (4 visits): 1: 0.5 + 0.5 sqrt(ln 4 / 2) = 0.92; 2: 0.5 + 0.5 sqrt(ln 4)
  // = 1.09; 3: 0.75 + 0.59 = 1.34.
  EXPECT_EQ(policy.Select(tree, 1), (std::vector<int64_t>{3}));
  // Two selections in one call: the first counts as in flight (a virtual loss), so the
  // second does not pile onto the same leaf.
  EXPECT_EQ(policy.Select(tree, 2), (std::vector<int64_t>{3, 2}));
  // A 4th draft once the root has 16 visits (floor(sqrt 16) = 4 > 3 children).
  for (int64_t id = 5; id <= 15; ++id) Grow(tree, policy, id, 3, 1.0);
  EXPECT_EQ(tree.Stats(kRootId).visits, 15);
  EXPECT_NE(policy.Select(tree, 1), (std::vector<int64_t>{kRootId}));
  Grow(tree, policy, 16, 3, 1.0);
  EXPECT_EQ(policy.Select(tree, 1), (std::vector<int64_t>{kRootId}));
}

TEST(MctsPolicyTest, SkipsExhaustedSubtreesAndEndsWhenNothingIsLeft) {
  Tree tree;
  MctsPolicy policy(1.0);
  Grow(tree, policy, 1, kRootId, 3.0);
  Grow(tree, policy, 2, kRootId, 1.0);
  tree.MarkExhausted(1);
  EXPECT_EQ(policy.Select(tree, 1), (std::vector<int64_t>{2}));
  tree.MarkExhausted(2);
  EXPECT_EQ(policy.Select(tree, 1), (std::vector<int64_t>{kRootId}));
  tree.MarkExhausted(kRootId);
  EXPECT_TRUE(policy.Select(tree, 1).empty());
}

TEST(EvolutionaryPolicyTest, IslandsTournamentsAndMigration) {
  PolicyOptions options;
  options.seed = 7;
  options.islands = 2;
  options.migration_interval = 2;
  options.population_size = 3;
  EvolutionaryPolicy policy(options);
  Tree tree;
  policy.RestoreState(tree, nullptr);
  // Drafts are dealt round-robin: 1, 3 on island 0; 2, 4 on island 1.
  Grow(tree, policy, 1, kRootId, 1.0);
  Grow(tree, policy, 2, kRootId, 2.0);
  Grow(tree, policy, 3, kRootId, 3.0);
  Grow(tree, policy, 4, kRootId, 0.5);
  EXPECT_EQ(policy.Islands()[0], (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(policy.Islands()[1], (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(tree.Stats(3).island, 0);
  // Turn 0 is island 0's: the parent comes from {1, 3}; its child joins island 0.
  std::vector<int64_t> pick = policy.Select(tree, 1);
  ASSERT_EQ(pick.size(), 1u);
  EXPECT_TRUE(pick[0] == 1 || pick[0] == 3);
  Grow(tree, policy, 5, pick[0], 2.5);
  EXPECT_EQ(tree.Stats(5).island, 0);
  // Island 0 now holds 3 members (capacity 3); one more drops the least fit.
  pick = policy.Select(tree, 1);  // island 1's turn
  ASSERT_EQ(pick.size(), 1u);
  EXPECT_TRUE(pick[0] == 2 || pick[0] == 4);
  Grow(tree, policy, 6, pick[0], 0.1);
  EXPECT_EQ(tree.Stats(6).island, 1);
  pick = policy.Select(tree, 1);  // generation 1, island 0
  Grow(tree, policy, 7, pick[0], 5.0);
  EXPECT_EQ(policy.Islands()[0].size(), 3u);
  EXPECT_EQ(std::count(policy.Islands()[0].begin(), policy.Islands()[0].end(), 1), 0);  // worst
  policy.Select(tree, 1);  // island 1
  // Generation 2 starts with a migration: island 0's best (7) joins island 1.
  EXPECT_EQ(std::count(policy.Islands()[1].begin(), policy.Islands()[1].end(), 7), 0);
  policy.Select(tree, 1);
  EXPECT_EQ(std::count(policy.Islands()[1].begin(), policy.Islands()[1].end(), 7), 1);
}

TEST(EvolutionaryPolicyTest, TournamentPrefersTheFittestAndStateRoundTrips) {
  PolicyOptions options;
  options.seed = 3;
  options.islands = 1;
  EvolutionaryPolicy policy(options);
  Tree tree;
  policy.RestoreState(tree, nullptr);
  Grow(tree, policy, 1, kRootId, 1.0);
  Grow(tree, policy, 2, kRootId, 9.0);
  Grow(tree, policy, 3, kRootId, 2.0);
  std::map<int64_t, int> wins;
  EvolutionaryPolicy copy(options);
  copy.RestoreState(tree, policy.SaveState());
  for (int i = 0; i < 300; ++i) {
    std::vector<int64_t> a = policy.Select(tree, 1);
    std::vector<int64_t> b = copy.Select(tree, 1);
    ASSERT_EQ(a, b);  // the saved state reproduces every draw
    ++wins[a.front()];
    policy.OnExhausted(-999);  // no such selection: ignored
  }
  // With 3 draws of 3, the fittest wins unless never drawn: P = 1 - (2/3)^3 = 0.70.
  EXPECT_GT(wins[2], 170);
  EXPECT_LT(wins[2], 250);
  EXPECT_GT(wins[1], 0);
  EXPECT_THROW(MakePolicy("evolutionary", PolicyOptions{.islands = 0}), core::InvalidInputError);
}

TEST(RandomPolicyTest, UniformOverOpenNodesAndReproducibleBySeed) {
  Tree tree;
  tree.Add(MakeNode(1, kRootId, 1.0));
  tree.Add(MakeNode(2, kRootId, 0));
  tree.Add(MakeNode(3, 1, 2.0));
  RandomPolicy a(42), b(42), c(43);
  std::map<int64_t, int> counts;
  std::vector<int64_t> seq_a, seq_c;
  for (int i = 0; i < 4000; ++i) {
    const int64_t pick = a.Select(tree, 1).front();
    ASSERT_EQ(pick, b.Select(tree, 1).front());
    seq_a.push_back(pick);
    seq_c.push_back(c.Select(tree, 1).front());
    ++counts[pick];
  }
  EXPECT_NE(seq_a, seq_c);
  for (int64_t id : {-1, 1, 2, 3}) {  // the root and three nodes, 1000 each expected
    EXPECT_GT(counts[id], 850) << id;
    EXPECT_LT(counts[id], 1150) << id;
  }
  tree.MarkExhausted(1);
  a.OnExhausted(1);
  tree.MarkExhausted(kRootId);
  a.OnExhausted(kRootId);
  for (int i = 0; i < 200; ++i) {
    const int64_t pick = a.Select(tree, 1).front();
    EXPECT_TRUE(pick == 2 || pick == 3) << pick;
  }
  std::vector<int64_t> both = a.Select(tree, 5);  // only two open: two distinct picks
  EXPECT_EQ(both.size(), 2u);
  EXPECT_NE(both[0], both[1]);
}

TEST(PolicyFactoryTest, MakesEveryPolicyByName) {
  for (const std::string& name : PolicyNames()) EXPECT_EQ(MakePolicy(name)->Name(), name);
  EXPECT_THROW(MakePolicy("annealing"), core::InvalidInputError);
  EXPECT_THROW(MakePolicy("ucb1", PolicyOptions{.ucb_c = -1}), core::InvalidInputError);
}

}  // namespace
}  // namespace kernelevolve::search
