// The store's rooflines table (schema v4): figures round-trip with their node; a node
// without figures reads back as unknown; the table is queryable.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store_test_util.h"

namespace kernelevolve::store::testing {
namespace {

TEST_F(StoreTest, RooflineFiguresRoundTripWithTheirNode) {
  auto store = Store::Open(db_path_);
  const int64_t run_id = store.CreateRun(SampleRun());
  search::Node with = MakeNode(-1, 1, 1.5, true, "with");
  with.evaluation.roofline = {8e6, 1e6, 0.125, 8.0, 1.0, "memory", 0.4};
  search::Node without = MakeNode(-1, 1, 0, false, "without");
  store.CommitNode(run_id, with);
  store.CommitNode(run_id, without);

  const auto nodes = store.LoadNodes(run_id);
  ASSERT_EQ(nodes.size(), 2u);
  const core::RooflineFigures& r = nodes[0].evaluation.roofline;
  EXPECT_DOUBLE_EQ(r.bytes_per_call, 8e6);
  EXPECT_DOUBLE_EQ(r.flops_per_call, 1e6);
  EXPECT_DOUBLE_EQ(r.arithmetic_intensity, 0.125);
  EXPECT_DOUBLE_EQ(r.achieved_gbps, 8.0);
  EXPECT_DOUBLE_EQ(r.achieved_gflops, 1.0);
  EXPECT_EQ(r.bound, "memory");
  EXPECT_DOUBLE_EQ(r.fraction, 0.4);
  EXPECT_FALSE(nodes[1].evaluation.roofline.Known());
  EXPECT_DOUBLE_EQ(nodes[1].evaluation.roofline.bytes_per_call, 0);
  // Lineage and TopK read through the same join.
  EXPECT_EQ(store.Lineage(with.id).back().evaluation.roofline.bound, "memory");

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*), MAX(fraction) FROM rooflines WHERE bound = 'memory'", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 1);
  EXPECT_DOUBLE_EQ(sqlite3_column_double(stmt, 1), 0.4);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

}  // namespace
}  // namespace kernelevolve::store::testing
