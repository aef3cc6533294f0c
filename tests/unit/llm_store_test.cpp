// The LLM call ledger in the store (schema v3): insert, link to nodes, load, migrate.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "store/schema.h"
#include "search_test_util.h"
#include "store/store.h"

namespace kernelevolve::store {
namespace {

namespace fs = std::filesystem;

/// A fresh temporary folder per test (removed afterwards) for the databases.
class LlmStore : public testing_util::TempDirTest {
 protected:
  fs::path TempDb(const std::string& name) { return dir_ / name; }
};

LlmCallRecord Call(int64_t run_id, const std::string& hash, int64_t in, int64_t out, double cost) {
  LlmCallRecord c;
  c.run_id = run_id;
  c.purpose = "candidate";
  c.provider = "openai";
  c.model = "test-model";
  c.prompt_version = "v1";
  c.prompt_hash = "abc";
  c.prompt_text = "[system]\n...";
  c.response_text = "```cpp\n...```";
  c.input_tokens = in;
  c.output_tokens = out;
  c.cost_usd = cost;
  c.latency_seconds = 1.25;
  c.attempts = 3;
  c.http_status = 200;
  c.outcome = hash.empty() ? "rejected" : "ok";
  c.source_hash = hash;
  return c;
}

TEST_F(LlmStore, RecordsLinksAndLoadsCalls) {
  Store store = Store::Open(TempDb("calls.db"));
  RunRecord run;
  run.problem = "relu";
  const int64_t run_id = store.CreateRun(run);
  store.RecordLlmCall(Call(run_id, "h1", 1000, 200, 0.01));
  store.RecordLlmCall(Call(run_id, "", 900, 50, 0.005));
  search::Node node;
  node.candidate.source = "kernel";
  node.source_hash = "h1";
  node.evaluation.status = core::Status::kOk;
  store.CommitNode(run_id, node);
  EXPECT_EQ(store.LinkLlmCalls(run_id, "h1", node.id), 1);
  EXPECT_EQ(store.LinkLlmCalls(run_id, "h1", node.id), 0);  // already linked
  auto calls = store.LoadLlmCalls(run_id);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].node_id, node.id);
  EXPECT_EQ(calls[1].node_id, -1);
  EXPECT_EQ(calls[0].input_tokens, 1000);
  EXPECT_EQ(calls[0].attempts, 3);
  EXPECT_DOUBLE_EQ(calls[0].latency_seconds, 1.25);
  EXPECT_EQ(calls[1].outcome, "rejected");
  EXPECT_GT(calls[0].created_unix_s, 0);
}

TEST_F(LlmStore, AVersionTwoDatabaseGainsTheLedger) {
  const fs::path path = TempDb("v2.db");
  {
    Store store = Store::Open(path);
    RunRecord run;
    run.problem = "old";
    store.CreateRun(run);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  // Tables of later versions may exist in this build; a v2 file has none of them.
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE llm_calls; DROP TABLE IF EXISTS rooflines; PRAGMA user_version = 2;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  Store store = Store::Open(path);
  EXPECT_EQ(store.ListRuns().front().problem, "old");
  EXPECT_TRUE(store.LoadLlmCalls(1).empty());
  store.RecordLlmCall(Call(1, "h", 1, 1, 0));
  EXPECT_EQ(store.LoadLlmCalls(1).size(), 1u);
}

}  // namespace
}  // namespace kernelevolve::store
