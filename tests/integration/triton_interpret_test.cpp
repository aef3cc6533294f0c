// --target triton end to end without a GPU: TRITON_INTERPRET=1 makes the GPU runner
// run Triton candidates on CPU tensors (correctness only; docs/gpu.md). Covers the
// plumbing: the kernelevolve binary with the Triton templates, and a search whose
// candidates raise or hang (the runner is replaced and the search goes on).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../unit/relu_fixtures.h"
#include "exec/local_evaluator.h"
#include "platforms/triton/triton_platform.h"
#include "search/search_loop.h"
#include "store/store.h"
#include "triton_candidates.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Statuses of every evaluation in a run database, by node id.
std::map<int64_t, std::string> Statuses(const fs::path& db_path) {
  std::map<int64_t, std::string> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT node_id, status FROM evaluations", -1, &stmt, nullptr);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    out[sqlite3_column_int64(stmt, 0)] = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class TritonInterpretTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The interpreter with any GPU hidden (as testing_util::kInterpretWithoutGpuEnv).
    ::setenv("TRITON_INTERPRET", "1", 1);
    ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
    dir_ = fs::temp_directory_path() /
           fmt::format("ke_triton_{}_{}", ::getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    ::unsetenv("TRITON_INTERPRET");
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// Runs `kernelevolve optimize PROBLEM --target triton` at small shapes; returns
  /// (exit code, stderr).
  std::pair<int, std::string> Optimize(const std::string& problem, const std::string& sets, int budget,
                                       const fs::path& out) {
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = fmt::format(
        "cd '{}' && '{}' optimize {} --target triton {} --budget {} --no-kb --seeds 2 --confirm-rounds 2 "
        "--min-time 0.01 --cache-dir '{}' --out '{}' >/dev/null 2>'{}'",
        KE_SOURCE_DIR, KE_BINARY_PATH, problem, sets, budget, (dir_ / "cache").string(), out.string(), err.string());
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(err)};
  }

  fs::path dir_;
};

TEST_F(TritonInterpretTest, OptimizeReluWithTheTritonPointwiseTemplate) {
  const fs::path out = dir_ / "relu";
  auto [code, err] = Optimize("problems/level1/relu.py", "--set batch_size=4 --set dim=64", 3, out);
  ASSERT_EQ(code, 0) << err;
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc.at("target"), "triton");
  EXPECT_EQ(doc.at("best").at("template"), "triton_pointwise");
  EXPECT_TRUE(doc.at("best").at("correct").get<bool>());
  EXPECT_EQ(doc.at("gpu").at("device"), "cpu (TRITON_INTERPRET=1)");
  EXPECT_NE(doc.at("gpu").at("timing_note").get<std::string>(), "");
  EXPECT_EQ(doc.at("gpu").at("runner_starts"), 1);
  // The console names the interpreter, not a GPU it does not have (walkthrough item 4).
  EXPECT_NE(err.find("timing eager PyTorch and torch.compile under TRITON_INTERPRET=1 (CPU, timings meaningless)"),
            std::string::npos) << err;
  EXPECT_EQ(err.find("on the GPU"), std::string::npos) << err;
  // --confirm-rounds 2 asked for, none run: interpreted timings confirm nothing.
  EXPECT_NE(err.find("confirmation skipped: TRITON_INTERPRET=1"), std::string::npos) << err;
  EXPECT_EQ(err.find("interleaved rounds..."), std::string::npos) << err;
  EXPECT_EQ(err.find(" SMs"), std::string::npos) << err;
  EXPECT_NE(ReadFile(out / "best_kernel.py").find("def kernelevolve_entry(inputs, outputs):"), std::string::npos);
  for (const auto& [node, status] : Statuses(out / "kernelevolve.db")) EXPECT_EQ(status, "ok") << "node " << node;
  // `eval` of that kernel with the default --confirm-rounds: the skipped confirmation
  // leaves the verdict "correct" (exit 0), not "failed_confirmation".
  const fs::path eval_err = dir_ / "eval_stderr.txt";
  const std::string eval_cmd = fmt::format(
      "cd '{}' && '{}' eval problems/level1/relu.py '{}' --target triton --set batch_size=4 --set dim=64 "
      "--seeds 1 --min-time 0.01 --cache-dir '{}' --out '{}' >/dev/null 2>'{}'",
      KE_SOURCE_DIR, KE_BINARY_PATH, (out / "best_kernel.py").string(), (dir_ / "cache").string(),
      (dir_ / "eval").string(), eval_err.string());
  const int eval_status = std::system(eval_cmd.c_str());
  const std::string eval_log = ReadFile(eval_err);
  EXPECT_EQ(WIFEXITED(eval_status) ? WEXITSTATUS(eval_status) : -1, 0) << eval_log;
  EXPECT_NE(eval_log.find("confirmation skipped: TRITON_INTERPRET=1"), std::string::npos) << eval_log;
  EXPECT_EQ(eval_log.find("failed_confirmation"), std::string::npos) << eval_log;
}

