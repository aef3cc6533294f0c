// ReLU, float32: y = max(x, 0). Recorded CUDA C++ answer of the fake LLM server.
#include <dlpack/dlpack.h>
#include <cuda_runtime.h>

#include <cstdint>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}

extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs, DLTensor* outputs,
                                  int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1) return 1;
  const DLTensor& x = inputs[0];
  const DLTensor& y = outputs[0];
  if (x.dtype.code != kDLFloat || x.dtype.bits != 32 || x.device.device_type != kDLCUDA) return 2;
  int64_t n = 1;
  for (int32_t d = 0; d < x.ndim; ++d) n *= x.shape[d];
  if (n == 0) return 0;
  int device = 0;
  cudaGetDevice(&device);
  if (device != y.device.device_id) cudaSetDevice(y.device.device_id);
  const int block = 256;
  const int64_t blocks = (n + block - 1) / block;
  relu_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), block>>>(
      static_cast<const float*>(x.data), static_cast<float*>(y.data), n);
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? 0 : 1000 + static_cast<int>(err);
}
