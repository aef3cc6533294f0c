#include "eval/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "eval/half.h"

namespace kernelevolve::eval {
namespace {

namespace fs = std::filesystem;
using core::DType;

template <typename T>
HostTensor MakeTensor(const std::string& name, DType dtype, std::vector<int64_t> shape,
                      const std::vector<T>& values) {
  HostTensor tensor{name, dtype, std::move(shape), {}};
  tensor.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

template <typename T>
std::vector<T> Values(const HostTensor& tensor) {
  return std::vector<T>(tensor.Data<T>(), tensor.Data<T>() + tensor.NumElements());
}

// One tensor of every DType, plus a 0-d and an empty tensor.
std::vector<HostTensor> AllDTypeTensors() {
  return {
      MakeTensor<float>("f32", DType::kFloat32, {2, 2}, {1.5f, -2.0f, 0.0f, 1e-40f}),
      MakeTensor<double>("f64", DType::kFloat64, {3}, {1.0 / 3.0, -1e300, 5.0}),
      MakeTensor<uint16_t>("f16", DType::kFloat16, {2}, {FloatToHalf(0.5f), FloatToHalf(-7.0f)}),
      MakeTensor<uint16_t>("bf16", DType::kBFloat16, {1, 2},
                           {FloatToBFloat16(3.0f), FloatToBFloat16(-0.25f)}),
      MakeTensor<int8_t>("i8", DType::kInt8, {3}, {-128, 0, 127}),
      MakeTensor<int16_t>("i16", DType::kInt16, {2}, {-32768, 32767}),
      MakeTensor<int32_t>("i32", DType::kInt32, {2}, {-7, 2147483647}),
      MakeTensor<int64_t>("i64", DType::kInt64, {2}, {std::numeric_limits<int64_t>::min(), 42}),
      MakeTensor<uint8_t>("u8", DType::kUInt8, {2}, {0, 255}),
      MakeTensor<uint8_t>("flag", DType::kBool, {3}, {1, 0, 1}),
      MakeTensor<float>("scalar", DType::kFloat32, {}, {42.0f}),
      MakeTensor<float>("empty", DType::kFloat32, {0, 3}, {}),
  };
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ke_safetensors_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes raw bytes: 8-byte little-endian `header_length`, `header`, then `data`.
  fs::path WriteRaw(const std::string& header, const std::string& data, uint64_t header_length) {
    const fs::path path = dir_ / "raw.safetensors";
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((header_length >> (8 * i)) & 0xFF));
    out << header << data;
    return path;
  }
  fs::path WriteRaw(const std::string& header, const std::string& data) {
    return WriteRaw(header, data, header.size());
  }

  // Expects InvalidInputError whose message names the file and contains `phrase`.
  static void ExpectMalformed(const fs::path& path, const std::string& phrase) {
    try {
      ReadSafetensors(path);
      ADD_FAILURE() << "no error for " << phrase;
    } catch (const core::InvalidInputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(path.string()), std::string::npos) << message;
      EXPECT_NE(message.find(phrase), std::string::npos) << message;
    }
  }

