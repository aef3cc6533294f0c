// The search tree's indexes: children, best, subtree and in-flight counts, stats.
#include <gtest/gtest.h>

#include "core/error.h"
#include "search/tree.h"

namespace kernelevolve::search {
namespace {

Node MakeNode(int64_t id, int64_t parent, double fitness) {
  Node n;
  n.id = id;
  n.parent_id = parent;
  n.source_hash = "h" + std::to_string(id);
  n.evaluation.correct = fitness > 0;
  n.evaluation.fitness = fitness;
  n.evaluation.status = fitness > 0 ? core::Status::kOk : core::Status::kCompileError;
  return n;
}

PendingCandidate MakePending(int64_t id, int64_t parent, const std::string& hash) {
  PendingCandidate p;
  p.id = id;
  p.parent_id = parent;
  p.source_hash = hash;
  return p;
}

TEST(TreeTest, ChildrenSubtreesAndLineage) {
  Tree tree;
  tree.Add(MakeNode(1, kRootId, 1.0));
  tree.Add(MakeNode(2, kRootId, 0));
  tree.Add(MakeNode(3, 1, 2.0));
  tree.Add(MakeNode(4, 3, 1.5));
  tree.Add(MakeNode(5, 1, 0));
  EXPECT_EQ(tree.ChildIds(kRootId), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(tree.ChildIds(1), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(tree.ChildCount(4), 0);
  EXPECT_EQ(tree.Children(1).size(), 2u);
  EXPECT_EQ(tree.SubtreeSize(1), 4);
  EXPECT_EQ(tree.SubtreeSize(3), 2);
  EXPECT_EQ(tree.SubtreeSize(kRootId), 5);
  std::vector<int64_t> lineage;
  for (const Node* n : tree.Lineage(4)) lineage.push_back(n->id);
  EXPECT_EQ(lineage, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_TRUE(tree.Lineage(kRootId).empty());
  EXPECT_THROW(tree.Add(MakeNode(6, 99, 1.0)), core::InternalError);  // unknown parent
  EXPECT_THROW(tree.Add(MakeNode(3, 1, 1.0)), core::InternalError);   // duplicate id
}

TEST(TreeTest, BestIsKeptIncrementallyAndTiesGoToTheEarlierNode) {
  Tree tree;
  EXPECT_EQ(tree.Best(), nullptr);
  tree.Add(MakeNode(1, kRootId, 0));
  EXPECT_EQ(tree.Best(), nullptr);
  tree.Add(MakeNode(2, kRootId, 1.5));
  tree.Add(MakeNode(3, 2, 1.5));
  EXPECT_EQ(tree.Best()->id, 2);
  tree.Add(MakeNode(4, 3, 1.6));
  EXPECT_EQ(tree.Best()->id, 4);
}

TEST(TreeTest, PendingCountsInFlightAndHashes) {
  Tree tree;
  tree.Add(MakeNode(1, kRootId, 1.0));
  tree.Add(MakeNode(2, 1, 1.0));
  tree.AddPending(MakePending(10, 2, "p10"));
  tree.AddPending(MakePending(11, kRootId, "p11"));
  EXPECT_EQ(tree.InFlight(2), 1);
  EXPECT_EQ(tree.InFlight(1), 1);
  EXPECT_EQ(tree.InFlight(kRootId), 2);
  EXPECT_TRUE(tree.SeenHashes().count("p10"));
  tree.RemovePending(10);
  EXPECT_EQ(tree.InFlight(1), 0);
  EXPECT_FALSE(tree.SeenHashes().count("p10"));
  // A pending candidate that became a node keeps its hash seen.
  tree.Add(MakeNode(3, kRootId, 1.0));  // hash "h3"
  tree.AddPending(MakePending(12, kRootId, "h3"));
  tree.RemovePending(12);
  EXPECT_TRUE(tree.SeenHashes().count("h3"));
  EXPECT_THROW(tree.RemovePending(12), core::InternalError);
}

TEST(TreeTest, StatsChangesAreTrackedForCheckpoints) {
  Tree tree;
  tree.Add(MakeNode(1, kRootId, 1.0));
  tree.Add(MakeNode(2, 1, 1.0));
  EXPECT_TRUE(tree.TakeDirtyStats().empty());
  tree.MutableStats(2).visits = 3;
  tree.MarkExhausted(1);
  tree.MutableStats(kRootId).visits = 1;
  tree.MutableStats(2).value_sum = 1.5;
  EXPECT_EQ(tree.TakeDirtyStats(), (std::vector<int64_t>{2, 1, kRootId}));
  EXPECT_TRUE(tree.TakeDirtyStats().empty());
  EXPECT_TRUE(tree.IsExhausted(1));
  EXPECT_EQ(tree.Stats(2).visits, 3);
  tree.MarkExhausted(1);  // already: no change recorded
  EXPECT_TRUE(tree.TakeDirtyStats().empty());
}

}  // namespace
}  // namespace kernelevolve::search
