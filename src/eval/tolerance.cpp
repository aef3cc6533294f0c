#include "eval/tolerance.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"
#include "eval/half.h"

namespace kernelevolve::eval {
namespace {

using core::DType;

// Denominator floor of the relative error (tolerance.h).
constexpr double kTinyReference = 1e-12;

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// Counts of NaN/Inf parity failures, one per kind, for the note.
struct ParityCounts {
  int64_t nan_vs_finite = 0;    // actual NaN, reference finite
  int64_t nan_vs_inf = 0;       // actual NaN, reference infinite
  int64_t missing_nan = 0;      // reference NaN, actual not NaN
  int64_t inf_vs_finite = 0;    // actual infinite, reference finite
  int64_t finite_vs_inf = 0;    // actual finite, reference infinite
  int64_t inf_wrong_sign = 0;   // both infinite, opposite signs
};

void AppendNote(std::string* note, int64_t count, const char* text) {
  if (count == 0) return;
  if (!note->empty()) *note += "; ";
  *note += text + std::string(" (") + std::to_string(count) + (count == 1 ? " element)" : " elements)");
}

std::string ParityNote(const ParityCounts& c) {
  std::string note;
  AppendNote(&note, c.nan_vs_finite, "NaN where reference is finite");
  AppendNote(&note, c.nan_vs_inf, "NaN where reference is Inf");
  AppendNote(&note, c.missing_nan, "no NaN where reference is NaN");
  AppendNote(&note, c.inf_vs_finite, "Inf where reference is finite");
  AppendNote(&note, c.finite_vs_inf, "finite value where reference is Inf");
  AppendNote(&note, c.inf_wrong_sign, "Inf of the opposite sign to the reference");
  return note;
}

// True when a non-finite pair passes (both NaN, or the same infinity); otherwise counts
// the failure kind. Precondition: a or e is not finite.
bool NonFinitePasses(double a, double e, ParityCounts* counts) {
  if (std::isnan(e)) {
    if (std::isnan(a)) return true;
    ++counts->missing_nan;
  } else if (std::isnan(a)) {
    ++(std::isinf(e) ? counts->nan_vs_inf : counts->nan_vs_finite);
  } else if (std::isinf(e)) {
    if (a == e) return true;
    ++(std::isinf(a) ? counts->inf_wrong_sign : counts->finite_vs_inf);
  } else {
    ++counts->inf_vs_finite;
  }
  return false;
}

// Records one finite pair with absolute difference `diff` and reference magnitude
// `abs_e`; returns whether it is within tolerance plus `extra` (the element's allowance,
// 0 without one).
bool FinitePasses(double diff, double abs_e, const core::Tolerance& tol, double extra,
                  core::OutputCheck* check) {
  check->max_abs_error = std::max(check->max_abs_error, diff);
  check->max_rel_error = std::max(check->max_rel_error, diff / std::max(abs_e, kTinyReference));
  return diff <= tol.atol + tol.rtol * abs_e + extra;
}

void RecordMismatch(int64_t index, core::OutputCheck* check) {
  if (check->mismatches++ == 0) check->first_mismatch = index;
}

// Element `i` of a tensor stored as `Stored` (memcpy: HostTensor bytes carry no
// alignment promise).
template <typename Stored>
Stored ElementAt(const HostTensor& tensor, int64_t i) {
  Stored value;
  std::memcpy(&value, tensor.bytes.data() + i * static_cast<int64_t>(sizeof(Stored)), sizeof(Stored));
  return value;
}

// The floating-point comparison of CompareTensors over `n` elements stored as `Stored`,
// widened to double by `widen` (exact for every float dtype). Equal elements (the
// common case for a correct kernel) pass at once: their difference is 0, and two equal
// values are never NaN; an equal pair of infinities passes as NonFinitePasses would.
// The allowance is read only for the unequal finite pairs.
template <typename Stored, typename Widen>
void CompareFloatElements(const HostTensor& actual, const HostTensor& expected, int64_t n,
                          const core::Tolerance& tolerance, const ElementAllowance& allowance,
                          core::OutputCheck* check, ParityCounts* parity, Widen widen) {
  for (int64_t i = 0; i < n; ++i) {
    const double a = widen(ElementAt<Stored>(actual, i));
    const double e = widen(ElementAt<Stored>(expected, i));
    if (a == e) continue;
    bool ok = false;
    if (std::isfinite(a) && std::isfinite(e)) {
      const double extra = allowance.scale
                               ? allowance.multiple * double{ElementAt<float>(*allowance.scale, i)}
                               : 0.0;
      ok = FinitePasses(std::fabs(a - e), std::fabs(e), tolerance, extra, check);
    } else {
      ok = NonFinitePasses(a, e, parity);
    }
    if (!ok) RecordMismatch(i, check);
  }
}

// The integer comparison of CompareTensors over `n` elements stored as `Stored`, widened
// exactly to int64 (bool: the byte itself, since a bool holds 0 or 1 and PyTorch and C++
// store nothing else, so a byte the kernel never wrote, the harness's 0x5A poison, is a
// mismatch rather than "true"). Equal elements pass at once (difference 0).
template <typename Stored>
void CompareIntegerElements(const HostTensor& actual, const HostTensor& expected, int64_t n,
                            const core::Tolerance& tolerance, core::OutputCheck* check) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t a = ElementAt<Stored>(actual, i);
    const int64_t e = ElementAt<Stored>(expected, i);
    if (a == e) continue;
    // Exact difference in 128 bits, then widened: never rounds a nonzero gap to 0.
    const __int128 gap = static_cast<__int128>(a) - static_cast<__int128>(e);
    const double diff = static_cast<double>(gap < 0 ? -gap : gap);
    const double abs_e = std::fabs(static_cast<double>(e));
    if (!FinitePasses(diff, abs_e, tolerance, 0.0, check)) RecordMismatch(i, check);
  }
}

