// A hand-written ReLU (float32, any shape) for `kernelevolve eval`'s tests: correct, so
// eval must exit 0 with a speedup (tests/integration/eval_cli_test.cpp). ABI: docs/abi.md.
#include <dlpack/dlpack.h>
#include <cstdint>

extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,
                                  DLTensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1) return 1;
  const DLTensor& x = inputs[0];
  if (x.dtype.code != kDLFloat || x.dtype.bits != 32) return 2;
  int64_t n = 1;
  for (int32_t d = 0; d < x.ndim; ++d) n *= x.shape[d];
  const float* in = static_cast<const float*>(x.data);
  float* out = static_cast<float*>(outputs[0].data);
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
  return 0;
}
