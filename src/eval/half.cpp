#include "eval/half.h"

#include <bit>

namespace kernelevolve::eval {
namespace {

// binary16 layout: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
// binary32 layout: 1 sign bit, 8 exponent bits (bias 127), 23 mantissa bits.
constexpr uint32_t kF32ExpMask = 0x7F800000u;
constexpr uint32_t kF32MantMask = 0x007FFFFFu;

}  // namespace

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  uint32_t out = 0;
  if (exponent == 0x1F) {  // infinity or NaN
    out = sign | kF32ExpMask | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    out = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // signed zero
    out = sign;
  } else {  // subnormal: value = mantissa * 2^-24; normalize into a float32 normal
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3FFu;
    const uint32_t f32_exponent = static_cast<uint32_t>(127 - 15 + 1 - shift);
    out = sign | (f32_exponent << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(out);
}

uint16_t FloatToHalf(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t f32_exponent = (bits & kF32ExpMask) >> 23;
  const uint32_t f32_mantissa = bits & kF32MantMask;
  if (f32_exponent == 0xFF) {  // infinity or NaN (NaN forced quiet)
    return static_cast<uint16_t>(sign | 0x7C00u | (f32_mantissa != 0 ? 0x200u : 0u) |
                                 (f32_mantissa >> 13));
  }
  const int exponent = static_cast<int>(f32_exponent) - 127 + 15;
  if (exponent >= 0x1F) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow -> inf
  if (exponent <= 0) {
    // Subnormal half (or zero): shift the full significand (with its implicit 1)
    // right so the result counts units of 2^-24, rounding ties to even.
    if (exponent < -10) return sign;  // below half of the smallest subnormal
    const uint32_t significand = f32_mantissa | 0x00800000u;
    const int shift = 14 - exponent;  // 13 for the mantissa width + (1 - exponent)
    uint32_t half_mantissa = significand >> shift;
    const uint32_t remainder = significand & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<uint16_t>(sign | half_mantissa);  // a carry makes it the smallest normal
  }
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (f32_mantissa >> 13);
  const uint32_t remainder = f32_mantissa & 0x1FFFu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;  // may carry to inf
  return static_cast<uint16_t>(sign | half);
}

float BFloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & kF32ExpMask) == kF32ExpMask && (bits & kF32MantMask) != 0) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN, sign kept
  }
  const uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);  // ties to even
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace kernelevolve::eval
