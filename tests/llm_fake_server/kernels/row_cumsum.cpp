// Row-wise prefix sum, float32: y[i, j] = sum_{k <= j} x[i, k], accumulated in double.
// Recorded answer of the fake LLM server for tests/llm_fake_server/problems/row_cumsum.py.
#include <dlpack/dlpack.h>

#include <cstdint>

extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs, DLTensor* outputs,
                                  int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1) return 1;
  const DLTensor& x = inputs[0];
  if (x.ndim != 2 || x.dtype.code != kDLFloat || x.dtype.bits != 32) return 2;
  const int64_t rows = x.shape[0];
  const int64_t cols = x.shape[1];
  const float* in = static_cast<const float*>(x.data);
  float* out = static_cast<float*>(outputs[0].data);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    double acc = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      acc += in[i * cols + j];
      out[i * cols + j] = static_cast<float>(acc);
    }
  }
  return 0;
}
