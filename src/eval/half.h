// Conversions between 32-bit floats and the 16-bit float formats of fixtures
// (IEEE 754 binary16 "float16" and bfloat16), bit patterns held in uint16_t.
#pragma once

#include <cstdint>

namespace kernelevolve::eval {

/// IEEE 754 binary16 bits -> float. Exact for every input (normals, subnormals,
/// signed zeros, infinities); NaN stays NaN with its sign and payload shifted up.
float HalfToFloat(uint16_t bits);

/// float -> IEEE 754 binary16 bits, round to nearest, ties to even. Values beyond the
/// largest half (65504) round to infinity; tiny values become subnormals or signed zero;
/// NaN becomes a quiet NaN of the same sign.
uint16_t FloatToHalf(float value);

/// bfloat16 bits -> float. Exact: bfloat16 is the upper 16 bits of a float32.
float BFloat16ToFloat(uint16_t bits);

/// float -> bfloat16 bits, round to nearest, ties to even (the rounding torch uses);
/// NaN becomes a quiet NaN of the same sign.
uint16_t FloatToBFloat16(float value);

}  // namespace kernelevolve::eval
