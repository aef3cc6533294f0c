// The triton_matmul template end to end without a GPU (issue 6): `kernelevolve
// optimize --target triton` on a shrunk problems/gpu_gemm problem under
// TRITON_INTERPRET=1 (float16: the interpreter's tl.dot computes bfloat16 wrongly, so
// the bfloat16 problems are checked on the GPU only, scripts/gpu_gemm.sh).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> EvaluationStatuses(const fs::path& db_path) {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT status FROM evaluations ORDER BY node_id", -1, &stmt, nullptr);
  while (sqlite3_step(stmt) == SQLITE_ROW)
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

/// A fresh folder `name`_<pid> under the temporary directory, and `kernelevolve optimize
/// problems/gpu_gemm/matmul_bias_gelu.py --target triton` under TRITON_INTERPRET=1 into
/// its out/ with `sizes_and_budget` (--set ... --budget N); stderr goes to err.txt.
/// Returns the folder; `status` gets std::system's status.
fs::path OptimizeMatmulBiasGelu(const std::string& name, const std::string& sizes_and_budget, int* status) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("{}_{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string cmd = fmt::format(
      "cd '{}' && {} '{}' optimize problems/gpu_gemm/matmul_bias_gelu.py --target triton {} --no-kb --seeds 2 "
      "--confirm-rounds 0 --min-time 0.01 --cache-dir '{}' --out '{}' >/dev/null 2>'{}'",
      KE_SOURCE_DIR, testing_util::kInterpretWithoutGpuEnv, KE_BINARY_PATH, sizes_and_budget,
      (dir / "cache").string(), (dir / "out").string(), (dir / "err.txt").string());
  *status = std::system(cmd.c_str());
  return dir;
}

TEST(TritonMatmulInterpret, MatmulBiasGeluEveryDraftIsCorrect) {
  // N = 48 is not a multiple of any BLOCK_N (wrapped loads, masked store); K = 40 is
  // not a multiple of BLOCK_K (masked K tail).
  int status = 0;
  const fs::path dir = OptimizeMatmulBiasGelu("ke_triton_matmul", "--set M=64 --set N=48 --set K=40 --budget 4", &status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadText(dir / "err.txt");
  const auto doc = nlohmann::json::parse(ReadText(dir / "out" / "result.json"));
  EXPECT_EQ(doc.at("best").at("template"), "triton_matmul");
  EXPECT_TRUE(doc.at("best").at("correct").get<bool>());
  // No GPU: no matmul peak measured, so the roofline has no compute peak.
  EXPECT_TRUE(doc.at("gpu").at("matmul_peak_tflops").empty());
  EXPECT_EQ(doc.at("gpu").at("peak_gflops"), 0.0);
  const auto statuses = EvaluationStatuses(dir / "out" / "kernelevolve.db");
  EXPECT_EQ(statuses.size(), 4u);
  for (const auto& s : statuses) EXPECT_EQ(s, "ok");
  EXPECT_NE(ReadText(dir / "out" / "best_kernel.py").find("acc = tl.dot(a, b, acc)"),
            std::string::npos);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

// Split-K under the interpreter: one output tile over a depth of 2050 (not a multiple of
// any BLOCK_K), so the first draft splits it (TritonMatmulTemplate::Drafts) and its
// second kernel applies the bias + gelu epilogue.
TEST(TritonMatmulInterpret, SplitKDraftIsCorrect) {
  int status = 0;
  const fs::path dir = OptimizeMatmulBiasGelu("ke_triton_split_k", "--set M=32 --set N=48 --set K=2050 --budget 1", &status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadText(dir / "err.txt");
  const auto doc = nlohmann::json::parse(ReadText(dir / "out" / "result.json"));
  EXPECT_TRUE(doc.at("best").at("correct").get<bool>());
  EXPECT_EQ(EvaluationStatuses(dir / "out" / "kernelevolve.db"), std::vector<std::string>{"ok"});
  const std::string kernel = ReadText(dir / "out" / "best_kernel.py");
  EXPECT_NE(kernel.find("_matmul_split_k_epilogue[("), std::string::npos) << kernel;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
