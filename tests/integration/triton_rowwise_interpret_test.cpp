// triton_rowwise and triton_scan kernels run under TRITON_INTERPRET=1 (no GPU):
// every captured rowwise case (tests/unit/data/rowwise) through several settings of
// its knob space against the recorded eager outputs (one Python process), and
// `optimize --target triton` end to end on a representative set of level-1 problems.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "problem/worker_client.h"
#include "core/op_graph.h"
#include "core/problem.h"
#include "operators/template/triton_softmax.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path TempDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("ke_triton_rw_{}_{}", ::getpid(), name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// The first draft plus variations of it that reach the other code paths: each
/// layout and pass, the smallest blocks with float64 accumulators (several loop
/// trips), 4 programs per split row.
std::vector<nlohmann::json> Settings(const operators::templates::KernelTemplate& t) {
  const auto& space = t.Space();
  const nlohmann::json first = t.Drafts().front();
  std::vector<nlohmann::json> out = {first};
  auto add = [&](nlohmann::json knobs) {
    if (space.IsValid(knobs)) out.push_back(space.Canonical(knobs));
  };
  for (const char* dim : {"layout", "pass"}) {
    if (const auto* d = space.Find(dim)) {
      for (const auto& v : d->values) {
        nlohmann::json k = first;
        k[dim] = v;
        add(k);
      }
    }
  }
  nlohmann::json small = first;
  small["pass"] = "looped";
  for (const char* dim : {"block_r", "split_block", "block_i"}) {
    if (const auto* d = space.Find(dim)) small[dim] = d->values.front();
  }
  if (space.Find("accumulator") != nullptr) small["accumulator"] = "float64";
  add(small);
  if (space.Find("programs_per_row") != nullptr) {
    nlohmann::json split = first;
    split["layout"] = "split";
    split["programs_per_row"] = 4;
    split["split_block"] = space.Find("split_block")->values.front();
    add(split);
  }
  std::set<std::string> seen;
  std::vector<nlohmann::json> unique;
  for (const auto& k : out) {
    if (seen.insert(k.dump()).second) unique.push_back(k);
  }
  return unique;
}

TEST(TritonRowwiseInterpret, CapturedCasesMatchEagerUnderEverySettingFamily) {
  const fs::path cases = fs::path(KE_TEST_DATA_DIR) / "unit" / "data" / "rowwise";
  const fs::path dir = TempDir("cases");
  nlohmann::json manifest = nlohmann::json::array();
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    core::Problem problem;
    problem.graph = core::OpGraphFromJson(nlohmann::json::parse(ReadFile(entry.path())));
    const auto match = operators::templates::MatchTritonTemplate(problem);
    ASSERT_TRUE(match.tmpl) << name << ": " << match.unsupported;
    int k = 0;
    for (const auto& knobs : Settings(*match.tmpl)) {
      const fs::path module = dir / fmt::format("{}_{}.py", name, k++);
      std::ofstream(module) << match.tmpl->Generate(knobs);
      manifest.push_back({{"module", module.string()},
                          {"case", (cases / (name + ".safetensors")).string()},
                          {"knobs", knobs}});
    }
  }
  ASSERT_GE(manifest.size(), 50u);
  std::ofstream(dir / "manifest.json") << manifest.dump(1);
  const std::string cmd = fmt::format(
      "{} '{}' '{}/integration/triton_case_check.py' '{}' > '{}' "
      "2>&1",
      testing_util::kInterpretWithoutGpuEnv, problem::DefaultPython().string(), KE_TEST_DATA_DIR, (dir / "manifest.json").string(),
      (dir / "results.txt").string());
  const int status = std::system(cmd.c_str());
  std::istringstream results(ReadFile(dir / "results.txt"));
  size_t checked = 0;
  for (std::string line; std::getline(results, line);) {
    if (line.empty() || line[0] != '{') continue;
    const auto r = nlohmann::json::parse(line);
    ++checked;
    EXPECT_TRUE(r.at("ok").get<bool>())
        << r.at("module").get<std::string>() << ": " << r.at("error").get<std::string>() << "\n"
        << ReadFile(r.at("module").get<std::string>());
  }
  EXPECT_EQ(checked, manifest.size()) << ReadFile(dir / "results.txt");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

