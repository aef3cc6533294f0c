// problems/recsys end to end (the kernelevolve binary, the real worker, the real
// compiler): problems whose jagged inputs have other lengths under every seed get a
// correct kernel from the template operator, whose kernels read their sizes at run
// time (embedding_bag, index_add, unique and masked_select families, the last two with
// bounded outputs and their size tensors; loop-nest programs through the sizes they read at run time,
// ir/generalize.h), the sort family (stable sort with ties, top-k), and the searches and
// integer hashes of the loop IR.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;
using testing_util::FreshTestDir;
using testing_util::ReadFile;

struct RecsysCase {
  const char* problem;        // problems/recsys/<problem>.py
  const char* template_name;  // the template of the best kernel
  bool shapes_vary;           // the fixtures record other shapes per seed
  const char* varying = "input.0";  // a tensor whose length differs between seeds 0 and 1
};

void PrintTo(const RecsysCase& c, std::ostream* os) { *os << c.problem; }

class RecsysCliTest : public ::testing::TestWithParam<RecsysCase> {
 protected:
  void SetUp() override { dir_ = FreshTestDir("ke_recsys"); }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_P(RecsysCliTest, TemplateOperatorFindsACorrectKernel) {
  const RecsysCase& c = GetParam();
  const fs::path out = dir_ / "run";
  const std::string cmd = fmt::format(
      "cd '{}' && '{}' optimize problems/recsys/{}.py --target cpu --budget 3 --min-time 0.02 --confirm-rounds 0 "
      "--out '{}' --quiet >'{}' 2>&1",
      KE_SOURCE_DIR, KE_BINARY_PATH, c.problem, out.string(), (dir_ / "log.txt").string());
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(dir_ / "log.txt");
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc["status"], "ok");
  ASSERT_TRUE(doc["best"].is_object()) << doc.dump(2);
  EXPECT_TRUE(doc["best"]["correct"].get<bool>());
  EXPECT_EQ(doc["best"]["template"], c.template_name);
  const auto manifest = nlohmann::json::parse(ReadFile(out / "fixtures" / "manifest.json"));
  EXPECT_EQ(manifest.contains("set_shapes"), c.shapes_vary);
  if (c.shapes_vary) {
    const auto& sets = manifest["set_shapes"];
    ASSERT_EQ(sets.size(), 3u);
    EXPECT_NE(sets[0][c.varying], sets[1][c.varying]) << "seeds 0 and 1 should give " << c.varying << " other lengths";
  }
}

INSTANTIATE_TEST_SUITE_P(Problems, RecsysCliTest,
                         ::testing::Values(RecsysCase{"embedding_bag_sum", "embedding_bag", true},
                                           RecsysCase{"embedding_bag_mean_last_offset", "embedding_bag", true},
                                           RecsysCase{"embedding_bag_max", "embedding_bag", true},
                                           RecsysCase{"embedding_bag_weighted", "embedding_bag", true},
                                           RecsysCase{"segment_sum", "index_add", true},
                                           RecsysCase{"segment_mean", "index_add", true},
                                           RecsysCase{"index_add_scatter", "index_add", true, "input.1"},
                                           RecsysCase{"jagged_to_padded_dense", "loop_nest", true},
                                           RecsysCase{"remap_ids_sorted_table", "loop_nest", true},
                                           RecsysCase{"masked_select_positive", "masked_select", true, "output.0"},
                                           RecsysCase{"padded_dense_to_jagged", "masked_select", true, "output.0"},
                                           RecsysCase{"last_k_events", "masked_select", true, "input.0"},
                                           RecsysCase{"bucketize_right", "loop_nest", false},
                                           RecsysCase{"hash_mod", "loop_nest", false},
                                           RecsysCase{"sort_scores_stable", "sort", false},
                                           RecsysCase{"topk_candidates", "sort", false},
                                           RecsysCase{"dedup_jagged_ids", "unique", true},
                                           RecsysCase{"unique_ids_counts", "unique", true}),
                         [](const auto& info) { return std::string(info.param.problem); });

}  // namespace
}  // namespace kernelevolve
