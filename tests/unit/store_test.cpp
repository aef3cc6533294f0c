// Store: round trips of every field, commit semantics, lineage, TopK, dedup by hash.
#include "store/store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "store_test_util.h"

namespace kernelevolve::store {
namespace {

using testing::ExpectNodeEq;
using testing::Ids;
using testing::MakeNode;
using testing::SampleRun;
using testing::StoreTest;

TEST_F(StoreTest, RoundTripsRunAndNodesWithEveryField) {
  Store store = Store::Open(db_path_);
  const RunRecord run = SampleRun();
  const int64_t run_id = store.CreateRun(run);

  search::Node draft = MakeNode(-1, 1, 1.25, true, "draft");
  store.CommitNode(run_id, draft);
  EXPECT_GE(draft.id, 1);

  search::Node child = MakeNode(draft.id, 2, 2.5, true, "child");
  child.candidate.rationale = "Fusion réduite ×2 — ускорение, 速い 🚀";
  child.candidate.source = "// µs-level kernel, π ≈ 3.14159 — 核函数\n" + child.candidate.source;
  child.candidate.knobs["label"] = "плитка 🧱";
  child.source_hash = core::ContentHash(child.candidate.source);
  child.evaluation.checks[0].max_abs_error = std::numeric_limits<double>::infinity();
  child.evaluation.checks[1].max_rel_error = std::numeric_limits<double>::quiet_NaN();
  store.CommitNode(run_id, child);

  search::Node failed = MakeNode(draft.id, 2, 0, false, "failed");
  failed.evaluation.status = core::Status::kCompileError;
  failed.evaluation.checks.clear();
  failed.evaluation.latency = {};
  failed.evaluation.kernel_only = {};
  store.CommitNode(run_id, failed);
  EXPECT_LT(draft.id, child.id);
  EXPECT_LT(child.id, failed.id);

  const std::vector<search::Node> loaded = store.LoadNodes(run_id);
  ASSERT_EQ(loaded.size(), 3u);
  ExpectNodeEq(loaded[0], draft);
  ExpectNodeEq(loaded[1], child);
  ExpectNodeEq(loaded[2], failed);
  EXPECT_EQ(loaded[0].parent_id, -1);  // NULL parent read back as a draft
  EXPECT_TRUE(std::isinf(loaded[1].evaluation.checks[0].max_abs_error));

  const auto single = store.GetNode(child.id);
  ASSERT_TRUE(single.has_value());
  ExpectNodeEq(*single, child);
  EXPECT_FALSE(store.GetNode(child.id + 100).has_value());

  const auto stored_run = store.GetRun(run_id);
  ASSERT_TRUE(stored_run.has_value());
  EXPECT_EQ(stored_run->id, run_id);
  EXPECT_EQ(stored_run->problem, run.problem);
  EXPECT_EQ(stored_run->problem_path, run.problem_path);
  EXPECT_EQ(stored_run->target, run.target);
  EXPECT_EQ(stored_run->config, run.config);
  EXPECT_EQ(stored_run->machine, run.machine);
  EXPECT_EQ(stored_run->started_unix_s, run.started_unix_s);
  EXPECT_EQ(stored_run->finished_unix_s, 0);
  EXPECT_EQ(stored_run->status, "running");
  EXPECT_EQ(stored_run->stop_reason, "");
  EXPECT_FALSE(store.GetRun(run_id + 1).has_value());
}

TEST_F(StoreTest, CommitFillsCreatedTimeAndHashAndRejectsDoubleCommit) {
  Store store = Store::Open(db_path_);
  const int64_t run_id = store.CreateRun(SampleRun());
  search::Node node = MakeNode(-1, 1, 1.0, true, "x");
  node.created_unix_s = 0;
  node.source_hash.clear();
  store.CommitNode(run_id, node);
  EXPECT_GT(node.created_unix_s, 1.6e9);
  EXPECT_EQ(node.source_hash, core::ContentHash(node.candidate.source));
  EXPECT_TRUE(store.HasSourceHash(run_id, node.source_hash));
  EXPECT_THROW(store.CommitNode(run_id, node), core::InternalError);
  EXPECT_EQ(store.LoadNodes(run_id).size(), 1u);
}

TEST_F(StoreTest, FailedCommitRollsBackAndLeavesNodeUncommitted) {
  Store store = Store::Open(db_path_);
  const int64_t run_id = store.CreateRun(SampleRun());
  search::Node orphan = MakeNode(/*parent_id=*/9999, 2, 1.0, true, "orphan");
  EXPECT_THROW(store.CommitNode(run_id, orphan), core::IoError);  // foreign key on parent
  EXPECT_EQ(orphan.id, -1);
  search::Node no_run = MakeNode(-1, 1, 1.0, true, "no_run");
  try {
    store.CommitNode(run_id + 42, no_run);
    FAIL() << "expected IoError for an unknown run";
  } catch (const core::IoError& error) {
    EXPECT_NE(std::string(error.what()).find("FOREIGN KEY"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(db_path_.string()), std::string::npos);
  }
  EXPECT_TRUE(store.LoadNodes(run_id).empty());
  // The connection is still usable after the rollback.
  search::Node ok = MakeNode(-1, 1, 1.0, true, "ok");
  store.CommitNode(run_id, ok);
  EXPECT_EQ(Ids(store.LoadNodes(run_id)), std::vector<int64_t>{ok.id});
}

TEST_F(StoreTest, LineageIsRootFirst) {
  Store store = Store::Open(db_path_);
  const int64_t run_id = store.CreateRun(SampleRun());
  search::Node a = MakeNode(-1, 1, 1.0, true, "a");
  store.CommitNode(run_id, a);
  search::Node other_draft = MakeNode(-1, 1, 1.0, true, "other");
  store.CommitNode(run_id, other_draft);
  search::Node b = MakeNode(a.id, 2, 1.0, true, "b");
  store.CommitNode(run_id, b);
  search::Node sibling = MakeNode(a.id, 2, 1.0, true, "sibling");
  store.CommitNode(run_id, sibling);
  search::Node c = MakeNode(b.id, 3, 1.0, true, "c");
  store.CommitNode(run_id, c);
  search::Node d = MakeNode(c.id, 4, 1.0, true, "d");
  store.CommitNode(run_id, d);

  const auto lineage = store.Lineage(d.id);
  EXPECT_EQ(Ids(lineage), (std::vector<int64_t>{a.id, b.id, c.id, d.id}));
  ExpectNodeEq(lineage.back(), d);
  EXPECT_EQ(Ids(store.Lineage(sibling.id)), (std::vector<int64_t>{a.id, sibling.id}));
  EXPECT_EQ(Ids(store.Lineage(a.id)), std::vector<int64_t>{a.id});
  EXPECT_TRUE(store.Lineage(d.id + 1000).empty());
}

TEST_F(StoreTest, TopKOrdersByFitnessAndExcludesIncorrect) {
  Store store = Store::Open(db_path_);
  const int64_t run_id = store.CreateRun(SampleRun());
  const int64_t other_run = store.CreateRun(SampleRun());
  std::vector<search::Node> nodes = {
      MakeNode(-1, 1, 1.5, true, "p"), MakeNode(-1, 1, 9.0, false, "wrong_but_high"),
      MakeNode(-1, 1, 2.0, true, "q"), MakeNode(-1, 1, 0.5, true, "r"),
      MakeNode(-1, 1, 2.0, true, "q2")};  // tie with q: the earlier node comes first
  for (auto& node : nodes) store.CommitNode(run_id, node);
  search::Node elsewhere = MakeNode(-1, 1, 50.0, true, "other_run");
  store.CommitNode(other_run, elsewhere);

  EXPECT_EQ(Ids(store.TopK(run_id, 2)), (std::vector<int64_t>{nodes[2].id, nodes[4].id}));
  EXPECT_EQ(Ids(store.TopK(run_id, 10)),
            (std::vector<int64_t>{nodes[2].id, nodes[4].id, nodes[0].id, nodes[3].id}));
  EXPECT_TRUE(store.TopK(run_id, 0).empty());
  const auto best = store.TopK(run_id, 1);
  ASSERT_EQ(best.size(), 1u);
  ExpectNodeEq(best[0], nodes[2]);
  EXPECT_EQ(Ids(store.TopK(other_run, 5)), std::vector<int64_t>{elsewhere.id});
}

TEST_F(StoreTest, HasSourceHashIsPerRun) {
  Store store = Store::Open(db_path_);
  const int64_t run_id = store.CreateRun(SampleRun());
  const int64_t other_run = store.CreateRun(SampleRun());
  search::Node node = MakeNode(-1, 1, 1.0, true, "hashme");
  store.CommitNode(run_id, node);
  EXPECT_TRUE(store.HasSourceHash(run_id, node.source_hash));
  EXPECT_FALSE(store.HasSourceHash(other_run, node.source_hash));
  EXPECT_FALSE(store.HasSourceHash(run_id, core::ContentHash("something else")));
  EXPECT_FALSE(store.HasSourceHash(run_id, "' OR 1=1 --"));  // a value, never SQL
}

TEST_F(StoreTest, FinishRunRecordsOutcome) {
  Store store = Store::Open(db_path_);
  RunRecord run = SampleRun();
  run.started_unix_s = 0;  // "now"
  const int64_t run_id = store.CreateRun(run);
  const double started = store.GetRun(run_id)->started_unix_s;
  EXPECT_GT(started, 1.6e9);
  store.FinishRun(run_id, "ok", "budget");
  const auto finished = store.GetRun(run_id);
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->status, "ok");
  EXPECT_EQ(finished->stop_reason, "budget");
  EXPECT_GE(finished->finished_unix_s, started);
  EXPECT_THROW(store.FinishRun(run_id + 7, "ok", "budget"), core::InternalError);
  ASSERT_EQ(store.ListRuns().size(), 1u);
  EXPECT_EQ(store.ListRuns()[0].status, "ok");
}

}  // namespace
}  // namespace kernelevolve::store