struct Level1Case {
  const char* problem;
  const char* sets;
  const char* template_name;
};

class TritonLevel1Interpret : public ::testing::TestWithParam<Level1Case> {};

TEST_P(TritonLevel1Interpret, OptimizeFindsCorrectKernels) {
  const Level1Case& c = GetParam();
  const fs::path dir = TempDir(fs::path(c.problem).stem().string());
  const fs::path out = dir / "run";
  const std::string problem = std::string(c.problem).find('/') == std::string::npos
                                  ? fmt::format("problems/level1/{}.py", c.problem)
                                  : std::string(c.problem);
  const std::string cmd = fmt::format(
      "cd '{}' && {} '{}' optimize {} --target triton {} "
      "--budget 2 --no-kb "
      "--seeds 2 --confirm-rounds 0 --min-time 0.01 --candidate-timeout 300 --cache-dir '{}' --out "
      "'{}' "
      ">/dev/null 2>'{}'",
      KE_SOURCE_DIR, testing_util::kInterpretWithoutGpuEnv, KE_BINARY_PATH, problem, c.sets, (dir / "cache").string(), out.string(),
      (dir / "stderr.txt").string());
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(dir / "stderr.txt");
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc.at("best").at("template"), c.template_name);
  EXPECT_TRUE(doc.at("best").at("correct").get<bool>());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((out / "kernelevolve.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT node_id, status, message FROM evaluations", -1, &stmt, nullptr);
  int rows = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    ++rows;
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)), "ok")
        << "node " << sqlite3_column_int64(stmt, 0) << ": " << sqlite3_column_text(stmt, 2);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  EXPECT_EQ(rows, 2);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

// Small shapes; layer_norm's 2 rows of 16384 draft the split layout first.
INSTANTIATE_TEST_SUITE_P(
    Representative, TritonLevel1Interpret,
    ::testing::Values(
        Level1Case{"sum_dim", "--set batch_size=3 --set dim1=37 --set dim2=20", "triton_rowwise"},
        Level1Case{"argmax_dim", "--set batch_size=3 --set dim1=37 --set dim2=20",
                   "triton_rowwise"},
        Level1Case{"layer_norm", "--set batch_size=2 --set features=16 --set dim1=32 --set dim2=32",
                   "triton_rowwise"},
        Level1Case{"group_norm", "--set batch_size=2 --set features=16 --set dim1=5 --set dim2=7",
                   "triton_rowwise"},
        Level1Case{"batch_norm", "--set batch_size=2 --set features=16 --set dim1=32 --set dim2=40",
                   "triton_rowwise"},
        Level1Case{"softmax_channels", "--set batch_size=2 --set channels=12 --set length=50",
                   "triton_rowwise"},
        Level1Case{"cross_entropy", "--set batch_size=37 --set num_classes=50", "triton_rowwise"},
        Level1Case{"frobenius_norm",
                   "--set batch_size=2 --set features=4 --set dim1=5 --set dim2=7",
                   "triton_rowwise"},
        Level1Case{"cumsum_reverse", "--set batch_size=5 --set length=3000", "triton_scan"},
        Level1Case{"masked_cumsum", "--set batch_size=5 --set length=3000", "triton_scan"},
        // `cumsum(x) - x` where the float32-rounded inclusive prefix cancels badly.
        Level1Case{"tests/data/problems/exclusive_cumsum_cancellation.py", "", "triton_scan"},
        // Two matmuls around a tanh: no specialized family, a three-kernel loop nest.
        Level1Case{"problems/chains/mm_tanh_mm.py", "--set M=32 --set K=32 --set N=32 --set P=16",
                   "triton_loop_nest"}),
    [](const ::testing::TestParamInfo<Level1Case>& info) {
      return fs::path(info.param.problem).stem().string();
    });

}  // namespace
}  // namespace kernelevolve
