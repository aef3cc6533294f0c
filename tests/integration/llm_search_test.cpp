// End to end through the LLM operator: `kernelevolve optimize --llm ...` against the
// local fake server (tests/llm_fake_server), for each provider protocol, with a 429
// storm, a hung connection, malformed and cut bodies, a cost cap, and fatal errors.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../llm_fake_server/fake_server_process.h"
#include "cli_test_util.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// One row of a query as strings.
std::vector<std::vector<std::string>> Query(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::vector<std::vector<std::string>> rows;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      const unsigned char* t = sqlite3_column_text(stmt, i);
      row.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    rows.push_back(row);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

class LlmSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("ke_llm_{}_{}", ::getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    prices_ = dir_ / "prices.json";
    std::ofstream(prices_) << R"({"models": {"openai:test-model": {"input_per_mtok": 10, "output_per_mtok": 30},
                                             "anthropic:test-model": {"input_per_mtok": 3, "output_per_mtok": 15}}})";
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  struct Result {
    int exit_code = -1;
    std::string out, err;
  };
  /// `kb`: the knowledge flag ("--no-kb", or "--kb PATH" for retrieval).
  Result Optimize(const std::string& env, const std::string& args, const std::string& kb = "--no-kb") {
    const std::string cmd = fmt::format(
        "cd '{}' && env {} '{}' optimize {} --out '{}' --cache-dir '{}' {} --quiet --seeds 1 "
        "--min-time 0.02 --confirm-rounds 0 --set batch_size=4 --set dim=1024 --llm-prices '{}' >'{}' 2>'{}'",
        KE_SOURCE_DIR, env, KE_BINARY_PATH, args, (dir_ / "run").string(), (dir_ / "cache").string(), kb,
        prices_.string(), (dir_ / "out.txt").string(), (dir_ / "err.txt").string());
    const int status = std::system(cmd.c_str());
    Result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadFile(dir_ / "out.txt");
    r.err = ReadFile(dir_ / "err.txt");
    return r;
  }
  /// Optimize() that must exit 0 (a fatal failure otherwise: call it through
  /// ASSERT_NO_FATAL_FAILURE); `result`, when given, gets run/result.json.
  void OptimizeOk(const std::string& env, const std::string& args, json* result = nullptr) {
    const Result r = Optimize(env, args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    if (result != nullptr) *result = ResultJson();
  }
  json ResultJson() const { return json::parse(ReadFile(dir_ / "run" / "result.json")); }
  fs::path Db() const { return dir_ / "run" / "kernelevolve.db"; }
  /// A fake server script that answers every call with a kernel.
  static json AlwaysOk() { return {{"script", json::array()}, {"default", {{"action", "ok"}}}}; }

  /// The ledger's token sums equal what the server billed (complete bodies with usage).
  void ExpectLedgerMatches(const testing_llm::FakeLlmServer& server) {
    int64_t in = 0, out = 0;
    for (const json& e : server.Served()) {
      if (e["billed"].get<bool>()) {
        in += e["input_tokens"].get<int64_t>();
        out += e["output_tokens"].get<int64_t>();
      }
    }
    auto rows = Query(Db(), "SELECT SUM(input_tokens), SUM(output_tokens) FROM llm_calls");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_GT(in, 0);
    EXPECT_EQ(std::stoll(rows[0][0]), in);
    EXPECT_EQ(std::stoll(rows[0][1]), out);
    json result = ResultJson();
    EXPECT_EQ(result["llm"]["input_tokens"].get<int64_t>(), in);
    EXPECT_EQ(result["llm"]["output_tokens"].get<int64_t>(), out);
    auto cost = Query(Db(), "SELECT SUM(cost_usd) FROM llm_calls");
    EXPECT_NEAR(result["llm"]["cost_usd"].get<double>(), std::stod(cost[0][0]), 1e-9);
  }

  fs::path dir_;
  fs::path prices_;
};

