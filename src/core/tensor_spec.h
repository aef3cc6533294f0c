// Shape and dtype of one tensor crossing the candidate ABI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace kernelevolve::core {

enum class TensorRole { kInput, kParameter, kOutput };

/// One tensor of the problem. Tensors are dense and row-major (C-contiguous).
struct TensorSpec {
  std::string name;             // "input.0", "param.<state_dict key>", "output.0"
  TensorRole role = TensorRole::kInput;
  std::vector<int64_t> shape;   // empty for a 0-d tensor
  DType dtype = DType::kFloat32;

  /// Product of the shape (1 for a 0-d tensor).
  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  /// NumElements() * element size, in bytes.
  int64_t NumBytes() const { return NumElements() * static_cast<int64_t>(DTypeSize(dtype)); }
};

}  // namespace kernelevolve::core