// Throws InvalidInputError unless `allowance` is none (no scale) or a float32 scale with
// the element count and byte size of `expected` and a finite multiple >= 0.
void CheckAllowance(const ElementAllowance& allowance, const HostTensor& expected) {
  if (!(allowance.multiple >= 0) || !std::isfinite(allowance.multiple)) {
    throw core::InvalidInputError("element allowance: multiple must be a finite number >= 0, got " +
                                  std::to_string(allowance.multiple));
  }
  if (allowance.scale == nullptr) return;
  const HostTensor& scale = *allowance.scale;
  if (scale.dtype != DType::kFloat32) {
    throw core::InvalidInputError("element allowance '" + scale.name + "' must be float32, got " +
                                  std::string(core::DTypeName(scale.dtype)));
  }
  const int64_t n = expected.NumElements();
  if (scale.NumElements() != n ||
      scale.bytes.size() != static_cast<std::size_t>(n) * sizeof(float)) {
    throw core::InvalidInputError(
        "element allowance '" + scale.name + "' has shape " + ShapeText(scale.shape) + " (" +
        std::to_string(scale.bytes.size()) + " bytes), but the reference " + expected.name +
        " has " + std::to_string(n) + " elements " + ShapeText(expected.shape));
  }
}

}  // namespace

core::Tolerance DefaultTolerance(core::DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return {1e-4, 1e-4};
    case DType::kFloat64: return {1e-7, 1e-7};
    case DType::kFloat16: return {1e-5, 1e-3};
    case DType::kBFloat16: return {1e-5, 1.6e-2};
    default: return {0.0, 0.0};
  }
}

core::OutputCheck CompareTensors(const HostTensor& actual, const HostTensor& expected,
                                 const core::Tolerance& tolerance,
                                 const ElementAllowance& allowance) {
  if (!(tolerance.atol >= 0) || !(tolerance.rtol >= 0)) {
    throw core::InvalidInputError("tolerance must have atol >= 0 and rtol >= 0, got atol=" +
                                  std::to_string(tolerance.atol) +
                                  " rtol=" + std::to_string(tolerance.rtol));
  }
  CheckAllowance(allowance, expected);
  core::OutputCheck check;
  check.atol = tolerance.atol;
  check.rtol = tolerance.rtol;
  if (actual.dtype != expected.dtype) {
    check.note = "dtype mismatch: got " + std::string(core::DTypeName(actual.dtype)) +
                 ", expected " + std::string(core::DTypeName(expected.dtype));
    return check;
  }
  if (actual.shape != expected.shape) {
    check.note = "shape mismatch: got " + ShapeText(actual.shape) + ", expected " +
                 ShapeText(expected.shape);
    return check;
  }
  const int64_t n = expected.NumElements();
  const auto needed = static_cast<std::size_t>(n) * core::DTypeSize(expected.dtype);
  if (actual.bytes.size() != needed || expected.bytes.size() != needed) {
    check.note = "byte size mismatch: shape " + ShapeText(expected.shape) + " needs " +
                 std::to_string(needed) + " bytes, got " + std::to_string(actual.bytes.size()) +
                 " (actual) and " + std::to_string(expected.bytes.size()) + " (reference)";
    return check;
  }
  ParityCounts parity;
  switch (expected.dtype) {  // one loop per storage type: no per-element dtype dispatch
    case DType::kFloat32:
      CompareFloatElements<float>(actual, expected, n, tolerance, allowance, &check, &parity,
                                  [](float v) { return double{v}; });
      break;
    case DType::kFloat64:
      CompareFloatElements<double>(actual, expected, n, tolerance, allowance, &check, &parity,
                                   [](double v) { return v; });
      break;
    case DType::kFloat16:
      CompareFloatElements<uint16_t>(actual, expected, n, tolerance, allowance, &check, &parity,
                                     [](uint16_t v) { return double{HalfToFloat(v)}; });
      break;
    case DType::kBFloat16:
      CompareFloatElements<uint16_t>(actual, expected, n, tolerance, allowance, &check, &parity,
                                     [](uint16_t v) { return double{BFloat16ToFloat(v)}; });
      break;
    case DType::kInt8: CompareIntegerElements<int8_t>(actual, expected, n, tolerance, &check); break;
    case DType::kInt16: CompareIntegerElements<int16_t>(actual, expected, n, tolerance, &check); break;
    case DType::kInt32: CompareIntegerElements<int32_t>(actual, expected, n, tolerance, &check); break;
    case DType::kInt64: CompareIntegerElements<int64_t>(actual, expected, n, tolerance, &check); break;
    case DType::kUInt8:
    case DType::kBool: CompareIntegerElements<uint8_t>(actual, expected, n, tolerance, &check); break;
  }
  check.note = ParityNote(parity);
  check.passed = check.mismatches == 0;
  return check;
}

}  // namespace kernelevolve::eval