TEST_F(LlmSearchTest, OpenAiProtocolSurvivesA429StormAndAHungConnection) {
  testing_llm::FakeLlmServer server(
      {{"script",
        {{{"action", "429"}, {"retry_after", "1"}}, {{"action", "429"}, {"retry_after", "1"}},
         {{"action", "429"}, {"retry_after", "1"}}, {{"action", "hang"}, {"seconds", 20}},
         {{"action", "ok"}, {"kernel", "broken"}}, {{"action", "ok"}}, {{"action", "malformed"}},
         {{"action", "ok"}}}},
       {"default", {{"action", "ok"}}}},
      dir_ / "server");
  json result;
  ASSERT_NO_FATAL_FAILURE(OptimizeOk(
      "OPENAI_API_KEY=test-key",
      fmt::format("problems/level1/relu.py --budget 4 --drafts 2 --llm openai:test-model "
                  "--llm-base-url {} --llm-timeout 2",
                  server.BaseUrl()),
      &result));
  EXPECT_EQ(result["status"], "ok");
  EXPECT_EQ(result["stop_reason"], "budget");
  EXPECT_EQ(result["llm"]["calls"], 4);
  // The storm and the hang went into the first call: 3 x 429, a timeout, then the answer.
  auto first = Query(Db(), "SELECT attempts, outcome, error FROM llm_calls ORDER BY id LIMIT 1");
  EXPECT_EQ(first[0][0], "5");
  EXPECT_EQ(first[0][1], "ok");
  EXPECT_NE(first[0][2].find("rate_limit_exceeded"), std::string::npos) << first[0][2];
  EXPECT_NE(first[0][2].find("timeout"), std::string::npos) << first[0][2];
  // The broken kernel became a compile_error node; every answered call is linked to its node.
  EXPECT_EQ(Query(Db(), "SELECT COUNT(*) FROM evaluations WHERE status = 'compile_error'")[0][0], "1");
  EXPECT_EQ(Query(Db(), "SELECT COUNT(*) FROM llm_calls WHERE outcome = 'ok' AND node_id IS NOT NULL")[0][0], "4");
  EXPECT_EQ(Query(Db(), "SELECT COUNT(*) FROM nodes WHERE operator = 'llm:openai:test-model'")[0][0], "4");
  auto prompt = Query(Db(), "SELECT prompt_text, prompt_version FROM llm_calls ORDER BY id DESC LIMIT 1");
  EXPECT_NE(prompt[0][0].find("# The kernel to improve"), std::string::npos);
  EXPECT_EQ(prompt[0][1], "v2");
  ExpectLedgerMatches(server);
}

TEST_F(LlmSearchTest, AnthropicProtocolWithOverloadAndAnEditOfTheParent) {
  testing_llm::FakeLlmServer server(
      {{"script",
        {{{"action", "529"}}, {{"action", "ok"}}, {{"action", "429"}, {"retry_after", "1"}}, {{"action", "truncated"}},
         {{"action", "ok"}}, {{"action", "edit"}}}},
       {"default", {{"action", "ok"}}}},
      dir_ / "server");
  // A base URL without /v1: the client adds it.
  json result;
  ASSERT_NO_FATAL_FAILURE(OptimizeOk(
      "ANTHROPIC_API_KEY=test-key",
      fmt::format("problems/level1/softsign.py --budget 3 --drafts 2 --llm anthropic:test-model "
                  "--llm-base-url http://127.0.0.1:{} --llm-timeout 5",
                  server.port()),
      &result));
  EXPECT_EQ(result["status"], "ok");
  EXPECT_EQ(Query(Db(), "SELECT COUNT(*) FROM nodes WHERE knobs_json LIKE '%\"form\":\"edit\"%'")[0][0], "1");
  EXPECT_EQ(Query(Db(), "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'")[0][0], "3");
  ExpectLedgerMatches(server);
}

