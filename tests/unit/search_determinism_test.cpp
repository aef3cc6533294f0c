// With fakes and --jobs 1, a fixed seed gives the same tree node for node for every
// policy, and a search killed at any point then resumed gives that same tree.
#include <gtest/gtest.h>

#include <set>

#include "search_test_util.h"

namespace kernelevolve {
namespace {

using testing_util::FakeSearch;
using testing_util::TreeSignature;

class PolicyDeterminismTest : public testing_util::TempDirTest,
                              public ::testing::WithParamInterface<std::string> {};

TEST_P(PolicyDeterminismTest, SameSeedSameTreeNodeForNode) {
  FakeSearch search;
  search.policy = GetParam();
  search.budget = 40;
  search.seed = 11;
  auto a = search.Run(dir_ / "a.db");
  auto b = search.Run(dir_ / "b.db");
  EXPECT_EQ(a.stop_reason, "budget");
  EXPECT_EQ(a.evaluations, 40);
  EXPECT_EQ(b.best_node_id, a.best_node_id);
  const auto tree_a = TreeSignature(dir_ / "a.db");
  EXPECT_EQ(tree_a.size(), 40u);
  EXPECT_EQ(tree_a, TreeSignature(dir_ / "b.db"));
  // Every node's parent exists and no source was evaluated twice.
  auto store = store::Store::Open(dir_ / "a.db");
  std::set<int64_t> ids;
  std::set<std::string> hashes;
  for (const auto& n : store.LoadNodes(1)) {
    EXPECT_TRUE(n.parent_id == -1 || ids.count(n.parent_id)) << n.id;
    EXPECT_TRUE(hashes.insert(n.source_hash).second) << n.id;
    ids.insert(n.id);
  }
  EXPECT_TRUE(store.LoadPending(1).empty());  // a finished search leaves nothing pending
}

TEST_P(PolicyDeterminismTest, KilledAnywhereThenResumedGivesTheSameTree) {
  FakeSearch reference;
  reference.policy = GetParam();
  reference.budget = 30;
  reference.seed = 5;
  reference.Run(dir_ / "reference.db");
  const auto expected = TreeSignature(dir_ / "reference.db");
  ASSERT_EQ(expected.size(), 30u);
  // Crash in the middle of an evaluation (the pending candidate is re-queued) during the
  // drafts and later; crash inside the commit transaction (rolled back, re-evaluated).
  struct Crash {
    int eval_at;
    int notify_at;
  };
  for (const Crash crash : {Crash{2, 0}, Crash{9, 0}, Crash{23, 0}, Crash{0, 4}, Crash{0, 17}}) {
    const auto db = dir_ / fmt::format("crash_{}_{}.db", crash.eval_at, crash.notify_at);
    FakeSearch first = reference;
    first.eval_crash_at = crash.eval_at;
    first.notify_crash_at = crash.notify_at;
    EXPECT_THROW(first.Run(db), std::runtime_error);
    FakeSearch resumed = reference;  // a fresh process: new policy, tree and evaluator
    auto outcome = resumed.Run(db);
    EXPECT_EQ(outcome.evaluations, 30);
    EXPECT_GT(outcome.resumed_evaluations, 0);
    EXPECT_EQ(TreeSignature(db), expected)
        << "crash at evaluation " << crash.eval_at << " / notify " << crash.notify_at;
  }
}

TEST_P(PolicyDeterminismTest, ResumingTwiceAndAfterTheEndChangesNothing) {
  FakeSearch search;
  search.policy = GetParam();
  search.budget = 20;
  search.Run(dir_ / "done.db");
  const auto before = TreeSignature(dir_ / "done.db");
  auto again = search.Run(dir_ / "done.db");  // budget already spent
  EXPECT_EQ(again.stop_reason, "budget");
  EXPECT_EQ(again.resumed_evaluations, 20);
  EXPECT_EQ(TreeSignature(dir_ / "done.db"), before);
}

INSTANTIATE_TEST_SUITE_P(Policies, PolicyDeterminismTest,
                         ::testing::Values("greedy", "ucb1", "mcts", "evolutionary", "random"));

class SearchSeedTest2 : public testing_util::TempDirTest {};

TEST_F(SearchSeedTest2, SeedChangesTheRandomPolicies) {
  for (const std::string policy : {"random", "evolutionary"}) {
    FakeSearch a, b;
    a.policy = b.policy = policy;
    a.seed = 1;
    b.seed = 2;
    a.noise = b.noise = 0;  // only the policy's draws differ
    a.Run(dir_ / (policy + "1.db"));
    b.Run(dir_ / (policy + "2.db"));
    EXPECT_NE(TreeSignature(dir_ / (policy + "1.db")), TreeSignature(dir_ / (policy + "2.db")))
        << policy;
  }
}

}  // namespace
}  // namespace kernelevolve