TEST_F(TritonInterpretTest, OptimizeSoftmaxEveryDraftIsCorrect) {
  // 37 rows: the persistent drafts loop over rows with a partial last sweep.
  const fs::path out = dir_ / "softmax";
  auto [code, err] = Optimize("problems/level1/softmax.py", "--set batch_size=37 --set dim=50", 4, out);
  ASSERT_EQ(code, 0) << err;
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc.at("best").at("template"), "triton_softmax_lastdim");
  const auto statuses = Statuses(out / "kernelevolve.db");
  EXPECT_EQ(statuses.size(), 4u);
  for (const auto& [node, status] : statuses) EXPECT_EQ(status, "ok") << "node " << node;
}

TEST_F(TritonInterpretTest, RaisingAndHangingCandidatesDoNotStopTheSearch) {
  fs::create_directories(dir_ / "fixtures");
  core::Problem problem = testing_util::WriteReluFixtures(dir_ / "fixtures");
  testing_util::SetScriptedEagerBaseline(problem);
  triton_test::FixedOperator op({
      triton_test::Named("raises", triton_test::RaisingSource()),
      triton_test::Named("hangs", triton_test::HangingSource()),
      triton_test::Named("wrong", triton_test::WrongSource()),
      triton_test::Named("correct", triton_test::ReluSource()),
  });
  problem::WorkerOptions runner;
  runner.log_path = dir_ / "gpu_runner.log";
  platforms::triton::TritonPlatform platform(dir_ / "cache", runner, 120);
  platforms::RunOptions run_options;
  run_options.timeout_seconds = 2;  // the runner is killed after this + 10 s slack
  run_options.min_time_seconds = 0.01;
  run_options.max_repetitions = 20;
  exec::LocalEvaluator evaluator(platform, problem, run_options);
  auto store = store::Store::Open(dir_ / "db.sqlite");
  const int64_t run_id = store.CreateRun(store::RunRecord{});
  search::GreedyPolicy policy;
  search::SearchOptions options;
  options.termination.budget = 10;
  options.drafts = 4;
  search::SearchLoop loop(problem, op, policy, evaluator, store, run_id, options);
  const auto outcome = loop.Run();

  EXPECT_EQ(outcome.stop_reason, "exhausted");
  std::map<std::string, core::Evaluation> by_name;
  for (const auto& n : store.LoadNodes(run_id)) by_name[n.candidate.template_name] = n.evaluation;
  ASSERT_EQ(by_name.size(), 4u);
  EXPECT_EQ(by_name["raises"].status, core::Status::kRuntimeError);
  EXPECT_NE(by_name["raises"].message.find("boom from the candidate"), std::string::npos) << by_name["raises"].message;
  EXPECT_EQ(by_name["hangs"].status, core::Status::kTimeout) << by_name["hangs"].message;
  EXPECT_EQ(by_name["wrong"].status, core::Status::kIncorrect) << by_name["wrong"].message;
  EXPECT_EQ(by_name["correct"].status, core::Status::kOk) << by_name["correct"].message;
  // The hang cost one runner; the candidates after it ran on a fresh, re-prepared one.
  EXPECT_EQ(platform.RunnerStarts(), 2);
  ASSERT_GE(outcome.best_node_id, 0);
  EXPECT_EQ(loop.tree().Get(outcome.best_node_id).candidate.template_name, "correct");
}

}  // namespace
}  // namespace kernelevolve
