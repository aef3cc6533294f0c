// Schema v2 of the store: pending candidates, node statistics and the search state,
// each written atomically with the node it goes with; migration from version 1.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <stdexcept>

#include "search_test_util.h"
#include "store/schema.h"

namespace kernelevolve {
namespace {

class StoreCheckpointTest : public testing_util::TempDirTest {};

search::PendingCandidate Pending(int64_t parent, const std::string& name) {
  search::PendingCandidate p;
  p.parent_id = parent;
  p.candidate.source = "// " + name + "\n";
  p.candidate.operator_name = "fake";
  p.candidate.template_name = "grid";
  p.candidate.knobs = {{"name", name}};
  p.candidate.rationale = name;
  return p;
}

TEST_F(StoreCheckpointTest, PendingStatsAndStateRoundTrip) {
  auto store = store::Store::Open(dir_ / "s.db");
  const int64_t run = store.CreateRun(store::RunRecord{});
  EXPECT_FALSE(store.LoadSearchState(run).has_value());
  store::SearchCheckpoint drafts;
  drafts.new_pending = {Pending(-1, "a"), Pending(-1, "b")};
  drafts.state = {{"drafts_requested", true}};
  store.SaveCheckpoint(run, drafts);
  ASSERT_GT(drafts.new_pending[0].id, 0);
  auto pending = store.LoadPending(run);
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[1].candidate.rationale, "b");
  EXPECT_EQ(pending[1].candidate.knobs["name"], "b");
  EXPECT_EQ(pending[0].parent_id, -1);
  EXPECT_EQ(pending[0].source_hash, core::ContentHash("// a\n"));

  // Commit "a" as a node: its pending row goes, stats and state come, in one step.
  search::Node node;
  node.candidate = pending[0].candidate;
  node.evaluation.status = core::Status::kOk;
  store::SearchCheckpoint with_node;
  int64_t seen_id = -1;
  store.CommitNode(run, node, with_node, [&](const search::Node& committed) {
    seen_id = committed.id;
    with_node.evaluated_pending_id = pending[0].id;
    with_node.stats = {{committed.id, search::NodeStats{3, 1.5, 1, true}}};
    with_node.state = {{"drafts_requested", true}, {"elapsed_seconds", 2.0}};
  });
  EXPECT_EQ(seen_id, node.id);
  EXPECT_EQ(store.LoadPending(run).size(), 1u);
  auto stats = store.LoadNodeStats(run);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].first, node.id);
  EXPECT_EQ(stats[0].second.visits, 3);
  EXPECT_DOUBLE_EQ(stats[0].second.value_sum, 1.5);
  EXPECT_EQ(stats[0].second.island, 1);
  EXPECT_TRUE(stats[0].second.exhausted);
  EXPECT_DOUBLE_EQ(store.LoadSearchState(run)->at("elapsed_seconds").get<double>(), 2.0);
}

TEST_F(StoreCheckpointTest, AFailureInsideTheCommitRollsEverythingBack) {
  auto store = store::Store::Open(dir_ / "s.db");
  const int64_t run = store.CreateRun(store::RunRecord{});
  store::SearchCheckpoint drafts;
  drafts.new_pending = {Pending(-1, "a")};
  store.SaveCheckpoint(run, drafts);
  search::Node node;
  node.candidate = drafts.new_pending[0].candidate;
  store::SearchCheckpoint cp;
  EXPECT_THROW(store.CommitNode(run, node, cp,
                                [&](const search::Node&) { throw std::runtime_error("kill"); }),
               std::runtime_error);
  EXPECT_EQ(node.id, -1);
  EXPECT_TRUE(store.LoadNodes(run).empty());
  EXPECT_EQ(store.LoadPending(run).size(), 1u);
  // Deleting a pending candidate that is not there is a bug, and rolls back the node too.
  cp.evaluated_pending_id = 999;
  EXPECT_THROW(store.CommitNode(run, node, cp), core::InternalError);
  EXPECT_TRUE(store.LoadNodes(run).empty());
  // A pending candidate with an unknown parent violates a foreign key.
  store::SearchCheckpoint orphan;
  orphan.new_pending = {Pending(12345, "orphan")};
  EXPECT_THROW(store.SaveCheckpoint(run, orphan), core::IoError);
}

TEST_F(StoreCheckpointTest, AVersionOneDatabaseIsMigratedInPlace) {
  const auto path = dir_ / "v1.db";
  {
    auto store = store::Store::Open(path);
    store::RunRecord r;
    r.problem = "old";
    store.CreateRun(r);
  }
  // Make it look like a version-1 file: drop the v2 and v3 tables, set user_version 1.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TABLE pending; DROP TABLE node_stats; DROP TABLE search_state; "
                         "DROP TABLE llm_calls; "
                         "PRAGMA user_version = 1;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = store::Store::Open(path);
  EXPECT_EQ(store.ListRuns().front().problem, "old");
  EXPECT_TRUE(store.LoadPending(1).empty());
  store::SearchCheckpoint cp;
  cp.new_pending = {Pending(-1, "new")};
  store.SaveCheckpoint(1, cp);
  EXPECT_EQ(store.LoadPending(1).size(), 1u);
  EXPECT_EQ(store::kSchemaVersion, 6);
}

}  // namespace
}  // namespace kernelevolve
