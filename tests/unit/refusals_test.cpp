// Refusals and wording: a complex intermediate is an unsupported dtype
// (exit 1, not a bad input), resume refuses an edited problem file (a content hash recorded
// at the start), and the console names TRITON_INTERPRET=1 instead of "the GPU".
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/run_config.h"
#include "core/error.h"
#include "core/op_graph.h"
#include "core/candidate.h"
#include "operators/template/template_operator.h"
#include "report/run_summary.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

TEST(FileContentHash, IsTheContentHashOfTheBytesOrEmpty) {
  const fs::path file = fs::temp_directory_path() / "ke_file_content_hash.txt";
  std::ofstream(file) << "batch_size = 16\n";
  EXPECT_EQ(core::FileContentHash(file), core::ContentHash("batch_size = 16\n"));
  fs::remove(file);
  EXPECT_EQ(core::FileContentHash("/nonexistent/kernelevolve/file.py"), "");
}

/// The graph the worker captures for `torch.fft.fft(x).real` (graph_capture.py).
nlohmann::json FftGraph() {
  return nlohmann::json::parse(R"({"nodes": [
    {"name": "arg0_1", "kind": "placeholder", "abi_index": 0, "shape": [4, 16], "dtype": "float32"},
    {"name": "_fft_r2c", "kind": "call", "target": "aten._fft_r2c.default",
     "args": [{"name": "self", "ref": "arg0_1"}], "shape": [4, 16], "dtype": "complex64"},
    {"name": "view_as_real", "kind": "call", "target": "aten.view_as_real.default",
     "args": [{"name": "self", "ref": "_fft_r2c"}], "shape": [4, 16, 2], "dtype": "float32"}],
    "outputs": ["view_as_real"]})");
}

TEST(UnsupportedDTypeTest, ComplexIntermediateNamesTheNodeAndTheOp) {
  const nlohmann::json graph = FftGraph();
  EXPECT_EQ(core::FirstUnsupportedDType(graph), "unsupported_dtype: complex64 (node _fft_r2c, aten._fft_r2c.default)");
  EXPECT_THROW(core::OpGraphFromJson(graph), core::InvalidInputError);  // why the loader asks first
  nlohmann::json real = graph;
  real["nodes"][1]["dtype"] = "float32";
  EXPECT_EQ(core::FirstUnsupportedDType(real), "");
  EXPECT_EQ(core::FirstUnsupportedDType(nlohmann::json::array()), "");  // malformed: OpGraphFromJson says
}

TEST(UnsupportedDTypeTest, TemplatesRefuseWithTheLoadersReasonOnEveryTarget) {
  core::Problem problem;  // as LoadProblem leaves it: no graph, the reason in graph_error
  problem.graph_error = core::FirstUnsupportedDType(FftGraph());
  for (const std::string target : {"cpu", "triton", "cuda"}) {
    const auto why = operators::TemplateOperator(target).Unsupported(problem);
    ASSERT_TRUE(why.has_value()) << target;
    EXPECT_EQ(*why, "unsupported_dtype: complex64 (node _fft_r2c, aten._fft_r2c.default)") << target;
  }
  problem.graph_error = "capture failed: RuntimeError: x";  // other capture failures keep their wording
  EXPECT_EQ(operators::TemplateOperator("cpu").Unsupported(problem)->rfind("unsupported_graph:", 0), 0u);
}

class ProblemHashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ke_problem_hash_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = dir_ / "relu.py";
    Write("batch_size = 16\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& text) { std::ofstream(path_) << text; }

  fs::path dir_;
  fs::path path_;
};

TEST_F(ProblemHashTest, ResumeRefusesAnEditedProblemAndWarnsWithoutAHash) {
  cli::OptimizeOptions o;
  o.problem_path = path_;
  o.target = "cpu";
  o.sets = {"dim=64"};
  store::RunRecord run;
  run.id = 3;
  run.config = cli::OptionsToConfig(o, {{"dim", "64"}});
  EXPECT_EQ(run.config.at("problem_hash"), core::ContentHash("batch_size = 16\n"));
  cli::OptimizeOptions back = cli::OptionsFromRun(run);
  EXPECT_EQ(cli::CheckProblemUnchanged(run, back), "");  // unchanged: resume silently

  Write("batch_size = 4096\n");
  try {
    cli::CheckProblemUnchanged(run, back);
    FAIL() << "an edited problem resumed";
  } catch (const core::InvalidInputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path_.string() + " changed since the run started (hash " +
                        core::ContentHash("batch_size = 16\n") + " then, " +
                        core::ContentHash("batch_size = 4096\n") + " now)"),
              std::string::npos) << what;
    EXPECT_NE(what.find("`kernelevolve optimize " + path_.string() + " --target cpu --set dim=64 --out NEW_DIR`"),
              std::string::npos) << what;
  }

  run.config.erase("problem_hash");  // a run recorded before the hash existed
  const std::string warning = cli::CheckProblemUnchanged(run, back);
  EXPECT_NE(warning.find("recorded no hash of " + path_.string()), std::string::npos) << warning;
  EXPECT_EQ(warning.find('\n'), std::string::npos);
}

TEST(InterpretWordingTest, SummaryNamesTheInterpreterNotTheGpu) {
  report::RunSummary s;
  s.problem = "relu";
  s.target = "triton";
  s.stop_reason = "budget";
  s.gpu_interpret = true;
  std::string table = report::SummaryTable(s);
  EXPECT_NE(table.find("eager PyTorch (under TRITON_INTERPRET=1 (CPU, timings meaningless))"), std::string::npos)
      << table;
  EXPECT_EQ(table.find("on the GPU"), std::string::npos) << table;
  s.gpu_interpret = false;
  table = report::SummaryTable(s);
  EXPECT_NE(table.find("eager PyTorch (on the GPU)"), std::string::npos) << table;
}

}  // namespace
}  // namespace kernelevolve
