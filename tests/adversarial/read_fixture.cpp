// Adversarial kernel: reads the reference output from the fixture file (the test substitutes KE_FIXTURE_FILE)
// Expected: rejected_by_check, tried to open a file. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdio>
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
  std::FILE* f = std::fopen("KE_FIXTURE_FILE", "rb");
  if (f == nullptr) return 9;
  std::fclose(f);
  for (int64_t i = 0; i < n; ++i) y[i] = 0;
  return 0;
}
