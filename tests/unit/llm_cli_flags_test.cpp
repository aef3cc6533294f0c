// The LLM flags of `kernelevolve optimize`: validation and their round trip through
// runs.config_json (so `resume` keeps them).
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/llm_setup.h"
#include "cli/run_config.h"
#include "core/error.h"

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

}  // namespace
}  // namespace kernelevolve::cli
