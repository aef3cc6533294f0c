#include "core/dtype.h"

#include <array>
#include <utility>

#include "core/error.h"

namespace kernelevolve::core {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view safetensors;
  std::size_t size;
  DLDataTypeCode code;
};

constexpr std::array<DTypeInfo, 10> kInfos = {{
    {DType::kFloat32, "float32", "F32", 4, kDLFloat},
    {DType::kFloat64, "float64", "F64", 8, kDLFloat},
    {DType::kFloat16, "float16", "F16", 2, kDLFloat},
    {DType::kBFloat16, "bfloat16", "BF16", 2, kDLBfloat},
    {DType::kInt8, "int8", "I8", 1, kDLInt},
    {DType::kInt16, "int16", "I16", 2, kDLInt},
    {DType::kInt32, "int32", "I32", 4, kDLInt},
    {DType::kInt64, "int64", "I64", 8, kDLInt},
    {DType::kUInt8, "uint8", "U8", 1, kDLUInt},
    // bool travels as 8-bit unsigned: this dlpack version has no kDLBool.
    {DType::kBool, "bool", "BOOL", 1, kDLUInt},
}};

const DTypeInfo& Info(DType dtype) {
  for (const auto& info : kInfos) {
    if (info.dtype == dtype) return info;
  }
  throw InternalError("unknown DType value");
}

}  // namespace

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }

DType DTypeFromName(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (const auto& info : kInfos) {
    if (info.name == name) return info.dtype;
  }
  throw InvalidInputError("unsupported dtype '" + std::string(name) + "'");
}

std::string_view SafetensorsCode(DType dtype) { return Info(dtype).safetensors; }

DType DTypeFromSafetensorsCode(std::string_view code) {
  for (const auto& info : kInfos) {
    if (info.safetensors == code) return info.dtype;
  }
  throw InvalidInputError("unsupported safetensors dtype '" + std::string(code) + "'");
}

std::size_t DTypeSize(DType dtype) { return Info(dtype).size; }

DLDataType ToDLDataType(DType dtype) {
  const auto& info = Info(dtype);
  DLDataType out;
  out.code = static_cast<uint8_t>(info.code);
  out.bits = static_cast<uint8_t>(dtype == DType::kBool ? 8 : info.size * 8);
  out.lanes = 1;
  return out;
}

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

}  // namespace kernelevolve::core
