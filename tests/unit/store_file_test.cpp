// Store files: persistence, two connections, moves, open errors, schema version.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "store/schema.h"
#include "store/store.h"
#include "store_test_util.h"

namespace kernelevolve::store {
namespace {

namespace fs = std::filesystem;
using testing::ExpectNodeEq;
using testing::Ids;
using testing::MakeNode;
using testing::SampleRun;

class StoreFileTest : public testing::StoreTest {};

TEST_F(StoreFileTest, ReopeningKeepsEverything) {
  int64_t run_id = 0;
  std::vector<search::Node> written;
  {
    Store store = Store::Open(db_path_);
    run_id = store.CreateRun(SampleRun());
    written = {MakeNode(-1, 1, 1.0, true, "first")};
    store.CommitNode(run_id, written[0]);
    written.push_back(MakeNode(written[0].id, 2, 3.0, true, "second"));
    store.CommitNode(run_id, written[1]);
    store.FinishRun(run_id, "ok", "exhausted");
  }
  Store reopened = Store::Open(db_path_);
  const auto loaded = reopened.LoadNodes(run_id);
  ASSERT_EQ(loaded.size(), 2u);
  ExpectNodeEq(loaded[0], written[0]);
  ExpectNodeEq(loaded[1], written[1]);
  EXPECT_EQ(reopened.GetRun(run_id)->stop_reason, "exhausted");
  search::Node third = MakeNode(written[1].id, 3, 4.0, true, "third");
  reopened.CommitNode(run_id, third);
  EXPECT_GT(third.id, written[1].id);
  EXPECT_EQ(reopened.Lineage(third.id).size(), 3u);
}

TEST_F(StoreFileTest, SecondConnectionSeesCommittedNodes) {
  Store writer = Store::Open(db_path_);
  Store reader = Store::Open(db_path_);
  const int64_t run_id = writer.CreateRun(SampleRun());
  ASSERT_TRUE(reader.GetRun(run_id).has_value());
  search::Node a = MakeNode(-1, 1, 1.0, true, "from_writer");
  writer.CommitNode(run_id, a);
  const auto seen = reader.LoadNodes(run_id);
  ASSERT_EQ(seen.size(), 1u);
  ExpectNodeEq(seen[0], a);
  EXPECT_TRUE(reader.HasSourceHash(run_id, a.source_hash));
  // Both connections can write; ids stay unique.
  search::Node b = MakeNode(a.id, 2, 2.0, true, "from_reader");
  reader.CommitNode(run_id, b);
  EXPECT_EQ(Ids(writer.LoadNodes(run_id)), (std::vector<int64_t>{a.id, b.id}));
}

TEST_F(StoreFileTest, MovedStoreStaysUsable) {
  Store first = Store::Open(db_path_);
  Store moved = std::move(first);
  const int64_t run_id = moved.CreateRun(SampleRun());
  Store assigned = Store::Open(dir_ / "other.db");
  assigned = std::move(moved);
  EXPECT_EQ(assigned.Path(), db_path_);
  EXPECT_TRUE(assigned.GetRun(run_id).has_value());
}

TEST_F(StoreFileTest, OpenInMissingDirectoryThrowsReadableIoError) {
  const fs::path path = dir_ / "no_such_dir" / "kernelevolve.db";
  try {
    Store::Open(path);
    FAIL() << "expected IoError";
  } catch (const core::IoError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
    EXPECT_NE(message.find("unable to open database file"), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(path.parent_path()));
}

TEST_F(StoreFileTest, OpenNonDatabaseFileThrowsReadableIoError) {
  const fs::path path = dir_ / "notes.txt";
  {
    std::ofstream out(path);
    out << "this is a plain text file, long enough to fill a database header page ...\n";
    for (int i = 0; i < 100; ++i) out << "line " << i << " of text that is not SQLite\n";
  }
  try {
    Store::Open(path);
    FAIL() << "expected IoError";
  } catch (const core::IoError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("not a database"), std::string::npos) << message;
  }
}

int64_t QueryInt(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  const int64_t value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

TEST_F(StoreFileTest, SchemaVersionWalAndQueryableMedians) {
  {
    Store store = Store::Open(db_path_);
    const int64_t run_id = store.CreateRun(SampleRun());
    search::Node node = MakeNode(-1, 1, 1.0, true, "medians");
    store.CommitNode(run_id, node);
  }
  EXPECT_EQ(QueryInt(db_path_, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_GE(kSchemaVersion, 1);
  EXPECT_EQ(
      QueryInt(db_path_, "SELECT COUNT(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"), 1);
  EXPECT_EQ(QueryInt(db_path_, "SELECT CAST(latency_median_us AS INTEGER) FROM evaluations"), 101);
  EXPECT_EQ(QueryInt(db_path_, "SELECT CAST(kernel_only_median_us AS INTEGER) FROM evaluations"),
            81);
  // Reopening a current database changes nothing.
  Store::Open(db_path_);
  EXPECT_EQ(QueryInt(db_path_, "PRAGMA user_version"), kSchemaVersion);
}

TEST_F(StoreFileTest, NewerSchemaIsRefused) {
  Store::Open(db_path_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    Store::Open(db_path_);
    FAIL() << "expected IoError";
  } catch (const core::IoError& error) {
    EXPECT_NE(std::string(error.what()).find("newer"), std::string::npos) << error.what();
  }
}

TEST_F(StoreFileTest, CorruptChecksJsonIsAReadableIoError) {
  Store store = Store::Open(db_path_);
  const int64_t run_id = store.CreateRun(SampleRun());
  search::Node node = MakeNode(-1, 1, 1.0, true, "corrupt");
  store.CommitNode(run_id, node);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE evaluations SET checks_json = '{\"not\": \"an array\"}'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    store.LoadNodes(run_id);
    FAIL() << "expected IoError";
  } catch (const core::IoError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("checks_json"), std::string::npos) << message;
    EXPECT_NE(message.find(db_path_.string()), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kernelevolve::store
