#include "operators/template/math_prelude.h"

#include <set>

namespace kernelevolve::operators::templates {
namespace {

/// One function of the prelude with the functions it calls (all listed earlier).
struct PreludeSection {
  const char* name;
  std::vector<const char*> deps;
  const char* text;
};

constexpr const char* kHeader =
    R"PRELUDE(// ---- kernelevolve math prelude (float32, branch-free, vectorizable) ----------
// Straight-line code only (selects, no libm calls, no tables), always inlined into
// `#pragma omp simd` loops, which GCC then vectorizes without -ffast-math (as plain
// `inline` GCC stopped inlining them into a large entry: a scalar call per element).
// Error bounds on finite inputs, measured against double-precision libm
// (kernelevolve tests/unit/math_prelude_test.cpp): exp, expm1, log, log1p within a
// few ulp; sigmoid, tanh, softplus abs error < 3e-7; erf abs error < 4e-7. Results
// of the exp family below 2^-125.5 (~1.7e-38: the denormals and the smallest normals)
// flush to 0.

)PRELUDE";

constexpr const char* kFooter =
    "// ---- end of math prelude ------------------------------------------------------\n";

const std::vector<PreludeSection>& Sections() {
  static const std::vector<PreludeSection> kSections = {
      {"ke_bits_to_float", {}, R"PRELUDE(static inline __attribute__((always_inline)) float ke_bits_to_float(int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
)PRELUDE"},
      {"ke_float_to_bits", {}, R"PRELUDE(static inline __attribute__((always_inline)) int32_t ke_float_to_bits(float f) {
  int32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}
)PRELUDE"},
      {"ke_select",
       {},
       R"PRELUDE(// cond ? a : b with both operands already evaluated. A plain ternary whose branch
// calls a function containing a division is not if-converted by GCC under the
// default -ftrapping-math, which blocks vectorization; this spelling is.
static inline __attribute__((always_inline)) float ke_select(bool cond, float a, float b) { return cond ? a : b; }
)PRELUDE"},
      {"ke_exp",
       {"ke_bits_to_float", "ke_float_to_bits"},
       R"PRELUDE(// e^x. Range reduction after Cody & Waite ("Software Manual for the Elementary
// Functions", 1980): x = n*ln2 + r, |r| <= ln2/2, ln2 split into a head exact in 9
// bits (0.693359375) and a tail, so n*ln2_hi is exact for |n| < 2^15. n = round(x/ln2)
// comes from t = x/ln2 + 1.5*2^23, whose low mantissa bits hold n (no float-to-int
// conversion). e^r = 1 + r + c2 r^2 + ... + c6 r^6, a minimax fit made for this
// prelude (kernelevolve scripts/fit_exp_poly.py: 3.1e-9 relative on |r| <= ln2/2;
// the float32 evaluation stays within 1.2 ulp of double exp on [-86.99, 88.72]); the
// coefficients are doubled (exact) to give 2*e^r, and the result is 2*e^r * 2^(n-1)
// with 2^(n-1) written straight into the IEEE 754 exponent bits: one integer add, one
// shift, one multiply. The input is clamped to [-87.5, 88.8], so n stays in [-126, 128]
// and the exponent field n + 126 in [0, 254]: results overflow to +inf above
// ln(FLT_MAX) ~ 88.72, and flush to 0 (no denormals) below 2^-125.5 ~ 1.7e-38, that
// is for x < -86.99 (absolute error < 1.7e-38; e^-100 gives 0, not 3.7e-44). A NaN
// passes the clamps and makes p, hence the result, NaN.
// GCC's jump threading copies the code after the clamps for the clamped inputs and
// then keeps a second division for them in a caller such as x / (1 + ke_exp(-x))
// (two vdivps per vector, ~8% of a group-norm + SiLU kernel on Zen 4); it is turned
// off for the rest of this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-thread-jumps")
#endif
static inline __attribute__((always_inline)) float ke_exp(float x) {
  float xc = x < -87.5f ? -87.5f : x;
  xc = xc > 88.8f ? 88.8f : xc;
  const float t = xc * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  const float r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 2.76290924e-3f;
  p = p * r + 1.673739374e-2f;
  p = p * r + 8.33367746e-2f;
  p = p * r + 3.33330416e-1f;
  p = p * r + 9.9999987e-1f;
  p = p * r + 2.0f;
  p = p * r + 2.0f;
  // n from t's mantissa, in unsigned arithmetic so that a NaN's bits cannot overflow.
  const uint32_t ni = static_cast<uint32_t>(ke_float_to_bits(t)) - 0x4B400000u;
  return p * ke_bits_to_float(static_cast<int32_t>((ni + 126u) << 23));
}
)PRELUDE"},
      {"ke_expm1",
       {"ke_exp"},
       R"PRELUDE(// e^x - 1 without cancellation near 0: for |x| < ln2/2 the Taylor series
// x + x^2/2! + ... + x^7/7! (truncation < 5.2e-9 relative); elsewhere e^x - 1,
// whose result is then >= 0.29 in magnitude, so the subtraction loses < 2 ulp.
static inline __attribute__((always_inline)) float ke_expm1(float x) {
  float p = 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  p = p * x + 1.0f;
  const float small = p * x;
  const float large = ke_exp(x) - 1.0f;
  const float ax = x < 0.0f ? -x : x;
  return ax < 0.34657359f ? small : large;
}
)PRELUDE"},
      {"ke_log",
       {"ke_bits_to_float", "ke_float_to_bits"},
       R"PRELUDE(// log(x). Exponent/mantissa split x = 2^k * m with m in [sqrt(1/2), sqrt(2)), then
// with f = m - 1 (exact, Sterbenz), log(m) = f - f^2/2 + f^3 * P(f), P of degree 6: a
// minimax fit made for this prelude (kernelevolve scripts/fit_log_poly.py: 3.2e-8 relative
// in double, < 1e-7 relative in float32). No division (the atanh series it replaces
// divided once per element, which ran at 0.57x of PyTorch's log on AVX-512). The split
// needs no compare: subtracting the bits of sqrt(1/2) (0x3f3504f3) from the bits of x
// moves the exponent's boundary from 1 to sqrt(1/2), so k is the shifted difference and
// m's bits are its low 23 bits plus 0x3f3504f3 (IEEE 754 binary32 layout; the same
// reduction as musl's logf). k*ln2 uses the Cody-Waite split. Denormals are scaled by
// 2^23 first. log(0) = -inf, log(x<0) = NaN, log(inf) = inf.
static inline __attribute__((always_inline)) float ke_log(float x) {
  const bool tiny = x < 1.17549435e-38f;  // below FLT_MIN (denormal, zero or negative)
  const float xs = tiny ? x * 8388608.0f : x;
  // Unsigned: negative x would overflow a signed subtraction (their result is replaced below).
  const uint32_t u = static_cast<uint32_t>(ke_float_to_bits(xs)) - 0x3f3504f3u;
  const int32_t k = static_cast<int32_t>(u) >> 23;  // arithmetic shift (GCC, Clang; C++20)
  const float m = ke_bits_to_float(static_cast<int32_t>((u & 0x007fffffu) + 0x3f3504f3u));
  const float ef = static_cast<float>(k) - (tiny ? 23.0f : 0.0f);
  const float f = m - 1.0f;
  float p = 8.7001252347400679e-02f;
  p = p * f + -1.4267072122307858e-01f;
  p = p * f + 1.4914691326061033e-01f;
  p = p * f + -1.6577630322402126e-01f;
  p = p * f + 1.9963074484438126e-01f;
  p = p * f + -2.5001335860342283e-01f;
  p = p * f + 3.3333910489545243e-01f;
  const float r = p * f - 0.5f;
  float y = ef * 0.693359375f + (ef * -2.12194440e-4f + ((f * f) * r + f));
  y = x == INFINITY ? x : y;
  y = x == 0.0f ? -INFINITY : y;
  // One compare for x < 0 and NaN alike (both compare false). Spelled with `||`, GCC's
  // partial redundancy elimination left two branches once ke_log was inlined into
  // ke_log1p and ke_softplus, which if-conversion could not flatten: softplus loops
  // stayed scalar (27 ns per element instead of ~1 on AVX2; bench/cpu_loop_bench).
  y = x >= 0.0f ? y : NAN;
  return y;
}
)PRELUDE"},
      {"ke_log_v16",
       {"ke_log"},
       R"PRELUDE(// ke_log for 16-lane `omp simd simdlen(16)` loops on AVX-512 (knob simd_math=avx512).
// GCC vectorizes a call to a `declare simd` function into a call of its vector variant,
// named by the x86 vector function ABI (`_ZGV` + ISA 'e' (AVX-512) + 'N' (unmasked) +
// 16 lanes + 'v' (vector argument) + '_' + the assembler name; "Vector Function
// Application Binary Interface Specification for OpenMP SIMD", Intel, 2015), and calls
// the scalar function in the loop's remainder. The variant is written with intrinsics:
// vgetexpps gives e = floor(log2 |x|) and vgetmantps the mantissa m in [0.75, 1.5)
// (Intel SDM, VGETEXPPS / VGETMANTPS), both exact for denormals; x = 2^(e+1) m when
// m < 1. log(m) = f - f^2/2 + f^3 P(f), f = m - 1 in [-0.25, 0.5), P of degree 6 fitted
// for this interval (kernelevolve scripts/fit_log_poly.py --split p75_1p5: 4.1e-8
// relative in double, < 1.3e-7 in float32). Special values take one instruction,
// vfixupimmps. Without AVX-512 ke_log_v16 is ke_log itself.
#if defined(__AVX512F__)
#include <immintrin.h>
extern "C" __attribute__((visibility("hidden"), noinline)) float ke_log_v16_scalar(float x) {
  return ke_log(x);
}
#pragma omp declare simd simdlen(16) notinbranch
extern "C" float ke_log_v16(float x) __asm__("ke_log_v16_scalar");
extern "C" __attribute__((visibility("hidden"))) __m512 _ZGVeN16v_ke_log_v16_scalar(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_zero);
  __m512 e = _mm512_getexp_ps(x);
  e = _mm512_mask_add_ps(e, _mm512_cmp_ps_mask(m, one, _CMP_LT_OQ), e, one);
  const __m512 f = _mm512_sub_ps(m, one);
  __m512 p = _mm512_set1_ps(5.5594814196879588e-02f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-1.2113694181775464e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.4904231134051604e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-1.6788816094886833e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.9982334783598163e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(-2.4996361784537574e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(3.333347048258507e-01f));
  const __m512 r = _mm512_fmsub_ps(p, f, _mm512_set1_ps(0.5f));
  __m512 y = _mm512_fmadd_ps(_mm512_mul_ps(f, f), r, f);
  y = _mm512_fmadd_ps(e, _mm512_set1_ps(-2.12194440e-4f), y);  // Cody-Waite, as in ke_log
  y = _mm512_fmadd_ps(e, _mm512_set1_ps(0.693359375f), y);
  // vfixupimmps (Intel SDM): per class of x, one 4-bit response (0 keeps y). QNaN, SNaN:
  // 2 (quiet x); zero: 4 (-inf); +1: 8 (+0, exact); -inf: 3 (NaN); +inf: 5 (+inf);
  // negative: 3 (NaN); positive (denormals too): 0.
  return _mm512_fixupimm_ps(y, x, _mm512_set1_epi32(0x03538422), 0);
}
#else
static inline __attribute__((always_inline)) float ke_log_v16(float x) { return ke_log(x); }
#endif
)PRELUDE"},
      {"ke_log1p",
       {"ke_log"},
       R"PRELUDE(// log(1 + u), accurate near u = 0:
// with w = 1 + u rounded, log1p(u) = log(w) * u / (w - 1) (Goldberg, "What Every
// Computer Scientist Should Know About Floating-Point Arithmetic", 1991, Theorem 4).
static inline __attribute__((always_inline)) float ke_log1p(float u) {
  const float w = 1.0f + u;
  const float d = w - 1.0f;
  const float y = ke_log(w) * (u / d);
  return d == 0.0f ? u : (w == INFINITY ? w : y);
}
)PRELUDE"},
      {"ke_sigmoid",
       {"ke_exp"},
       R"PRELUDE(// 1 / (1 + e^-x):
// saturates to 1 for large x and to 0 (via e^-x = +inf) for very negative x.
static inline __attribute__((always_inline)) float ke_sigmoid(float x) { return 1.0f / (1.0f + ke_exp(-x)); }
)PRELUDE"},
      {"ke_tanh",
       {},
       R"PRELUDE(// tanh(x) = c * P(c^2) / Q(c^2), c = x clamped to [-9, 9] (1 - tanh(9) = 3e-8 rounds
// to 1.0f), P and Q of degree 4: a rational fit made for this prelude (kernelevolve
// scripts/fit_tanh_rational.py: 2.1e-8 relative in double, < 3.3e-7 relative in float32,
// relative accuracy kept near 0). Odd by construction; the result is clamped to
// [-1, 1] and is +-1 beyond +-9; NaN propagates. No exp and one division (the exp-based spelling it replaces
// computed an expm1 and divided: 0.71x of PyTorch's tanh on AVX-512).
static inline __attribute__((always_inline)) float ke_tanh(float x) {
  const float c = x < -9.0f ? -9.0f : (x > 9.0f ? 9.0f : x);
  const float t = c * c;
  float p = 1.3354792244291147e-08f;
  p = p * t + 2.0609173836183287e-05f;
  p = p * t + 3.4955935579590127e-03f;
  p = p * t + 1.3381030165774288e-01f;
  p = p * t + 9.999999794554888e-01f;
  float q = 7.7766109955398899e-07f;
  q = q * t + 3.2856437923693531e-04f;
  q = q * t + 2.5877002720067818e-02f;
  q = q * t + 4.6714345756523079e-01f;
  q = q * t + 1.0f;
  float y = c * (p / q);
  y = y > 1.0f ? 1.0f : (y < -1.0f ? -1.0f : y);
  return x > 9.0f ? 1.0f : (x < -9.0f ? -1.0f : y);  // the fit ends at 1 - 6e-8 at 9
}
)PRELUDE"},
      {"ke_softplus",
       {"ke_exp", "ke_log1p"},
       R"PRELUDE(// log(1 + e^z) = max(z, 0) + log1p(e^-|z|): never overflows.
static inline __attribute__((always_inline)) float ke_softplus(float z) {
  const float az = z < 0.0f ? -z : z;
  return (z > 0.0f ? z : 0.0f) + ke_log1p(ke_exp(-az));
}
)PRELUDE"},
      {"ke_erf",
       {},
       R"PRELUDE(// erf(x) = c * P(c^2) / Q(c^2), c = x clamped to [-4, 4] (erf(4) = 1 - 1.5e-8
// rounds to 1.0f), P and Q of degree 5: a rational fit of erf(x)/x made for this
// prelude (kernelevolve scripts/fit_erf_rational.py: weighted least squares with
// Lawson's reweighting against double-precision erf; 2.5e-8 relative in double,
// abs error < 4e-7 in float32, relative accuracy kept near 0). Odd by construction;
// the result is clamped to [-1, 1]; NaN propagates. No exp, one division.
static inline __attribute__((always_inline)) float ke_erf(float x) {
  const float c = x < -4.0f ? -4.0f : (x > 4.0f ? 4.0f : x);
  const float t = c * c;
  float p = 1.9868348693123412e-06f;
  p = p * t + 2.8457037261923418e-04f;
  p = p * t + 3.8833513050674285e-03f;
  p = p * t + 5.3101758192684964e-02f;
  p = p * t + 1.9354453173952338e-01f;
  p = p * t + 1.1283791393089233f;
  float q = 3.7420973187099718e-05f;
  q = q * t + 1.1855816295742441e-03f;
  q = q * t + 1.520725391027093e-02f;
  q = q * t + 1.1534985530695503e-01f;
  q = q * t + 5.0485693079475347e-01f;
  q = q * t + 1.0f;
  const float y = c * (p / q);
  return y > 1.0f ? 1.0f : (y < -1.0f ? -1.0f : y);
}
)PRELUDE"},
  };
  return kSections;
}

