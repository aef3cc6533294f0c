// Text shared by the CUDA C++ templates (--target cuda): the header comment, the
// DLPack ABI helpers for device tensors, the device math namespace and the
// launch-error check (docs/gpu.md "CUDA C++").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kernelevolve::operators::templates {

/// Threads per warp on NVIDIA GPUs (CUDA C++ Programming Guide, "SIMT Architecture"):
/// the unit of the num_warps knob, a block being kWarpSize x num_warps threads.
inline constexpr int kWarpSize = 32;

/// "// " comment block of a generated .cu file: what it computes (`what`, several
/// lines allowed), the template and knobs, the ABI, the stream rule, the return codes
/// and the build line.
std::string CudaHeader(const std::string& template_name, const std::string& what, const nlohmann::json& knobs);

/// #include lines (dlpack, <cstdint>, <cuda_runtime.h>, <math.h>).
std::string CudaIncludes();

/// Host helpers: `ke_numel(t)`, `ke_check_device_tensor(t, code, bits)` (0, or 2 when
/// the tensor is not a kDLCUDA tensor of that dtype or has no data, 4 when its
/// strides are not dense row-major), `ke_use_device(t)` (cudaSetDevice to the
/// tensor's device when another is current; the static CUDA runtime of a candidate
/// starts on device 0) and `ke_sm_count()` (multiprocessor count of the current
/// device, cached).
std::string CudaAbiHelpers();

/// `namespace kecu` of __device__ float functions named as <cmath>'s (exp, expm1,
/// log, log1p, tanh, erf, sqrt, fabs, pow, min, max): CUDA's expf, erff, tanhf, ...
/// With `fast_math`, exp and log use the __expf / __logf intrinsics (about 2 ulp
/// over a narrower range: CUDA C++ Programming Guide, "Intrinsic Functions"); the
/// checker decides whether that is accurate enough.
std::string CudaMathNamespace(bool fast_math);

/// `cpp` (an expression of the C++ pointwise rules, spelled with std:: math) with
/// every "std::" turned into "kecu::", so it compiles in device code.
std::string ToDeviceMath(const std::string& cpp);

/// The statement ending every generated entry after its launches:
/// `cudaGetLastError()` != cudaSuccess -> return 1000 + the error code.
std::string CudaLaunchCheck();

}  // namespace kernelevolve::operators::templates
