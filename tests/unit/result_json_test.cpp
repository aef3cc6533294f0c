#include "eval/result_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"

namespace kernelevolve::eval {
namespace {

TEST(ResultJsonTest, TimingStatsRoundTrip) {
  core::TimingStats s{12, 3.5, 3.6, 0.2, 3.1, 4.4, 3.2, 4.0, 3.3, 3.8};
  nlohmann::json doc = TimingStatsToJson(s);
  EXPECT_EQ(doc["median"], 3.5);
  EXPECT_EQ(doc["n"], 12);
  core::TimingStats back = TimingStatsFromJson(nlohmann::json::parse(doc.dump()));
  EXPECT_EQ(back.n, 12);
  EXPECT_EQ(back.median_us, 3.5);
  EXPECT_EQ(back.ci_high_us, 3.8);
  EXPECT_EQ(back.p10_us, 3.2);
}

TEST(ResultJsonTest, TimingStatsAcceptsStructFieldNames) {
  auto s = TimingStatsFromJson({{"n", 3}, {"median_us", 7.0}});
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.median_us, 7.0);
  EXPECT_FALSE(TimingStatsFromJson(nlohmann::json::object()).Measured());
}

TEST(ResultJsonTest, OutputCheckRoundTripKeepsNonFiniteErrors) {
  core::OutputCheck c;
  c.seed_index = 2;
  c.output = "output.1";
  c.passed = false;
  c.max_abs_error = std::numeric_limits<double>::infinity();
  c.max_rel_error = std::numeric_limits<double>::quiet_NaN();
  c.mismatches = 17;
  c.first_mismatch = 4;
  c.atol = 1e-4;
  c.rtol = 1e-5;
  c.note = "NaN where reference is finite (3 elements)";
  std::string text = OutputCheckToJson(c).dump();  // must not throw on non-finite values
  core::OutputCheck back = OutputCheckFromJson(nlohmann::json::parse(text));
  EXPECT_EQ(back.seed_index, 2);
  EXPECT_EQ(back.output, "output.1");
  EXPECT_FALSE(back.passed);
  EXPECT_TRUE(std::isinf(back.max_abs_error));
  EXPECT_TRUE(std::isnan(back.max_rel_error));
  EXPECT_EQ(back.mismatches, 17);
  EXPECT_EQ(back.first_mismatch, 4);
  EXPECT_EQ(back.rtol, 1e-5);
  EXPECT_EQ(back.note, c.note);
}

TEST(ResultJsonTest, MalformedInputIsInvalidInput) {
  EXPECT_THROW(TimingStatsFromJson(nlohmann::json::array()), core::InvalidInputError);
  EXPECT_THROW(OutputCheckFromJson({{"mismatches", "many"}}), core::InvalidInputError);
  EXPECT_THROW(DoubleFromJson("fast"), core::InvalidInputError);
}

TEST(ResultJsonTest, Utf8TailAndHeadCutOnCharacterBoundaries) {
  std::string text = "ab\xC3\xA9\xC3\xA9";  // "abéé"
  EXPECT_EQ(Utf8Tail(text, 3), "\xC3\xA9");  // never half a character
  EXPECT_EQ(Utf8Head(text, 3), "ab");
  EXPECT_EQ(Utf8Tail("x\xFFy", 10), "x?y");  // invalid byte replaced
  EXPECT_NO_THROW(nlohmann::json(Utf8Tail("\xC3\xA9\xFF\xFE", 3)).dump());
}

}  // namespace
}  // namespace kernelevolve::eval