TEST_F(LlmSearchTest, MaxCostStopsTheRunBeforeTheCapIsCrossed) {
  testing_llm::FakeLlmServer server(AlwaysOk(), dir_ / "server");
  json result;
  ASSERT_NO_FATAL_FAILURE(OptimizeOk(
      "OPENAI_API_KEY=test-key",
      fmt::format("problems/level1/relu.py --budget 10 --drafts 2 --llm openai:test-model "
                  "--llm-base-url {} --llm-max-tokens 2000 --max-cost 0.15",
                  server.BaseUrl()),
      &result));
  EXPECT_EQ(result["stop_reason"], "cost_cap");
  EXPECT_TRUE(result["llm"]["cost_cap_reached"].get<bool>());
  EXPECT_LT(result["evaluations"].get<int>(), 10);
  EXPECT_LE(result["llm"]["cost_usd"].get<double>(), 0.15);
  EXPECT_EQ(Query(Db(), "SELECT stop_reason FROM runs")[0][0], "cost_cap");
  auto refused = Query(Db(), "SELECT attempts, error FROM llm_calls WHERE outcome = 'stopped_by_cap'");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0][0], "0");  // refused before any request
  EXPECT_NE(refused[0][1].find("--max-cost $0.1500"), std::string::npos) << refused[0][1];
  ExpectLedgerMatches(server);
}

// A problem file outside problems/ (a row-wise scan): the LLM operator needs no template,
// only the problem's reference, tensors and the ABI in its prompt. (The template
// operator's coverage grows on its own; this test does not depend on it.)
TEST_F(LlmSearchTest, WritesKernelsForAProblemFileOfItsOwn) {
  const std::string problem = std::string(KE_TEST_DATA_DIR) + "/llm_fake_server/problems/row_cumsum.py";
  testing_llm::FakeLlmServer server(AlwaysOk(), dir_ / "server");
  ASSERT_NO_FATAL_FAILURE(OptimizeOk("OPENAI_API_KEY=test-key",
                                     fmt::format("{} --budget 2 --drafts 2 --llm openai:test-model "
                                                 "--llm-base-url {}",
                                                 problem, server.BaseUrl())));
  EXPECT_EQ(Query(Db(), "SELECT COUNT(*) FROM evaluations WHERE status = 'ok' AND correct = 1")[0][0], "2");
  ExpectLedgerMatches(server);
}

