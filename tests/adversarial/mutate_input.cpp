// Adversarial kernel: computes ReLU in place in its input, then copies it
// Expected: rejected_by_check, mutated input input.0. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
#include <dlpack/dlpack.h>
#include <cstdint>

static int64_t Numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = Numel(in[0]);
  float* writable = const_cast<float*>(x);
  for (int64_t i = 0; i < n; ++i) writable[i] = writable[i] > 0 ? writable[i] : 0;
  for (int64_t i = 0; i < n; ++i) y[i] = writable[i];
  return 0;
}
