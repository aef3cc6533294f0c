// Refusals end to end through the kernelevolve binary: a complex
// intermediate ends as unsupported (exit 1, the reference stays the answer), --target
// cuda has no TRITON_INTERPRET=1 mode, and resume refuses an edited problem file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

#include "cli/run_config.h"
#include "store/store.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

using testing_util::ReadFile;

class CliRefusalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_util::FreshTestDir("ke_refusal");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// Runs `env kernelevolve args` from the source dir; returns (exit code, stderr).
  std::pair<int, std::string> Run(const std::string& env, const std::string& args) {
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = fmt::format("cd '{}' && {} '{}' {} >/dev/null 2>'{}'", KE_SOURCE_DIR, env,
                                        KE_BINARY_PATH, args, err.string());
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(err)};
  }

  fs::path dir_;
};

TEST_F(CliRefusalsTest, ComplexIntermediateIsAnUnsupportedDtypeExit1) {
  const fs::path out = dir_ / "run";
  auto [code, err] = Run("", fmt::format("optimize tests/data/problems/fft_real_part.py --target cpu --budget 2 "
                                         "--no-kb --seeds 1 --cache-dir '{}' --out '{}'",
                                         (dir_ / "cache").string(), out.string()));
  const std::string reason = "unsupported_dtype: complex64 (node _fft_r2c, aten._fft_r2c.default)";
  EXPECT_EQ(code, 1) << err;
  EXPECT_NE(err.find(reason + "; the PyTorch reference stays the answer"), std::string::npos) << err;
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc.at("status"), "no_correct_candidate");
  EXPECT_EQ(doc.at("stop_reason"), reason);  // bench_summary: "unsupported" outcome
}