  fs::path dir_;
};

TEST_F(SafetensorsTest, NumElements) {
  EXPECT_EQ((HostTensor{"a", DType::kFloat32, {2, 3, 4}, {}}).NumElements(), 24);
  EXPECT_EQ((HostTensor{"a", DType::kFloat32, {}, {}}).NumElements(), 1);
  EXPECT_EQ((HostTensor{"a", DType::kFloat32, {5, 0}, {}}).NumElements(), 0);
}

TEST_F(SafetensorsTest, RoundTripsEveryDTypeAndMetadata) {
  const auto tensors = AllDTypeTensors();
  const fs::path path = dir_ / "all.safetensors";
  WriteSafetensors(path, tensors, {{"seed", "3"}, {"torch", "2.11"}});
  const SafetensorsFile file = ReadSafetensors(path);
  EXPECT_EQ(file.metadata, (std::map<std::string, std::string>{{"seed", "3"}, {"torch", "2.11"}}));
  ASSERT_EQ(file.tensors.size(), tensors.size());
  for (const auto& expected : tensors) {
    const HostTensor& got = file.Get(expected.name);
    EXPECT_EQ(got.dtype, expected.dtype) << expected.name;
    EXPECT_EQ(got.shape, expected.shape) << expected.name;
    EXPECT_EQ(got.bytes, expected.bytes) << expected.name;
  }
  // Data was laid out in the given order, and tensors come back in data-offset order
  // (the empty tensor shares its offset with "scalar"'s end, so it sorts after it).
  EXPECT_EQ(file.tensors.front().name, "f32");
  EXPECT_EQ(Values<double>(file.Get("f64"))[1], -1e300);
}

TEST_F(SafetensorsTest, HeaderIsPaddedTo8Bytes) {
  const fs::path path = dir_ / "pad.safetensors";
  WriteSafetensors(path, {MakeTensor<uint8_t>("x", DType::kUInt8, {1}, {9})});
  std::ifstream in(path, std::ios::binary);
  unsigned char prefix[8];
  in.read(reinterpret_cast<char*>(prefix), 8);
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | prefix[i];
  EXPECT_EQ(header_length % 8, 0u);
  EXPECT_EQ(fs::file_size(path), 8 + header_length + 1);
}

TEST_F(SafetensorsTest, OverwritesAtomicallyAndLeavesNoTempFile) {
  const fs::path path = dir_ / "out.safetensors";
  WriteSafetensors(path, {MakeTensor<float>("a", DType::kFloat32, {1}, {1.0f})});
  WriteSafetensors(path, {MakeTensor<float>("b", DType::kFloat32, {2}, {2.0f, 3.0f})});
  EXPECT_EQ(ReadSafetensors(path).tensors.at(0).name, "b");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SafetensorsTest, WriterRejectsInconsistentTensorsAndLeavesNothing) {
  const fs::path path = dir_ / "bad.safetensors";
  auto wrong_size = MakeTensor<float>("w", DType::kFloat32, {3}, {1.0f, 2.0f});
  EXPECT_THROW(WriteSafetensors(path, {wrong_size}), core::InvalidInputError);
  const auto a = MakeTensor<float>("dup", DType::kFloat32, {1}, {1.0f});
  EXPECT_THROW(WriteSafetensors(path, {a, a}), core::InvalidInputError);
  auto reserved = a;
  reserved.name = "__metadata__";
  EXPECT_THROW(WriteSafetensors(path, {reserved}), core::InvalidInputError);
  EXPECT_TRUE(fs::is_empty(dir_));
  EXPECT_THROW(WriteSafetensors(dir_ / "missing_dir" / "x.safetensors", {a}), core::IoError);
}

TEST_F(SafetensorsTest, GetNamesWhatTheFileHolds) {
  const fs::path path = dir_ / "get.safetensors";
  WriteSafetensors(path, {MakeTensor<float>("output.0", DType::kFloat32, {1}, {1.0f})});
  const SafetensorsFile file = ReadSafetensors(path);
  try {
    file.Get("output.1");
    ADD_FAILURE() << "expected an error";
  } catch (const core::InvalidInputError& error) {
    EXPECT_NE(std::string(error.what()).find("output.0"), std::string::npos) << error.what();
  }
}

TEST_F(SafetensorsTest, MissingFileIsIoError) {
  EXPECT_THROW(ReadSafetensors(dir_ / "nope.safetensors"), core::IoError);
  EXPECT_THROW(ReadSafetensors(dir_), core::IoError);
}

TEST_F(SafetensorsTest, RejectsTruncatedFiles) {
  ExpectMalformed(WriteRaw("", "", 0), "header is not a JSON object");
  {
    std::ofstream(dir_ / "short.safetensors", std::ios::binary) << "abc";
  }
  ExpectMalformed(dir_ / "short.safetensors", "shorter than the 8-byte header length");
  // A valid file with its last 4 data bytes cut off.
  const fs::path path = dir_ / "cut.safetensors";
  WriteSafetensors(path, {MakeTensor<float>("x", DType::kFloat32, {4}, {1, 2, 3, 4})});
  fs::resize_file(path, fs::file_size(path) - 4);
  ExpectMalformed(path, "outside the 12-byte data section");
}

TEST_F(SafetensorsTest, RejectsHeaderLengthBeyondFile) {
  const std::string header = R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  ExpectMalformed(WriteRaw(header, "a", header.size() + 2), "exceeds");
  ExpectMalformed(WriteRaw(header, "a", std::numeric_limits<uint64_t>::max()), "exceeds");
}

TEST_F(SafetensorsTest, RejectsBadHeaders) {
  ExpectMalformed(WriteRaw("{not json", ""), "header is not a JSON object");
  ExpectMalformed(WriteRaw("[1, 2]", ""), "header is not a JSON object");
  ExpectMalformed(WriteRaw(R"({"x": 3})", ""), "tensor 'x' is not a JSON object");
  ExpectMalformed(WriteRaw(R"({"x":{"shape":[1],"data_offsets":[0,1]}})", "a"), "'dtype'");
  ExpectMalformed(WriteRaw(R"({"x":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", "a"),
                  "unsupported dtype 'F8_E4M3'");
  ExpectMalformed(WriteRaw(R"({"x":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", "a"),
                  "non-negative integer");
  ExpectMalformed(WriteRaw(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", "a"),
                  "data_offsets");
  ExpectMalformed(WriteRaw(R"({"__metadata__":{"k":1}})", ""), "'__metadata__' value for 'k'");
}

TEST_F(SafetensorsTest, RejectsOffsetsOutOfRangeOrMismatched) {
  ExpectMalformed(WriteRaw(R"({"x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", "abc"),
                  "outside the 3-byte data section");
  ExpectMalformed(WriteRaw(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[2,1]}})", "abc"),
                  "data_offsets [2, 1)");
  ExpectMalformed(WriteRaw(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "abcdefgh"),
                  "spans 4 bytes but shape [2] of float32 needs 8");
  ExpectMalformed(
      WriteRaw(R"({"x":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,1]}})", "a"),
      "shape [4294967296, 4294967296] of uint8 is too large");
}

TEST_F(SafetensorsTest, RejectsOverlappingTensors) {
  ExpectMalformed(WriteRaw(R"({"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},)"
                           R"("b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
                           "abcd"),
                  "tensors 'a' and 'b' overlap");
}

TEST_F(SafetensorsTest, AcceptsSpacePaddedHeaderFromOtherWriters) {
  const fs::path path =
      WriteRaw(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})" + std::string(5, ' '),
               "\x07\x09");
  const SafetensorsFile file = ReadSafetensors(path);
  EXPECT_EQ(Values<uint8_t>(file.Get("x")), (std::vector<uint8_t>{7, 9}));
}

}  // namespace
}  // namespace kernelevolve::eval
