// A DLTensor over a test's eval::HostTensor (dense, row-major, on the CPU), for calling a
// compiled kernel entry directly (docs/abi.md).
#pragma once

#include <dlpack/dlpack.h>

#include "core/dtype.h"
#include "eval/safetensors.h"

namespace kernelevolve::testing_util {

/// A view of `t`'s bytes with its shape and dtype; no strides (dense), offset 0. `t` must
/// outlive the view.
inline DLTensor HostView(eval::HostTensor& t) {
  DLTensor d{};
  d.data = t.bytes.data();
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int32_t>(t.shape.size());
  d.dtype = core::ToDLDataType(t.dtype);
  d.shape = t.shape.empty() ? nullptr : t.shape.data();
  d.strides = nullptr;
  d.byte_offset = 0;
  return d;
}

}  // namespace kernelevolve::testing_util
