// The LLM flags of `kernelevolve optimize`, `bench` and `compare`: validation, their
// round trip through runs.config_json (so `resume` keeps them), and the cost field of
// the progress line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/bench_command.h"
#include "cli/compare_command.h"
#include "cli/llm_setup.h"
#include "cli/run_config.h"
#include "core/error.h"
#include "report/progress.h"

namespace kernelevolve::cli {
namespace {

OptimizeOptions LlmOptions() {
  OptimizeOptions o;
  o.problem_path = "problems/level1/relu.py";
  o.llm = {"openai:test-model", "anthropic:claude-sonnet-4-5"};
  o.llm_base_urls = {"openai=http://127.0.0.1:8000/v1"};
  o.max_cost_usd = 1.5;
  o.llm_timeout_seconds = 30;
  o.llm_retries = 3;
  o.llm_max_tokens = 4000;
  o.llm_temperature = 0.3;
  return o;
}

std::string ErrorOf(const OptimizeOptions& o) {
  try {
    ValidateLlmFlags(o);
  } catch (const core::InvalidInputError& e) {
    return e.what();
  }
  return "";
}

TEST(LlmCliFlags, RoundTripThroughTheStoredConfig) {
  OptimizeOptions o = LlmOptions();
  store::RunRecord run;
  run.config = OptionsToConfig(o, {});
  OptimizeOptions back = OptionsFromRun(run);
  EXPECT_EQ(back.llm, o.llm);
  EXPECT_EQ(back.llm_base_urls, o.llm_base_urls);
  EXPECT_DOUBLE_EQ(back.max_cost_usd, 1.5);
  EXPECT_DOUBLE_EQ(back.llm_timeout_seconds, 30);
  EXPECT_EQ(back.llm_retries, 3);
  EXPECT_EQ(back.llm_max_tokens, 4000);
  EXPECT_DOUBLE_EQ(back.llm_temperature, 0.3);
  run.config.erase("llm_temperature");  // older runs: the provider's default
  EXPECT_LT(OptionsFromRun(run).llm_temperature, 0);
  run.config.erase("llm");  // a run of an older kernelevolve: the template operator
  EXPECT_TRUE(OptionsFromRun(run).llm.empty());
}

TEST(LlmCliFlags, ValidationNamesTheFlagTheFileOrTheVariable) {
  ::setenv("ANTHROPIC_API_KEY", "k", 1);
  OptimizeOptions o = LlmOptions();
  o.llm = {"openai:test-model"};
  // openai:test-model has no price in the shipped table: --max-cost cannot be enforced.
  EXPECT_NE(ErrorOf(o).find("no price for openai:test-model"), std::string::npos) << ErrorOf(o);
  o.max_cost_usd = 0;
  EXPECT_EQ(ErrorOf(o), "");
  o.llm_base_urls = {"ftp://x"};
  EXPECT_NE(ErrorOf(o).find("--llm-base-url ftp://x"), std::string::npos);
  o.llm_base_urls = {};
  ::unsetenv("OPENAI_API_KEY");
  EXPECT_NE(ErrorOf(o).find("OPENAI_API_KEY is not set"), std::string::npos) << ErrorOf(o);
  OptimizeOptions plain;
  plain.max_cost_usd = 3;
  EXPECT_NE(ErrorOf(plain).find("need --llm"), std::string::npos);
  OptimizeOptions bad = LlmOptions();
  bad.llm = {"gemini:pro"};
  EXPECT_NE(ErrorOf(bad).find("unknown provider 'gemini'"), std::string::npos) << ErrorOf(bad);
  bad = LlmOptions();
  bad.llm_prices = "/nonexistent.json";
  EXPECT_NE(ErrorOf(bad).find("--llm-prices /nonexistent.json"), std::string::npos) << ErrorOf(bad);
}

TEST(LlmCliFlags, TemperatureAndTargetAreChecked) {
  OptimizeOptions o = LlmOptions();
  o.llm = {"openai:test-model"};
  o.max_cost_usd = 0;
  ::setenv("OPENAI_API_KEY", "k", 1);
  EXPECT_EQ(ErrorOf(o), "");
  o.llm_temperature = 2.5;
  EXPECT_NE(ErrorOf(o).find("--llm-temperature must be between 0 and 2"), std::string::npos) << ErrorOf(o);
  o.llm_temperature = -1;
  o.target = "triton";
  EXPECT_EQ(ErrorOf(o), "");
  o.llm_prompts = std::filesystem::path(KE_SOURCE_DIR) / "prompts" / "v1";  // CPU-only prompts
  EXPECT_NE(ErrorOf(o).find("no sections/abi_triton.md"), std::string::npos) << ErrorOf(o);
  OptimizeOptions plain;
  plain.llm_temperature = 0.5;
  EXPECT_NE(ErrorOf(plain).find("need --llm"), std::string::npos);
}

// Issue 21: bench and compare take the same LLM flags as optimize.
TEST(LlmCliFlags, BenchAndCompareTakeTheLlmFlags) {
  const std::vector<std::string> flags = {"--llm", "openai:test-model", "--llm-base-url", "http://127.0.0.1:9/v1",
                                          "--max-cost", "0.5", "--llm-temperature", "0.7", "--llm-max-tokens", "999",
                                          "--llm-retries", "2", "--llm-timeout", "11"};
  {
    CLI::App app;
    BenchOptions b;
    AddBenchCommand(app, b);
    std::vector<std::string> args = {"bench", "problems/level1"};
    args.insert(args.end(), flags.begin(), flags.end());
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    app.parse(args);
    EXPECT_EQ(b.llm, std::vector<std::string>{"openai:test-model"});
    EXPECT_EQ(b.llm_base_urls, std::vector<std::string>{"http://127.0.0.1:9/v1"});
    EXPECT_DOUBLE_EQ(b.max_cost_usd, 0.5);
    EXPECT_DOUBLE_EQ(b.llm_temperature, 0.7);
    EXPECT_EQ(b.llm_max_tokens, 999);
    EXPECT_EQ(b.llm_retries, 2);
    EXPECT_DOUBLE_EQ(b.llm_timeout_seconds, 11);
  }
  {
    CLI::App app;
    CompareOptions c;
    AddCompareCommand(app, c);
    std::vector<std::string> args = {"compare", "--problems", "problems/level1/relu.py"};
    args.insert(args.end(), flags.begin(), flags.end());
    std::reverse(args.begin(), args.end());
    app.parse(args);
    EXPECT_EQ(c.llm, std::vector<std::string>{"openai:test-model"});
    EXPECT_DOUBLE_EQ(c.llm_temperature, 0.7);
    EXPECT_DOUBLE_EQ(c.max_cost_usd, 0.5);
  }
}

TEST(LlmCliFlags, ProgressLineCarriesTheExtraField) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  report::ConsoleProgress progress(4, 60, out);
  double spent = 0.0123;
  progress.SetExtraField([&spent] { return fmt::format("llm ${:.4f} (2 calls)", spent); });
  search::Tree tree;
  search::Node n;
  n.id = 0;
  n.evaluation.status = core::Status::kCompileError;
  tree.Add(n);
  progress.OnEvaluated(tree.Get(0), tree, 1.0);
  std::rewind(out);
  char buffer[512] = {};
  const size_t read = std::fread(buffer, 1, sizeof(buffer) - 1, out);
  std::fclose(out);
  const std::string line(buffer, read);
  EXPECT_NE(line.find("| llm $0.0123 (2 calls)"), std::string::npos) << line;
}

}  // namespace
}  // namespace kernelevolve::cli
