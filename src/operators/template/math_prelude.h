// The branch-free float32 math prelude pasted into vectorized candidates.
#pragma once

#include <string>
#include <vector>

namespace kernelevolve::operators::templates {

/// Names of the prelude's functions, callees first: ke_bits_to_float,
/// ke_float_to_bits, ke_select, ke_exp, ke_expm1, ke_log, ke_log1p, ke_sigmoid,
/// ke_tanh, ke_softplus, ke_erf. Each is `static inline float f(float)` except the
/// two bit casts (float <-> int32_t) and ke_select(bool, float, float), a select
/// whose operands are both evaluated (so GCC can if-convert and vectorize it).
std::vector<std::string> MathPreludeFunctions();

/// C++17 source text defining the functions in `used` and everything they call,
/// in dependency order, under one explanatory comment; empty when `used` is empty.
/// Every function is straight-line code (selects, no libm calls, no tables), so
/// GCC inlines it into `#pragma omp simd` loops and vectorizes them at -O3
/// -march=native without -ffast-math. The text needs <cmath>, <cstdint> and
/// <cstring> included before it. Each function's comment names the source of its
/// formula (Cody & Waite 1980 range reduction; fits made for the prelude by
/// scripts/fit_exp_poly.py and scripts/fit_erf_rational.py; Goldberg 1991 for
/// log1p); the error bounds are asserted by tests/unit/math_prelude_test.cpp.
std::string MathPreludeSource(const std::vector<std::string>& used);

/// The whole prelude.
std::string MathPreludeSource();

/// The prelude needed by `code`: the functions whose "name(" occurs in it.
std::string MathPreludeFor(const std::string& code);

}  // namespace kernelevolve::operators::templates
