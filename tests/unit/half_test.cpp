#include "eval/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace kernelevolve::eval {
namespace {

TEST(HalfTest, KnownFloat16Values) {
  EXPECT_EQ(HalfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7BFF), 65504.0f);              // largest finite half
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_EQ(HalfToFloat(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(HalfToFloat(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7E00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7C01)));
}

TEST(HalfTest, Float16RoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie -> even (down)
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie -> even (up)
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // tie between 65504 and 65536 -> inf
  EXPECT_EQ(FloatToHalf(1e10f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-1e10f), 0xFC00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);      // tie -> even (zero)
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);      // tie -> even (2 units)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(FloatToHalf(-std::ldexp(1.0f, -30)), 0x8000);     // signed zero kept
  EXPECT_EQ(FloatToHalf(std::ldexp(2047.0f, -25)), 0x0400);   // carries into the smallest normal
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::quiet_NaN()) & 0x7E00, 0x7E00);
  EXPECT_EQ(FloatToHalf(std::bit_cast<float>(0x7F800001u)) & 0x7E00, 0x7E00);  // signalling -> quiet
}

TEST(HalfTest, EveryFloat16RoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f = HalfToFloat(h);
    if (std::isnan(f)) {
      EXPECT_TRUE((h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0) << bits;
      continue;
    }
    ASSERT_EQ(FloatToHalf(f), h) << "bits 0x" << std::hex << bits;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's own _Float16 conversion is an independent oracle for FloatToHalf.
TEST(HalfTest, MatchesCompilerFloat16OnRandomFloats) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 200000; ++i) {
    // Bias half the draws toward the half-precision range (exponents 100..145).
    uint32_t bits = any_bits(rng);
    if (i % 2 == 0) bits = (bits & 0x807FFFFFu) | ((100u + bits % 46u) << 23);
    const float f = std::bit_cast<float>(bits);
    if (std::isnan(f)) continue;
    const auto expected = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
    ASSERT_EQ(FloatToHalf(f), expected) << "float bits 0x" << std::hex << bits;
    ASSERT_EQ(std::bit_cast<uint32_t>(HalfToFloat(expected)),
              std::bit_cast<uint32_t>(static_cast<float>(std::bit_cast<_Float16>(expected))));
  }
}
#endif

TEST(HalfTest, BFloat16KnownValuesAndRounding) {
  EXPECT_EQ(BFloat16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(0xC049), -3.140625f);
  EXPECT_EQ(BFloat16ToFloat(0xFF80), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie -> even (down)
  EXPECT_EQ(FloatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie -> even (up)
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7F80);  // rounds to inf
  EXPECT_EQ(FloatToBFloat16(-std::numeric_limits<float>::quiet_NaN()) & 0xFFC0, 0xFFC0);
  EXPECT_EQ(FloatToBFloat16(std::bit_cast<float>(0x7F800001u)) & 0x7FC0, 0x7FC0);  // stays NaN
}

TEST(HalfTest, BFloat16PicksTheNearerNeighbour) {
  std::mt19937 rng(99);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 100000; ++i) {
    const float x = std::bit_cast<float>(any_bits(rng) & 0x7F7FFFFFu);  // finite, positive
    const uint32_t down = std::bit_cast<uint32_t>(x) & 0xFFFF0000u;
    const double lo = std::bit_cast<float>(down);
    // The upper neighbour of the largest finite bfloat16 is 2^128, which rounds to inf.
    const uint32_t up = down + 0x10000u;
    const double hi = up == 0x7F800000u ? std::ldexp(1.0, 128) : std::bit_cast<float>(up);
    double r = BFloat16ToFloat(FloatToBFloat16(x));
    if (std::isinf(r)) r = std::ldexp(1.0, 128);
    ASSERT_TRUE(r == lo || r == hi) << x;
    const double other = r == lo ? hi : lo;
    ASSERT_LE(std::fabs(r - x), std::fabs(other - x)) << x;
  }
}

}  // namespace
}  // namespace kernelevolve::eval
