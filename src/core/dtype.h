// Element types shared by fixtures (safetensors), the DLPack ABI and the worker.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace kernelevolve::core {

enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt8, kInt16, kInt32, kInt64, kUInt8, kBool };

/// Torch-style name: "float32", "float64", "float16", "bfloat16", "int8", ..., "bool".
std::string_view DTypeName(DType dtype);
/// Parses a torch-style name (also accepts "torch.float32"). Throws InvalidInputError.
DType DTypeFromName(std::string_view name);
/// safetensors header code: "F32", "F64", "F16", "BF16", "I8", "I16", "I32", "I64", "U8", "BOOL"
/// (https://huggingface.co/docs/safetensors, format section).
std::string_view SafetensorsCode(DType dtype);
/// Parses a safetensors dtype code. Throws InvalidInputError on an unknown code.
DType DTypeFromSafetensorsCode(std::string_view code);
/// Bytes per element.
std::size_t DTypeSize(DType dtype);
/// DLPack description (dlpack.h: code, bits, lanes = 1).
DLDataType ToDLDataType(DType dtype);
/// True for float32/float64/float16/bfloat16.
bool IsFloatingPoint(DType dtype);

}  // namespace kernelevolve::core
