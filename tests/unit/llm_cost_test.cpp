// Price table, cost arithmetic and the cost cap.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "operators/llm/cost_ledger.h"
#include "operators/llm/price_table.h"
#include "search_test_util.h"

namespace kernelevolve::operators::llm {
namespace {

namespace fs = std::filesystem;

/// A fresh temporary folder per test (removed afterwards) to write price files into.
class LlmCostFiles : public testing_util::TempDirTest {
 protected:
  fs::path WriteFile(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
};

TEST(LlmCost, CostIsTokensTimesPricePerMillion) {
  EXPECT_DOUBLE_EQ(CostUsd({3.0, 15.0}, {1'000'000, 0}), 3.0);
  EXPECT_DOUBLE_EQ(CostUsd({3.0, 15.0}, {2000, 500}), 0.006 + 0.0075);
  EXPECT_DOUBLE_EQ(CostUsd({}, {123, 456}), 0.0);
}

TEST_F(LlmCostFiles, PriceTableMatchesExactNamesAndDatedSnapshots) {
  auto path = WriteFile("prices.json", R"({"models": {"anthropic:claude-sonnet-4": {"input_per_mtok": 3, "output_per_mtok": 15},
     "anthropic:claude-sonnet-4-5": {"input_per_mtok": 4, "output_per_mtok": 16}}})");
  PriceTable t = PriceTable::Load(path);
  EXPECT_DOUBLE_EQ(t.Find("anthropic:claude-sonnet-4")->input_per_mtok, 3);
  EXPECT_DOUBLE_EQ(t.Find("anthropic:claude-sonnet-4-5-20250929")->input_per_mtok, 4);  // longest prefix
  EXPECT_DOUBLE_EQ(t.Find("anthropic:claude-sonnet-4-20250514")->output_per_mtok, 15);
  EXPECT_FALSE(t.Find("anthropic:claude-sonnet-45"));
  EXPECT_FALSE(t.Find("openai:gpt-4.1"));
}

TEST_F(LlmCostFiles, BadPriceFilesNameTheField) {
  try {
    PriceTable::Load(WriteFile("bad.json", R"({"models": {"openai:x": {"input_per_mtok": -1, "output_per_mtok": 1}}})"));
    FAIL();
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("models.\"openai:x\".input_per_mtok"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PriceTable::Load(WriteFile("notjson.json", "{")), core::InvalidInputError);
  EXPECT_THROW(PriceTable::Load("/nonexistent/prices.json"), core::InvalidInputError);
}

TEST(LlmCost, ShippedPriceFileLoads) {
  PriceTable t = PriceTable::Load(DefaultPriceFile());
  ASSERT_TRUE(t.Find("openai:gpt-4.1"));
  ASSERT_TRUE(t.Find("anthropic:claude-sonnet-4-5"));
  EXPECT_GT(t.Find("anthropic:claude-sonnet-4-5")->output_per_mtok, t.Find("anthropic:claude-sonnet-4-5")->input_per_mtok);
}

TEST(LlmCost, CapRefusesACallThatCouldCrossIt) {
  CostLedger ledger(1.0);
  EXPECT_FALSE(ledger.Refuse(0.4));
  ledger.Add(0.7, {1000, 100});
  EXPECT_FALSE(ledger.Refuse(0.3));  // exactly reaching the cap is allowed
  auto reason = ledger.Refuse(0.31);
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("--max-cost $1.0000"), std::string::npos) << *reason;
  EXPECT_EQ(ledger.input_tokens(), 1000);
  CostLedger unlimited(0);
  EXPECT_FALSE(unlimited.Refuse(1e9));
  EXPECT_EQ(MaxInputTokens(1000, 2), 1032);
}

}  // namespace
}  // namespace kernelevolve::operators::llm
