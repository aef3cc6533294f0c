// Adversarial kernel: writes zeros everywhere (ReLU of a normal sample is zero about half the time, so a loose tolerance would almost pass it)
// Expected: rejected_by_check, constant output. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
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
  (void)x;
  for (int64_t i = 0; i < n; ++i) y[i] = 0.0f;
  return 0;
}