// Issue 21: the Triton protocol. The prompt asks for a Python module with @triton.jit
// kernels (system message, ABI section with its example, ```python fence), retrieval
// runs on the triton platform, and the fake server's Triton answer (kernels/relu.py,
// picked by the language the prompt asks for) is evaluated under TRITON_INTERPRET=1 and
// ends ok.
TEST_F(LlmSearchTest, TritonProtocolEndsOkUnderTheInterpreter) {
  testing_llm::FakeLlmServer server(AlwaysOk(), dir_ / "server");
  const Result r = Optimize(std::string(testing_util::kInterpretWithoutGpuEnv) + " OPENAI_API_KEY=test-key",
                            fmt::format("problems/level1/relu.py --target triton --budget 2 --drafts 2 "
                                        "--profile-top 0 --profile-during 0 --llm openai:test-model "
                                        "--llm-base-url {} --llm-temperature 0.2",
                                        server.BaseUrl()),
                            fmt::format("--kb '{}'", (dir_ / "kb.db").string()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json result = ResultJson();
  EXPECT_EQ(result["status"], "ok") << result.dump(2);
  EXPECT_EQ(Query(Db(), "SELECT COUNT(*) FROM evaluations WHERE status = 'ok' AND correct = 1")[0][0], "2");
  EXPECT_TRUE(fs::exists(dir_ / "run" / "best_kernel.py"));
  EXPECT_NE(ReadFile(dir_ / "run" / "best_kernel.py").find("@triton.jit"), std::string::npos);
  const auto prompts = Query(Db(), "SELECT prompt_text, outcome FROM llm_calls ORDER BY id");
  ASSERT_GE(prompts.size(), 2u);
  for (const auto& row : prompts) {
    const std::string& p = row[0];
    EXPECT_EQ(row[1], "ok");
    EXPECT_NE(p.find("fast, correct Triton kernels for\nNVIDIA GPUs"), std::string::npos) << p.substr(0, 400);
    EXPECT_NE(p.find("def kernelevolve_entry(inputs, outputs)"), std::string::npos);
    EXPECT_NE(p.find("def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr)"), std::string::npos);  // the ABI example
    EXPECT_NE(p.find("one fenced ```python block"), std::string::npos);
    EXPECT_NE(p.find("per call on the GPU"), std::string::npos);
    EXPECT_NE(p.find("float32: |out - ref| <= atol 0.0001 + rtol 0.0001 x |ref|"), std::string::npos);
    EXPECT_NE(p.find("TRITON_INTERPRET=1"), std::string::npos);  // the hardware section says so
    EXPECT_EQ(p.find("x86-64 CPUs"), std::string::npos);
    EXPECT_EQ(p.find("extern \"C\""), std::string::npos);
    // Retrieval on the triton platform: passages, none from a CPU-only document.
    EXPECT_NE(p.find("# Notes from the knowledge base"), std::string::npos);
    EXPECT_EQ(p.find("(hardware/cpu-x86/"), std::string::npos);
    EXPECT_EQ(p.find("(guidance/threading-openmp-pitfalls.md)"), std::string::npos);
    EXPECT_EQ(p.find("(guidance/vectorization.md)"), std::string::npos);
  }
  EXPECT_NE(prompts[0][0].find("[user]"), std::string::npos);
  ExpectLedgerMatches(server);
}

TEST_F(LlmSearchTest, UnknownModelAndMissingKeyEndTheRunWithTheFix) {
  testing_llm::FakeLlmServer server({{"script", json::array()}}, dir_ / "server");
  Result no_model = Optimize("OPENAI_API_KEY=test-key",
                             fmt::format("problems/level1/relu.py --budget 2 --llm openai:gpt-nope --llm-base-url {}",
                                         server.BaseUrl()));
  EXPECT_EQ(no_model.exit_code, 2) << no_model.out << no_model.err;
  EXPECT_NE(no_model.err.find("no model 'gpt-nope'"), std::string::npos) << no_model.err;
  EXPECT_EQ(Query(Db(), "SELECT outcome, http_status FROM llm_calls")[0][0], "fatal");
  fs::remove_all(dir_ / "run");
  Result no_key = Optimize("-u OPENAI_API_KEY", "problems/level1/relu.py --budget 2 --llm openai:gpt-4.1");
  EXPECT_EQ(no_key.exit_code, 2);
  EXPECT_NE(no_key.err.find("OPENAI_API_KEY is not set"), std::string::npos) << no_key.err;
  EXPECT_FALSE(fs::exists(Db()));  // refused before any work
}

TEST_F(LlmSearchTest, UnreachableServerEndsTheRunWithAnErrorNamingTheUrl) {
  // Issue 22: connection refused on every attempt used to end the run "exhausted" with
  // no word about the server. Port 1 on the loopback: nothing listens there.
  const Result r = Optimize("OPENAI_API_KEY=test-key",
                            "problems/level1/relu.py --budget 2 --drafts 1 --llm openai:test-model "
                            "--llm-base-url http://127.0.0.1:1/v1 --llm-retries 2 --llm-timeout 5");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("error: the LLM server http://127.0.0.1:1/v1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did not answer"), std::string::npos) << r.err;
  EXPECT_EQ(ResultJson()["stop_reason"], "llm_unreachable");
  EXPECT_EQ(Query(Db(), "SELECT stop_reason FROM runs")[0][0], "llm_unreachable");
  EXPECT_GE(std::stoi(Query(Db(), "SELECT COUNT(*) FROM llm_calls WHERE outcome = 'failed'")[0][0]), 1);
}

}  // namespace
}  // namespace kernelevolve
