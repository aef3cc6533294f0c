// The Triton loop-nest printer under TRITON_INTERPRET=1 (no GPU): every captured
// loop-nest case (tests/unit/data/loop_nest, written by make_cases.py) through each
// draft of families::TritonLoopNestTemplate against the recorded eager outputs, in
// one Python process (tests/integration/triton_case_check.py). With KE_KEEP set, the
// generated modules stay in the temporary folder for reading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "interpret_check.h"
#include "core/op_graph.h"
#include "operators/families/embedding_bag/triton_embedding_bag_template.h"
#include "operators/families/loop_nest/triton_loop_nest_template.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TritonLoopNestInterpret, EveryCaseMatchesEagerOnEveryDraft) {
  const fs::path cases = fs::path(KE_TEST_DATA_DIR) / "unit" / "data" / "loop_nest";
  const fs::path dir = fs::temp_directory_path() / fmt::format("ke_triton_loop_nest_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlohmann::json manifest = nlohmann::json::array();
  int tf32_modules = 0;
  for (const auto& entry : fs::directory_iterator(cases)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    const core::OpGraph graph = core::OpGraphFromJson(nlohmann::json::parse(ReadText(entry.path())));
    // The interpreter converts float32 to bfloat16 by truncation (triton 3.6: 203.5 ->
    // 203, where a GPU and eager round to nearest even, 204), so the bfloat16 cases
    // (bf16_casts, bf16_linear_relu) are checked on a GPU only (docs/gpu.md, "Half
    // precision in loop nests"); float16 converts correctly and runs here.
    if (std::any_of(graph.nodes.begin(), graph.nodes.end(),
                    [](const core::OpNode& n) { return n.dtype == core::DType::kBFloat16; })) {
      continue;
    }
    const auto match = operators::families::MatchTritonLoopNest(graph);
    ASSERT_TRUE(match.tmpl) << name << ": " << match.unsupported;
    int k = 0;
    for (const auto& knobs : match.tmpl->Drafts()) {
      const fs::path module = dir / fmt::format("{}_{}.py", name, k++);
      std::ofstream(module) << match.tmpl->Generate(knobs);
      manifest.push_back({{"module", module.string()}, {"case", (cases / (name + ".safetensors")).string()}});
    }
    // Where the reference runs its products in TF32 the first draft is a plain TF32 dot
    // whose operands go through the rounding helper (codegen/triton/tf32_round.h): the
    // module must load and, under the interpreter, multiply in float32 as before.
    const auto tf32 = operators::families::MatchTritonLoopNest(graph, {}, core::ReferenceTf32{true, true});
    ASSERT_TRUE(tf32.tmpl) << name << ": " << tf32.unsupported;
    const std::string code = tf32.tmpl->Generate(tf32.tmpl->Drafts().front());
    if (code.find("def _ke_round_tf32(") == std::string::npos) continue;
    ++tf32_modules;
    const fs::path module = dir / fmt::format("{}_tf32.py", name);
    std::ofstream(module) << code;
    manifest.push_back({{"module", module.string()}, {"case", (cases / (name + ".safetensors")).string()}});
  }
  EXPECT_GE(tf32_modules, 5);  // the convolution and product cases
  ASSERT_GE(manifest.size(), 100u);  // 50+ cases, 3 drafts each
  testing_util::RunInterpretChecker("triton_case_check.py", dir, manifest);
  if (!::testing::Test::HasFailure() && !std::getenv("KE_KEEP")) fs::remove_all(dir);
}

TEST(TritonEmbeddingBagInterpret, Float16TablesMatchEagerOnEveryDraft) {
  // The family's float16 cases (the rounded sum over the count for a mean; max); the
  // bfloat16 one runs on a GPU only (the interpreter truncates bfloat16 casts).
  const fs::path cases = fs::path(KE_TEST_DATA_DIR) / "unit" / "data" / "loop_nest" / "families";
  const fs::path dir = fs::temp_directory_path() / fmt::format("ke_triton_embedding_bag_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlohmann::json manifest = nlohmann::json::array();
  for (const std::string name : {"embedding_bag_f16_mean", "embedding_bag_f16_max"}) {
    const core::OpGraph graph = core::OpGraphFromJson(nlohmann::json::parse(ReadText(cases / (name + ".json"))));
    const auto match = operators::families::MatchTritonEmbeddingBag(graph);
    ASSERT_TRUE(match.has_value() && match->tmpl) << name;
    int k = 0;
    for (const auto& knobs : match->tmpl->Drafts()) {
      const fs::path module = dir / fmt::format("{}_{}.py", name, k++);
      std::ofstream(module) << match->tmpl->Generate(knobs);
      manifest.push_back({{"module", module.string()}, {"case", (cases / (name + ".safetensors")).string()}});
    }
  }
  ASSERT_GE(manifest.size(), 2u);
  testing_util::RunInterpretChecker("triton_case_check.py", dir, manifest);
  if (!::testing::Test::HasFailure() && !std::getenv("KE_KEEP")) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
