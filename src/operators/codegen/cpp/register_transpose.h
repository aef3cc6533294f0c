// A square tile of floats transposed in vector registers, as C++ text for generated
// kernels: the C++ GEMM's packing of a transposed B (the weight of a Linear) and the
// attention kernel's additive mask, which both turn rows of contiguous floats into
// columns.
#pragma once

#include <string>

namespace kernelevolve::operators::codegen {

/// C++17 text defining, once per translation unit (guarded by KE_TRANSPOSE_LANES):
///   typedef float ke_tf   — one vector of `lanes` floats (GCC vector extension,
///                           unaligned, may_alias);
///   ke_transpose_regs(ke_tf (&x)[lanes]) — x[r][c] becomes x[c][r].
/// The transpose is log2(lanes) rounds of two-input shuffles (__builtin_shuffle, one
/// vpermt2ps / vpermi2ps each on AVX-512, shuffles and blends on AVX2): round b
/// exchanges the off-diagonal b x b blocks of rows r and r + b (r's bit b clear), which
/// swaps bit b of every element's row and column index; after the rounds for every bit
/// each element (r, c) is at (c, r). lanes x log2(lanes) shuffles for lanes^2 floats:
/// 64 for a 16 x 16 tile, against 256 scalar loads and stores. `lanes`: a power of two
/// up to 64 (std::invalid_argument otherwise); 1 is the identity.
std::string RegisterTransposeCpp(int lanes);

}  // namespace kernelevolve::operators::codegen
