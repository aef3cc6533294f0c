#include "eval/tolerance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "eval/half.h"

namespace kernelevolve::eval {
namespace {

using core::DType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
HostTensor MakeTensor(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  HostTensor tensor{"output.0", dtype, std::move(shape), {}};
  tensor.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

HostTensor F64(const std::vector<double>& v) {
  return MakeTensor<double>(DType::kFloat64, {static_cast<int64_t>(v.size())}, v);
}

TEST(ToleranceTest, DefaultsPerDType) {
  EXPECT_EQ(DefaultTolerance(DType::kFloat32).atol, 1e-4);
  EXPECT_EQ(DefaultTolerance(DType::kFloat32).rtol, 1e-4);
  EXPECT_EQ(DefaultTolerance(DType::kFloat64).atol, 1e-7);
  // torch.testing.assert_close's defaults for the half types.
  EXPECT_EQ(DefaultTolerance(DType::kFloat16).atol, 1e-5);
  EXPECT_EQ(DefaultTolerance(DType::kFloat16).rtol, 1e-3);
  EXPECT_EQ(DefaultTolerance(DType::kBFloat16).atol, 1e-5);
  EXPECT_EQ(DefaultTolerance(DType::kBFloat16).rtol, 1.6e-2);
  for (DType d : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8,
                  DType::kBool}) {
    EXPECT_EQ(DefaultTolerance(d).atol, 0.0);
    EXPECT_EQ(DefaultTolerance(d).rtol, 0.0);
  }
}

TEST(ToleranceTest, IdenticalTensorsPassWithAllFieldsFilled) {
  const auto check = CompareTensors(F64({1, -2, 3}), F64({1, -2, 3}), {0.5, 0.25});
  EXPECT_TRUE(check.passed);
  EXPECT_EQ(check.mismatches, 0);
  EXPECT_EQ(check.first_mismatch, -1);
  EXPECT_EQ(check.max_abs_error, 0.0);
  EXPECT_EQ(check.atol, 0.5);
  EXPECT_EQ(check.rtol, 0.25);
  EXPECT_TRUE(check.note.empty());
}

TEST(ToleranceTest, BoundaryIsInclusive) {
  // Reference 2.0, atol 0.5, rtol 0.25: allowed |a - e| <= 1.0 exactly (all values binary-exact).
  const core::Tolerance tol{0.5, 0.25};
  EXPECT_TRUE(CompareTensors(F64({3.0}), F64({2.0}), tol).passed);
  EXPECT_TRUE(CompareTensors(F64({1.0}), F64({2.0}), tol).passed);
  EXPECT_FALSE(CompareTensors(F64({std::nextafter(3.0, 4.0)}), F64({2.0}), tol).passed);
  EXPECT_FALSE(CompareTensors(F64({1.0 - std::ldexp(1.0, -50)}), F64({2.0}), tol).passed);
  // rtol scales with the reference, not the actual value: not symmetric.
  EXPECT_TRUE(CompareTensors(F64({2.0}), F64({4.0}), {0.0, 0.5}).passed);   // 2 <= 0.5 * 4
  EXPECT_FALSE(CompareTensors(F64({4.0}), F64({2.0}), {0.0, 0.5}).passed);  // 2 > 0.5 * 2
}

TEST(ToleranceTest, CountsMismatchesAndErrors) {
  const auto check = CompareTensors(F64({1.0, 5.0, 2.0, 0.0}), F64({1.0, 4.0, 2.5, 1e-20}),
                                    {0.1, 0.0});
  EXPECT_FALSE(check.passed);
  EXPECT_EQ(check.mismatches, 2);
  EXPECT_EQ(check.first_mismatch, 1);
  EXPECT_DOUBLE_EQ(check.max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(check.max_rel_error, 0.25);  // element 3: 1e-20 / max(1e-20, 1e-12) = 1e-8
  EXPECT_TRUE(check.note.empty()) << check.note;
  const auto tiny = CompareTensors(F64({1e-9}), F64({0.0}), {1.0, 0.0});
  EXPECT_TRUE(tiny.passed);
  EXPECT_DOUBLE_EQ(tiny.max_rel_error, 1e-9 / 1e-12);
}

TEST(ToleranceTest, NaNAndInfParity) {
  const core::Tolerance tol{1e-4, 1e-4};
  EXPECT_TRUE(CompareTensors(F64({kNaN, kInf, -kInf}), F64({kNaN, kInf, -kInf}), tol).passed);

  const auto nan_finite = CompareTensors(F64({1.0, kNaN}), F64({1.0, 2.0}), tol);
  EXPECT_FALSE(nan_finite.passed);
  EXPECT_EQ(nan_finite.first_mismatch, 1);
  EXPECT_EQ(nan_finite.note, "NaN where reference is finite (1 element)");

  const auto missing_nan = CompareTensors(F64({2.0, 3.0}), F64({kNaN, kNaN}), tol);
  EXPECT_EQ(missing_nan.mismatches, 2);
  EXPECT_EQ(missing_nan.note, "no NaN where reference is NaN (2 elements)");

  const auto infs = CompareTensors(F64({kInf, -kInf, 1.0, kNaN}), F64({1.0, kInf, kInf, -kInf}), tol);
  EXPECT_EQ(infs.mismatches, 4);
  EXPECT_EQ(infs.note,
            "NaN where reference is Inf (1 element); Inf where reference is finite (1 element); "
            "finite value where reference is Inf (1 element); Inf of the opposite sign to the "
            "reference (1 element)");
  // Non-finite pairs do not enter the error maxima.
  EXPECT_EQ(infs.max_abs_error, 0.0);
}

TEST(ToleranceTest, ShapeAndDTypeMismatchFailWithNote) {
  const auto a = MakeTensor<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  const auto b = MakeTensor<float>(DType::kFloat32, {4}, {1, 2, 3, 4});
  const auto shape = CompareTensors(a, b, DefaultTolerance(DType::kFloat32));
  EXPECT_FALSE(shape.passed);
  EXPECT_EQ(shape.note, "shape mismatch: got [2, 2], expected [4]");
  EXPECT_EQ(shape.first_mismatch, -1);
  const auto c = MakeTensor<double>(DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  const auto dtype = CompareTensors(c, a, DefaultTolerance(DType::kFloat32));
  EXPECT_FALSE(dtype.passed);
  EXPECT_EQ(dtype.note, "dtype mismatch: got float64, expected float32");
  auto truncated = a;
  truncated.bytes.resize(8);
  const auto bytes = CompareTensors(truncated, a, DefaultTolerance(DType::kFloat32));
  EXPECT_FALSE(bytes.passed);
  EXPECT_NE(bytes.note.find("byte size mismatch"), std::string::npos) << bytes.note;
}

TEST(ToleranceTest, Float32) {
  const auto e = MakeTensor<float>(DType::kFloat32, {3}, {1.0f, 100.0f, -0.5f});
  const auto ok = MakeTensor<float>(DType::kFloat32, {3}, {1.00005f, 100.009f, -0.50005f});
  EXPECT_TRUE(CompareTensors(ok, e, DefaultTolerance(DType::kFloat32)).passed);
  const auto bad = MakeTensor<float>(DType::kFloat32, {3}, {1.0f, 100.02f, -0.5f});
  const auto check = CompareTensors(bad, e, DefaultTolerance(DType::kFloat32));
  EXPECT_EQ(check.mismatches, 1);
  EXPECT_EQ(check.first_mismatch, 1);
  EXPECT_NEAR(check.max_abs_error, 0.02, 1e-5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto with_nan = MakeTensor<float>(DType::kFloat32, {3}, {nan, 100.0f, -0.5f});
  EXPECT_EQ(CompareTensors(with_nan, e, DefaultTolerance(DType::kFloat32)).note,
            "NaN where reference is finite (1 element)");
}

TEST(ToleranceTest, Float16AndBFloat16AreConverted) {
  const auto h = [](std::vector<float> v) {
    std::vector<uint16_t> bits;
    for (float x : v) bits.push_back(FloatToHalf(x));
    return MakeTensor<uint16_t>(DType::kFloat16, {static_cast<int64_t>(v.size())}, bits);
  };
  const core::Tolerance tol = DefaultTolerance(DType::kFloat16);  // 1e-5 + 1e-3 * |e|
  EXPECT_TRUE(CompareTensors(h({1.0f, 2.0f}), h({1.0f, 2.0f}), tol).passed);
  EXPECT_TRUE(CompareTensors(h({1.0f + 0.0009765625f}), h({1.0f}), tol).passed);  // 1 ulp <= 0.00101
  EXPECT_FALSE(CompareTensors(h({1.0f + 0.001953125f}), h({1.0f}), tol).passed);  // 2 ulps > 0.00101
  // A softmax over 4096 has outputs near 2.4e-4: half of each is far outside (a flat
  // atol of 1e-2 passed it).
  EXPECT_FALSE(CompareTensors(h({1.2207e-4f}), h({2.4414e-4f}), tol).passed);
  EXPECT_TRUE(CompareTensors(h({-INFINITY, NAN}), h({-INFINITY, NAN}), tol).passed);
  EXPECT_FALSE(CompareTensors(h({70000.0f}), h({65504.0f}), tol).passed);  // overflowed to inf

  const auto bf = [](std::vector<float> v) {
    std::vector<uint16_t> bits;
    for (float x : v) bits.push_back(FloatToBFloat16(x));
    return MakeTensor<uint16_t>(DType::kBFloat16, {static_cast<int64_t>(v.size())}, bits);
  };
  const core::Tolerance btol = DefaultTolerance(DType::kBFloat16);
  EXPECT_TRUE(CompareTensors(bf({256.0f}), bf({258.0f}), btol).passed);  // 2 <= 1e-5 + 4.13
  EXPECT_FALSE(CompareTensors(bf({256.0f}), bf({264.0f}), btol).passed);  // 8 > 1e-5 + 4.22
  const auto check = CompareTensors(bf({1.0f, 3.0f}), bf({1.0f, 2.0f}), btol);
  EXPECT_DOUBLE_EQ(check.max_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(check.max_rel_error, 0.5);
}

TEST(ToleranceTest, IntegersAndBoolAreExactByDefault) {
  const auto i64 = [](std::vector<int64_t> v) {
    return MakeTensor<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
  };
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(CompareTensors(i64({big, -3}), i64({big, -3}), DefaultTolerance(DType::kInt64)).passed);
  // Differ by one where a double cannot tell them apart: still a mismatch.
  const auto off_by_one = CompareTensors(i64({big - 1}), i64({big}), DefaultTolerance(DType::kInt64));
  EXPECT_FALSE(off_by_one.passed);
  EXPECT_EQ(off_by_one.max_abs_error, 1.0);
  // With a tolerance, integers compare numerically too.
  EXPECT_TRUE(CompareTensors(i64({10}), i64({12}), {2.0, 0.0}).passed);

  const auto i8a = MakeTensor<int8_t>(DType::kInt8, {3}, {-128, 0, 127});
  const auto i8b = MakeTensor<int8_t>(DType::kInt8, {3}, {-128, 1, 127});
  EXPECT_EQ(CompareTensors(i8b, i8a, DefaultTolerance(DType::kInt8)).first_mismatch, 1);
  EXPECT_TRUE(CompareTensors(MakeTensor<int16_t>(DType::kInt16, {1}, {-300}),
                             MakeTensor<int16_t>(DType::kInt16, {1}, {-300}), {0, 0}).passed);
  EXPECT_FALSE(CompareTensors(MakeTensor<int32_t>(DType::kInt32, {1}, {7}),
                              MakeTensor<int32_t>(DType::kInt32, {1}, {-7}), {0, 0}).passed);
  EXPECT_FALSE(CompareTensors(MakeTensor<uint8_t>(DType::kUInt8, {1}, {0}),
                              MakeTensor<uint8_t>(DType::kUInt8, {1}, {255}), {0, 0}).passed);
  // bool: the byte itself. A bool holds 0 or 1; any other byte is one the kernel never
  // wrote (the harness's 0x5A poison), not "true".
  EXPECT_TRUE(CompareTensors(MakeTensor<uint8_t>(DType::kBool, {2}, {1, 0}),
                             MakeTensor<uint8_t>(DType::kBool, {2}, {1, 0}), {0, 0}).passed);
  EXPECT_FALSE(CompareTensors(MakeTensor<uint8_t>(DType::kBool, {2}, {0x5A, 0}),
                              MakeTensor<uint8_t>(DType::kBool, {2}, {1, 0}), {0, 0}).passed);
  EXPECT_FALSE(CompareTensors(MakeTensor<uint8_t>(DType::kBool, {2}, {0, 0}),
                              MakeTensor<uint8_t>(DType::kBool, {2}, {1, 0}), {0, 0}).passed);
}

TEST(ToleranceTest, EmptyAndScalarTensors) {
  const auto empty = MakeTensor<float>(DType::kFloat32, {0, 4}, {});
  EXPECT_TRUE(CompareTensors(empty, empty, DefaultTolerance(DType::kFloat32)).passed);
  const auto s1 = MakeTensor<float>(DType::kFloat32, {}, {1.0f});
  const auto s2 = MakeTensor<float>(DType::kFloat32, {}, {2.0f});
  EXPECT_EQ(CompareTensors(s1, s2, DefaultTolerance(DType::kFloat32)).first_mismatch, 0);
}

TEST(ToleranceTest, RejectsNegativeOrNaNTolerance) {
  EXPECT_THROW(CompareTensors(F64({1}), F64({1}), {-1.0, 0.0}), core::InvalidInputError);
  EXPECT_THROW(CompareTensors(F64({1}), F64({1}), {0.0, kNaN}), core::InvalidInputError);
}

TEST(ToleranceTest, ElementAllowanceWidensEachElementByItsOwnScale) {
  // atol 0.5, rtol 0; allowance 8 x {1, 0, 1, 0}: elements 0 and 2 may be off by 8.5,
  // elements 1 and 3 (where eager is exact) by 0.5 only. All values binary-exact.
  const core::Tolerance tol{0.5, 0.0};
  const auto scale = MakeTensor<float>(DType::kFloat32, {2, 2}, {1.0f, 0.0f, 1.0f, 0.0f});
  const ElementAllowance allowance{&scale, 8.0};
  const auto expected = F64({1000, 0, 2000, 5});
  // Element 0 off by 6 (within 0.5 + 8), element 2 off by exactly 8.5 (inclusive).
  const auto within = F64({1006, 0, 2008.5, 5});
  EXPECT_FALSE(CompareTensors(within, expected, tol).passed);  // only because of the allowance
  const auto check = CompareTensors(within, expected, tol, allowance);
  EXPECT_TRUE(check.passed);
  EXPECT_EQ(check.atol, 0.5);  // the plain tolerance is reported
  EXPECT_DOUBLE_EQ(check.max_abs_error, 8.5);
  // Element 1 off by 0.75 where the allowance is 0; element 2 off by 9, beyond 8.5.
  const auto beyond = CompareTensors(F64({1006, 0.75, 2009, 5}), expected, tol, allowance);
  EXPECT_FALSE(beyond.passed);
  EXPECT_EQ(beyond.mismatches, 2);
  EXPECT_EQ(beyond.first_mismatch, 1);
  // No scale, or a multiple of 0: the plain tolerance.
  EXPECT_FALSE(CompareTensors(within, expected, tol, ElementAllowance{&scale, 0.0}).passed);
  EXPECT_FALSE(CompareTensors(within, expected, tol, ElementAllowance{nullptr, 8.0}).passed);
  // float32 and bfloat16 outputs use it too; NaN/Inf parity is unchanged.
  const auto f32 = [](std::vector<float> v) { return MakeTensor<float>(DType::kFloat32, {4}, v); };
  EXPECT_TRUE(
      CompareTensors(f32({1006, 0, 2008, 5}), f32({1000, 0, 2000, 5}), tol, allowance).passed);
  EXPECT_EQ(CompareTensors(f32({NAN, 0, 2000, 5}), f32({1000, 0, 2000, 5}), tol, allowance).note,
            "NaN where reference is finite (1 element)");
  const auto bf = [](std::vector<float> v) {
    std::vector<uint16_t> bits;
    for (float x : v) bits.push_back(FloatToBFloat16(x));
    return MakeTensor<uint16_t>(DType::kBFloat16, {4}, bits);
  };
  EXPECT_TRUE(
      CompareTensors(bf({1008, 0, 2000, 5}), bf({1000, 0, 2000, 5}), tol, allowance).passed);
  EXPECT_FALSE(CompareTensors(bf({1008, 0, 2000, 5}), bf({1000, 0, 2000, 5}), tol).passed);
}

TEST(ToleranceTest, ElementAllowanceIsIgnoredForIntegersAndValidated) {
  const auto scale = MakeTensor<float>(DType::kFloat32, {2}, {100.0f, 100.0f});
  const auto i64 = [](std::vector<int64_t> v) {
    return MakeTensor<int64_t>(DType::kInt64, {2}, v);
  };
  EXPECT_FALSE(
      CompareTensors(i64({1, 2}), i64({1, 3}), {0, 0}, {&scale, 8.0}).passed);  // exact stays exact

  const auto three = MakeTensor<float>(DType::kFloat32, {3}, {1.0f, 1.0f, 1.0f});
  try {
    CompareTensors(F64({1, 2}), F64({1, 2}), {0, 0}, {&three, 8.0});
    ADD_FAILURE() << "expected InvalidInputError for a scale of 3 elements against 2";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "has shape [3] (12 bytes), but the reference output.0 has 2 elements [2]"),
              std::string::npos)
        << e.what();
  }
  const auto f64_scale = F64({1, 1});
  try {
    CompareTensors(F64({1, 2}), F64({1, 2}), {0, 0}, {&f64_scale, 8.0});
    ADD_FAILURE() << "expected InvalidInputError for a float64 scale";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("must be float32, got float64"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(CompareTensors(F64({1, 2}), F64({1, 2}), {0, 0}, {&scale, -1.0}),
               core::InvalidInputError);
  EXPECT_THROW(CompareTensors(F64({1, 2}), F64({1, 2}), {0, 0}, {&scale, kInf}),
               core::InvalidInputError);
}

}  // namespace
}  // namespace kernelevolve::eval
