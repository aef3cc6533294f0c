// A search whose candidates crash, hang, exhaust memory or fail to compile keeps going,
// records each with its status, and still finds the correct kernel.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "eval/fixture_manifest.h"
#include "eval/safetensors.h"
#include "exec/local_evaluator.h"
#include "fixed_operator.h"
#include "platforms/cpu/cpu_platform.h"
#include "search/search_loop.h"
#include "store/store.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrologue = R"(#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = in[0].shape[0] * in[0].shape[1];
)";

std::string Kernel(const std::string& body) { return std::string(kPrologue) + body + "\n  return 0;\n}\n"; }

using testing_util::FixedOperator;
using testing_util::Named;
using testing_util::SetScriptedEagerBaseline;

core::Problem WriteReluFixtures(const fs::path& dir) {
  core::Problem problem;
  problem.name = "relu";
  problem.fixtures_dir = dir;
  problem.inputs = {{"input.0", core::TensorRole::kInput, {4, 256}, core::DType::kFloat32}};
  problem.outputs = {{"output.0", core::TensorRole::kOutput, {4, 256}, core::DType::kFloat32}};
  eval::FixtureManifest manifest;
  manifest.problem = "relu";
  manifest.inputs = problem.inputs;
  manifest.outputs = problem.outputs;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (int seed = 0; seed < 3; ++seed) {
    eval::HostTensor x{"input.0", core::DType::kFloat32, {4, 256}, {}};
    eval::HostTensor y{"output.0", core::DType::kFloat32, {4, 256}, {}};
    x.bytes.resize(1024 * 4);
    y.bytes.resize(1024 * 4);
    for (int i = 0; i < 1024; ++i) {
      float v = normal(rng);
      x.MutableData<float>()[i] = v;
      y.MutableData<float>()[i] = v > 0 ? v : 0;
    }
    fs::path file = dir / fmt::format("seed_{}.safetensors", seed);
    eval::WriteSafetensors(file, {x, y});
    manifest.seeds.push_back(seed);
    manifest.files.push_back(file);
    problem.fixture_files.push_back(file);
    problem.seeds.push_back(seed);
  }
  std::ofstream(dir / "manifest.json") << eval::FixtureManifestToJson(manifest, dir).dump(2);
  SetScriptedEagerBaseline(problem);
  return problem;
}

TEST(BadCandidatesSearchTest, EveryFailureIsRecordedAndTheSearchGoesOn) {
  fs::path dir = fs::temp_directory_path() / fmt::format("ke_badcand_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "fixtures");
  core::Problem problem = WriteReluFixtures(dir / "fixtures");

  FixedOperator op({
      Named("segfault", Kernel("  volatile float* p = nullptr; *p = x[0];")),
      Named("hang", Kernel("  for (volatile int64_t i = 0;; ++i) {}")),
      Named("huge_alloc", Kernel("  size_t bytes = size_t(100) << 30; volatile char* p = static_cast<char*>(std::malloc(bytes));\n"
                                 "  for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;\n"
                                 "  for (int64_t i = 0; i < n; ++i) y[i] = p[i * 4096];")),
      Named("compile_error", Kernel("  this is not C++;")),
      Named("wrong", Kernel("  for (int64_t i = 0; i < n; ++i) y[i] = x[i];")),
      Named("correct", Kernel("  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;")),
  });
  platforms::cpu::CpuPlatform platform(dir / "cache", KE_HARNESS_PATH);
  platforms::RunOptions run_options;
  run_options.timeout_seconds = 3;
  run_options.memory_limit_bytes = 2LL << 30;
  run_options.min_time_seconds = 0.02;
  exec::LocalEvaluator evaluator(platform, problem, run_options);
  auto store = store::Store::Open(dir / "db.sqlite");
  int64_t run_id = store.CreateRun(store::RunRecord{});
  search::GreedyPolicy policy;
  search::SearchOptions options;
  options.termination.budget = 10;
  options.drafts = 6;
  search::SearchLoop loop(problem, op, policy, evaluator, store, run_id, options);
  auto outcome = loop.Run();

  EXPECT_EQ(outcome.stop_reason, "exhausted");
  auto nodes = store.LoadNodes(run_id);
  ASSERT_EQ(nodes.size(), 6u);
  std::map<std::string, core::Status> status;
  for (const auto& n : nodes) status[n.candidate.template_name] = n.evaluation.status;
  EXPECT_EQ(status["segfault"], core::Status::kCrash);
  EXPECT_EQ(status["hang"], core::Status::kTimeout);
  EXPECT_TRUE(status["huge_alloc"] == core::Status::kOutOfMemory || status["huge_alloc"] == core::Status::kCrash)
      << core::StatusName(status["huge_alloc"]);
  EXPECT_EQ(status["compile_error"], core::Status::kCompileError);
  EXPECT_EQ(status["wrong"], core::Status::kIncorrect);
  EXPECT_EQ(status["correct"], core::Status::kOk);
  ASSERT_GE(outcome.best_node_id, 0);
  EXPECT_EQ(loop.tree().Get(outcome.best_node_id).candidate.template_name, "correct");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