/// Adds `name` and everything it calls to `needed`.
void Require(const std::string& name, std::set<std::string>& needed) {
  if (!needed.insert(name).second) return;
  for (const auto& s : Sections()) {
    if (name != s.name) continue;
    for (const char* dep : s.deps) Require(dep, needed);
  }
}

}  // namespace

std::vector<std::string> MathPreludeFunctions() {
  std::vector<std::string> out;
  for (const auto& s : Sections()) out.push_back(s.name);
  return out;
}

std::string MathPreludeSource() { return MathPreludeSource(MathPreludeFunctions()); }

std::string MathPreludeSource(const std::vector<std::string>& used) {
  std::set<std::string> needed;
  for (const auto& name : used) Require(name, needed);
  std::string out;
  for (const auto& s : Sections()) {
    if (needed.count(s.name) == 0) continue;
    out += out.empty() ? kHeader : "\n";
    out += s.text;
  }
  return out.empty() ? out : out + kFooter;
}

std::string MathPreludeFor(const std::string& code) {
  std::vector<std::string> used;
  for (const auto& s : Sections()) {
    if (code.find(std::string(s.name) + "(") != std::string::npos) used.push_back(s.name);
  }
  return MathPreludeSource(used);
}

}  // namespace kernelevolve::operators::templates
