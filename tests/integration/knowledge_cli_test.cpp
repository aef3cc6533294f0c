// `kernelevolve kb ...` through the built binary: reindex, search, add, experiences.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "knowledge/knowledge_base.h"
#include "knowledge/knowledge_paths.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class KnowledgeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("ke_kbcli_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    kb_ = dir_ / "kb" / "knowledge.db";
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  CommandResult Run(const std::string& args) {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const std::string cmd = fmt::format("cd '{}' && env -u KERNELEVOLVE_KB -u KERNELEVOLVE_CORPUS '{}' {} >'{}' 2>'{}'",
                                        KE_SOURCE_DIR, KE_BINARY_PATH, args, out.string(), err.string());
    const int status = std::system(cmd.c_str());
    return CommandResult{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(out), Slurp(err)};
  }
  std::string Kb() const { return fmt::format("--kb '{}'", kb_.string()); }
  fs::path dir_;
  fs::path kb_;
};

TEST_F(KnowledgeCliTest, ReindexIndexesTheBuiltInCorpusOnceAndListsIt) {
  auto r = Run("kb reindex " + Kb());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("knowledge/hardware/cpu-x86/memory-bandwidth.md"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("knowledge/guidance/debugging-compile-errors.md"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("index.md ("), std::string::npos) << r.out;
  r = Run("kb reindex " + Kb());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": 0 indexed"), std::string::npos) << r.out;
}

TEST_F(KnowledgeCliTest, SearchShowsWhatWouldBeRetrievedAndWhy) {
  auto r = Run("kb search \"error: '_mm512_add_ps' was not declared in this scope\" --platform cpu "
               "--phase repair --bottleneck compile_error -k 3 " + Kb());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const size_t first = r.out.find("1. knowledge/guidance/debugging-compile-errors.md");
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("why: platform=cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bottleneck=compile_error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("terms:"), std::string::npos) << r.out;

  r = Run("kb search \"memory bound kernel far below DRAM bandwidth\" --platform cpu --bottleneck "
          "memory_bound -k 4 --json " + Kb());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.is_array());
  ASSERT_FALSE(doc.empty());
  bool found = false;
  for (const auto& p : doc) {
    found = found || p["document"] == "hardware/cpu-x86/memory-bandwidth.md";
    EXPECT_GT(p["bm25"].get<double>(), 0);
    EXPECT_FALSE(p["why"].get<std::string>().empty());
  }
  EXPECT_TRUE(found) << r.out;

  r = Run("kb search anything --platform tpu " + Kb());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--platform 'tpu' is not one of: cpu, cuda, triton, any"), std::string::npos) << r.err;

  r = Run("kb search '  ' " + Kb());  // no words, no filter: nothing to rank by
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the query has no words"), std::string::npos) << r.err;
  r = Run("kb search '' --platform cpu " + Kb());  // a filter alone is a query
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(KnowledgeCliTest, AddMakesAUserDocumentRetrievable) {
  const fs::path doc = dir_ / "our-chip.md";
  std::ofstream(doc) << "---\ntitle: Our chip\nplatforms: [cpu]\n---\n# Our chip\n\nThe frobnicator "
                        "unit streams 96 bytes per cycle.\n";
  auto r = Run(fmt::format("kb add '{}' {}", doc.string(), Kb()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("added"), std::string::npos);
  EXPECT_NE(r.out.find("1 indexed"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(kb_.parent_path() / "knowledge-user" / "our-chip.md"));
  r = Run("kb search frobnicator --platform cpu " + Kb());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1. user/our-chip.md"), std::string::npos) << r.out;

  r = Run(fmt::format("kb add '{}' {}", (dir_ / "nope.md").string(), Kb()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;
}

TEST_F(KnowledgeCliTest, ExperiencesListsRecordsWithFilters) {
  auto r = Run("kb experiences " + Kb());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("0 experiences (it does not exist yet"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(kb_)) << "listing created the knowledge base";
  {
    auto kb = knowledge::KnowledgeBase::Open(kb_, knowledge::DefaultCorpusDirs());
    knowledge::Experience x;
    x.problem = "softmax";
    x.platform = "cpu";
    x.operator_family = "softmax_lastdim";
    x.op_signature = "aten._softmax.default(dim=-1,half_to_float=false)|float32->float32";
    x.shape_class = "r2[5,9]";
    x.shapes = {{32, 512}};
    x.template_name = "softmax_lastdim";
    x.knobs = {{"math", "vectorized"}};
    x.speedup = 1.87;
    x.fitness = 1.9;
    x.evaluations = 8;
    x.evaluations_to_best = 5;
    x.source = "// kernel";
    kb.RecordExperience(x);
    x.problem = "relu";
    kb.RecordExperience(x);
  }
  r = Run("kb experiences --problem softmax " + Kb());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 experiences"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("softmax_lastdim"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1.87x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5/8"), std::string::npos) << r.out;
  auto bad = Run("kb experiences --platform tpu " + Kb());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--platform 'tpu' is not one of"), std::string::npos) << bad.err;
  r = Run("kb experiences --platform cpu --json " + Kb());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc[0]["problem"], "relu");  // newest first
  r = Run("kb experiences --platform cuda " + Kb());
  EXPECT_NE(r.out.find("0 experiences"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kernelevolve