TEST_F(CliRefusalsTest, CudaUnderTritonInterpretIsRefusedUpFront) {
  auto [code, err] = Run("TRITON_INTERPRET=1", fmt::format("optimize problems/level1/relu.py --target cuda "
                                                           "--budget 1 --out '{}'", (dir_ / "run").string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("--target cuda under TRITON_INTERPRET=1: CUDA candidates need a real GPU; use --target "
                     "triton with TRITON_INTERPRET=1 to check Triton kernels on the CPU"),
            std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run" / "kernelevolve.db"));
}

TEST_F(CliRefusalsTest, CudaWithoutGpuDoesNotSuggestTritonInterpret) {
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is present";
  auto [code, err] = Run("env -u TRITON_INTERPRET", fmt::format("optimize problems/level1/relu.py --target cuda "
                                                                "--budget 1 --out '{}'", (dir_ / "run").string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("--target cuda: no CUDA GPU is visible"), std::string::npos) << err;
  EXPECT_EQ(err.find("set TRITON_INTERPRET=1"), std::string::npos) << err;
  EXPECT_NE(err.find("CUDA candidates need a real GPU; use --target triton with TRITON_INTERPRET=1"),
            std::string::npos) << err;
  // --target triton keeps its hint.
  std::tie(code, err) = Run("env -u TRITON_INTERPRET", fmt::format("optimize problems/level1/relu.py --target "
                                                                   "triton --budget 1 --out '{}'",
                                                                   (dir_ / "run2").string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("set TRITON_INTERPRET=1 to check Triton candidates on the CPU"), std::string::npos) << err;
  // Refused before any work: no run folder is left behind.
  EXPECT_FALSE(fs::exists(dir_ / "run")) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run2")) << err;
}

TEST_F(CliRefusalsTest, UnknownFixturesModeAndTooShortLoadTimeoutStopBeforeAnyWork) {
  // Issue 22: an unknown KE_FIXTURES ended as "internal error" mid-load; now one line, exit 2.
  auto [code, err] = Run("KE_FIXTURES=devices", fmt::format("optimize problems/level1/relu.py --budget 1 --out '{}'",
                                                            (dir_ / "run").string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("KE_FIXTURES='devices': expected 'files' (the default) or 'device'"), std::string::npos) << err;
  EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run"));
  // A load limit no load can meet (every job of a worker with it ended "timeout"), and
  // 0, which CLI11 refused by printing the whole double range.
  for (const char* command : {"optimize problems/level1/relu.py", "bench problems/level1", "eval problems/level1/relu.py"}) {
    for (const char* value : {"0.001", "0"}) {
      std::tie(code, err) = Run("", fmt::format("{} --load-timeout {} --out '{}'", command, value,
                                                (dir_ / "run2").string()));
      EXPECT_EQ(code, 2) << command << " " << value << ": " << err;
      EXPECT_NE(err.find("--load-timeout"), std::string::npos) << err;
      EXPECT_EQ(err.find("e+308"), std::string::npos) << err;
      EXPECT_EQ(err.find("e-324"), std::string::npos) << err;
    }
  }
  std::tie(code, err) = Run("", "worker --queue redis://127.0.0.1:1 --load-timeout 0.5");
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("0.5 s is below the 1 s minimum"), std::string::npos) << err;
}

TEST_F(CliRefusalsTest, WrongFoldersAndAMalformedSetSayWhatToDo) {
  // resume on a bench folder points at `bench --resume`.
  fs::create_directories(dir_ / "bench");
  std::ofstream(dir_ / "bench" / "bench.json") << "{}";
  auto [code, err] = Run("", fmt::format("resume '{}' --quiet", (dir_ / "bench").string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("is a bench directory: `kernelevolve bench PROBLEMS --out"), std::string::npos) << err;
  // report on a run that stored nothing (its problem did not load) names why.
  fs::create_directories(dir_ / "failed");
  std::ofstream(dir_ / "failed" / "result.json")
      << R"({"status": "error", "stop_reason": "error", "error": {"message": "p.py: no class Model"}})";
  std::tie(code, err) = Run("", fmt::format("report '{}'", (dir_ / "failed").string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("the run stored no candidates, so there is nothing to report (result.json: error: p.py: no "
                     "class Model)"),
            std::string::npos)
      << err;
  // A malformed --set fails before the run folder exists.
  std::tie(code, err) = Run("", fmt::format("optimize problems/level1/relu.py --set nonsense --out '{}'",
                                            (dir_ / "run").string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_FALSE(fs::exists(dir_ / "run")) << err;
}

TEST_F(CliRefusalsTest, FixturesFlagIsCheckedAndDeviceFixturesWriteNoTensorFile) {
  auto [code, err] = Run("", fmt::format("optimize problems/level1/relu.py --fixtures device --budget 1 --out '{}'",
                                         (dir_ / "cpu").string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("--fixtures device (KE_FIXTURES=device) keeps fixtures on the GPU"), std::string::npos) << err;
  std::tie(code, err) = Run("", "bench problems/level1 --fixtures ram --budget 1");
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find("--fixtures"), std::string::npos) << err;
  // Under the interpreter the runner draws the sets on the CPU: the run works, no file.
  const fs::path out = dir_ / "triton";
  std::tie(code, err) = Run("TRITON_INTERPRET=1 KE_FIXTURES=", fmt::format(
      "optimize problems/level1/relu.py --target triton --fixtures device --set batch_size=4 --set dim=64 "
      "--seeds 1 --budget 1 --confirm-rounds 0 --no-kb --cache-dir '{}' --out '{}'",
      (dir_ / "cache").string(), out.string()));
  EXPECT_EQ(code, 0) << err;
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    EXPECT_NE(entry.path().extension(), ".safetensors") << entry.path();
  }
  const auto config = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_TRUE(config.at("best").at("correct").get<bool>()) << config.dump();
  const auto manifest = nlohmann::json::parse(ReadFile(out / "fixtures" / "manifest.json"));
  EXPECT_EQ(manifest.value("fixtures", ""), "device");
}

TEST_F(CliRefusalsTest, ResumeRefusesAnEditedProblemFile) {
  // An interrupted run, as optimize records it (status running, flags in config_json).
  const fs::path problem = dir_ / "relu.py";
  fs::copy_file(fs::path(KE_SOURCE_DIR) / "problems/level1/relu.py", problem);
  const fs::path run_dir = dir_ / "run";
  fs::create_directories(run_dir);
  cli::OptimizeOptions o;
  o.problem_path = problem;
  o.sets = {"batch_size=4"};
  store::RunRecord run;
  run.problem = "relu";
  run.problem_path = problem.string();
  run.target = "cpu";
  run.config = cli::OptionsToConfig(o, {{"batch_size", "4"}});
  {
    auto store = store::Store::Open(run_dir / "kernelevolve.db");
    store.CreateRun(run);
  }
  std::ofstream(problem, std::ios::app) << "\ndim = 8  # edited after the run started\n";
  auto [code, err] = Run("", fmt::format("resume '{}' --quiet", run_dir.string()));
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find(problem.string() + " changed since the run started (hash "), std::string::npos) << err;
  EXPECT_NE(err.find(fmt::format("start a new run with `kernelevolve optimize {} --target cpu --set batch_size=4 "
                                 "--out NEW_DIR`", problem.string())),
            std::string::npos) << err;
  EXPECT_FALSE(fs::exists(run_dir / "fixtures"));  // refused before loading anything
}

}  // namespace
}  // namespace kernelevolve
