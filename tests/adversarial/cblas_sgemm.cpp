// Adversarial kernel: calls a BLAS (cblas_sgemm) instead of computing
// Expected: rejected_by_check at build time, forbidden symbol cblas_sgemm. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
#include <dlpack/dlpack.h>
#include <cstdint>
extern "C" void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
static int64_t Numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = Numel(in[0]);
  static const float one = 1.0f;
  cblas_sgemm(101, 111, 111, 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, y, 1);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
