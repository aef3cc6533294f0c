// Issue 18's problem folders end to end (the kernelevolve binary, the real worker, the
// real compiler): F.scaled_dot_product_attention gets the attention family's fused
// kernel (causal, bool mask, float mask, given scale), and so do its explicit
// softmax(q k^T) v spellings (causal, padding mask, bias, 3-d bmm); nn.LSTM and a batch-first
// bidirectional nn.GRU are captured (oneDNN off while tracing, the in-place transpose_
// lowered) and compile as loop-nest programs; a transformer encoder layer, whose
// attention sits inside a bigger graph, compiles through the loop-nest lowering of the
// same node. On --target triton under TRITON_INTERPRET (no GPU), the attention problems
// get the triton_attention family's fused kernel. Correctness only: no test asserts a
// speed (benchmarks do).
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
using testing_util::CountRows;
using testing_util::FreshTestDir;
using testing_util::kInterpretWithoutGpuEnv;
using testing_util::ReadFile;

struct HeavyCase {
  const char* problem;        // problems/<problem>.py
  const char* template_name;  // the template of the best kernel
  int budget;
};

void PrintTo(const HeavyCase& c, std::ostream* os) { *os << c.problem; }

/// Runs `kernelevolve optimize problems/<problem>.py <flags>` into dir/run; expects exit 0
/// and a correct best kernel of `template_name` (`every_draft`: and no incorrect one).
void ExpectCorrectKernel(const fs::path& dir, const std::string& env, const std::string& problem,
                         const std::string& flags, const std::string& template_name, bool every_draft = false) {
  fs::create_directories(dir);
  const fs::path out = dir / "run";
  const std::string cmd = fmt::format(
      "cd '{}' && {} '{}' optimize problems/{}.py {} --min-time 0.02 --confirm-rounds 0 --out '{}' --quiet >'{}' 2>&1",
      KE_SOURCE_DIR, env, KE_BINARY_PATH, problem, flags, out.string(), (dir / "log.txt").string());
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(dir / "log.txt");
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc["status"], "ok");
  ASSERT_TRUE(doc["best"].is_object()) << doc.dump(2);
  EXPECT_TRUE(doc["best"]["correct"].get<bool>());
  EXPECT_EQ(doc["best"]["template"], template_name);
  if (every_draft) {
    EXPECT_EQ(CountRows(out / "kernelevolve.db", "SELECT COUNT(*) FROM evaluations WHERE correct = 0"), 0)
        << ReadFile(dir / "log.txt");
  }
}

class HeavyCliTest : public ::testing::TestWithParam<HeavyCase> {
 protected:
  void SetUp() override { dir_ = FreshTestDir("ke_heavy"); }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_P(HeavyCliTest, TemplateOperatorFindsACorrectKernel) {
  const HeavyCase& c = GetParam();
  ExpectCorrectKernel(dir_, "", c.problem, fmt::format("--target cpu --budget {}", c.budget), c.template_name);
}

/// --target triton under the interpreter, at sizes the interpreter runs in seconds:
/// sizes that are no multiple of the blocks, a bool mask broadcast over heads, causal.
TEST(HeavyTritonInterpret, AttentionProblemsGetTheFusedTritonKernel) {
  const fs::path dir = FreshTestDir("ke_heavy_triton");
  for (const auto& [problem, sizes] :
       {std::pair{"attention/sdpa_bool_mask", "--set B=1 --set H=2 --set SQ=20 --set SK=37 --set D=16 --budget 1"},
        std::pair{"attention/sdpa_causal", "--set B=1 --set H=2 --set S=45 --set D=8 --budget 1"},
        // Full key blocks (EVEN: no key masks), the additive mask in base 2, a wide head (32
        // keys a step); both 3xTF32 drafts: split by the kernel, then by Triton.
        std::pair{"attention/sdpa_float_mask", "--set B=1 --set H=2 --set S=64 --set D=16 --budget 2"},
        std::pair{"attention/sdpa_scale", "--set B=1 --set H=1 --set S=64 --set D=128 --budget 2"},
        // The explicit spellings: a key padding mask (true = dropped), one head of 3-d bmm.
        std::pair{"attention/attention_explicit_bool_mask",
                  "--set B=1 --set H=2 --set SQ=20 --set SK=37 --set D=16 --budget 1"},
        std::pair{"attention/attention_explicit_bmm", "--set B=2 --set SQ=21 --set SK=33 --set D=8 --budget 1"}}) {
    SCOPED_TRACE(problem);
    ExpectCorrectKernel(dir / fs::path(problem).filename(), kInterpretWithoutGpuEnv, problem,
                        fmt::format("--target triton {}", sizes), "triton_attention", /*every_draft=*/true);
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Problems, HeavyCliTest,
                         ::testing::Values(HeavyCase{"attention/sdpa_causal", "attention", 2},
                                           HeavyCase{"attention/sdpa_bool_mask", "attention", 2},
                                           HeavyCase{"attention/sdpa_float_mask", "attention", 2},
                                           HeavyCase{"attention/sdpa_scale", "attention", 2},
                                           HeavyCase{"attention/attention_explicit_causal", "attention", 2},
                                           HeavyCase{"attention/attention_explicit_bool_mask", "attention", 2},
                                           HeavyCase{"attention/attention_explicit_bmm", "attention", 2},
                                           HeavyCase{"attention/attention_explicit_bias", "attention", 2},
                                           HeavyCase{"rnn/lstm_2layer_output", "loop_nest", 1},
                                           HeavyCase{"rnn/gru_bidirectional_hn", "loop_nest", 1},
                                           HeavyCase{"networks/transformer_encoder_layer", "loop_nest", 1}),
                         [](const auto& info) {
                           std::string name = info.param.problem;
                           for (char& ch : name) ch = ch == '/' ? '_' : ch;
                           return name;
                         });

}  // namespace
}  // namespace kernelevolve
