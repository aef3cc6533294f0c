// Interoperability with the Python `safetensors` package, both directions.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include "problem/worker_client.h"
#include "eval/half.h"
#include "eval/safetensors.h"

namespace kernelevolve::eval {
namespace {

namespace fs = std::filesystem;
using core::DType;

template <typename T>
std::vector<T> Values(const HostTensor& tensor) {
  EXPECT_EQ(tensor.bytes.size(), tensor.NumElements() * sizeof(T)) << tensor.name;
  return std::vector<T>(tensor.Data<T>(), tensor.Data<T>() + tensor.NumElements());
}

// tests/unit/data/python_written.safetensors was written by safetensors.torch.save_file
// (safetensors 0.8.0, torch 2.11); the generating script is in tests/unit/data/README.md.
TEST(SafetensorsInteropTest, ReadsFileWrittenByPython) {
  const SafetensorsFile file =
      ReadSafetensors(fs::path(KE_TEST_DATA_DIR) / "unit/data/python_written.safetensors");
  EXPECT_EQ(file.metadata.at("producer"), "pytorch");
  EXPECT_EQ(file.metadata.at("seed"), "7");
  ASSERT_EQ(file.tensors.size(), 12u);

  const HostTensor& f32 = file.Get("f32");
  EXPECT_EQ(f32.shape, (std::vector<int64_t>{2, 3}));
  const auto f = Values<float>(f32);
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[1], -2.25f);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(f[3], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(f[4] == 0.0f && std::signbit(f[4]));
  EXPECT_EQ(f[5], 3.0e-39f);  // subnormal

  EXPECT_EQ(Values<double>(file.Get("f64")), (std::vector<double>{1.0 / 3.0, -1e300}));
  const auto h = Values<uint16_t>(file.Get("f16"));
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(HalfToFloat(h[0]), 1.0f);
  EXPECT_EQ(HalfToFloat(h[1]), -65504.0f);
  EXPECT_EQ(h[2], 0x0001);  // torch rounded 6e-8 to the smallest subnormal
  EXPECT_EQ(HalfToFloat(h[3]), -std::numeric_limits<float>::infinity());
  const auto b = Values<uint16_t>(file.Get("bf16"));
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(BFloat16ToFloat(b[0]), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(b[1]), -3.140625f);
  EXPECT_EQ(b[2], FloatToBFloat16(1e38f));

  EXPECT_EQ(Values<int8_t>(file.Get("i8")), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(Values<int16_t>(file.Get("i16")), (std::vector<int16_t>{-32768, 32767}));
  EXPECT_EQ(Values<int32_t>(file.Get("i32")), (std::vector<int32_t>{-7, 2147483647}));
  EXPECT_EQ(Values<int64_t>(file.Get("i64")),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), (int64_t{1} << 62) + 1}));
  EXPECT_EQ(Values<uint8_t>(file.Get("u8")), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(file.Get("b").dtype, DType::kBool);
  EXPECT_EQ(Values<uint8_t>(file.Get("b")), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_TRUE(file.Get("scalar").shape.empty());
  EXPECT_EQ(Values<float>(file.Get("scalar")), (std::vector<float>{42.0f}));
  EXPECT_EQ(file.Get("empty").shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(file.Get("empty").bytes.empty());
}

// Checks with the strict Rust parser (safetensors.deserialize) and numpy loader.
constexpr const char* kCheckScript = R"PY(
import sys
import numpy as np
from safetensors import deserialize, safe_open
path = sys.argv[1]
raw = dict(deserialize(open(path, "rb").read()))
assert sorted(raw) == ["b", "bf16", "f16", "f32", "i64", "scalar"], sorted(raw)
assert raw["bf16"]["dtype"] == "BF16" and raw["bf16"]["shape"] == [2], raw["bf16"]
assert bytes(raw["bf16"]["data"]) == bytes([0x80, 0x3F, 0x49, 0xC0]), raw["bf16"]["data"]
with safe_open(path, "np") as f:  # numpy has no bfloat16: load the others
    assert f.metadata() == {"kind": "fixture"}, f.metadata()
    t = {k: f.get_tensor(k) for k in f.keys() if k != "bf16"}
assert t["f32"].dtype == np.float32 and t["f32"].shape == (2, 2)
assert t["f32"][0, 0] == 1.5 and np.isnan(t["f32"][0, 1]) and t["f32"][1, 0] == -np.inf
assert t["f16"].dtype == np.float16 and list(t["f16"]) == [0.5, -65504.0]
assert t["i64"].dtype == np.int64 and list(t["i64"]) == [-(2**63), 5]
assert t["b"].dtype == np.bool_ and list(t["b"]) == [True, False]
assert t["scalar"].shape == () and t["scalar"] == 7.0
print("ok")
)PY";

template <typename T>
HostTensor MakeTensor(const std::string& name, DType dtype, std::vector<int64_t> shape,
                      const std::vector<T>& values) {
  HostTensor tensor{name, dtype, std::move(shape), {}};
  tensor.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

TEST(SafetensorsInteropTest, PythonReadsFileWrittenByCpp) {
  const fs::path python = problem::DefaultPython();
  if (!fs::exists(python)) GTEST_SKIP() << "no Python venv at " << python;
  const fs::path dir = fs::temp_directory_path() / ("ke_interop_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // Odd-sized tensors first, so later ones start unaligned: the format allows that.
  WriteSafetensors(dir / "cpp.safetensors",
                   {MakeTensor<uint8_t>("b", DType::kBool, {2}, {1, 0}),
                    MakeTensor<float>("f32", DType::kFloat32, {2, 2}, {1.5f, nan, -inf, 0.0f}),
                    MakeTensor<uint16_t>("f16", DType::kFloat16, {2},
                                         {FloatToHalf(0.5f), FloatToHalf(-65504.0f)}),
                    MakeTensor<uint16_t>("bf16", DType::kBFloat16, {2},
                                         {FloatToBFloat16(1.0f), FloatToBFloat16(-3.140625f)}),
                    MakeTensor<int64_t>("i64", DType::kInt64, {2},
                                        {std::numeric_limits<int64_t>::min(), 5}),
                    MakeTensor<float>("scalar", DType::kFloat32, {}, {7.0f})},
                   {{"kind", "fixture"}});
  std::ofstream(dir / "check.py") << kCheckScript;
  const std::string command = python.string() + " " + (dir / "check.py").string() + " " +
                              (dir / "cpp.safetensors").string() + " > " +
                              (dir / "log.txt").string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream log_file(dir / "log.txt");
  const std::string log((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve::eval
