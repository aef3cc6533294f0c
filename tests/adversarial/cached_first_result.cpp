// Adversarial kernel: computes the first call only and returns that result on every later call
// Expected: rejected_by_check, a result reused from an earlier call. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
#include <dlpack/dlpack.h>
#include <cstdint>
#include <vector>
static int64_t Numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = Numel(in[0]);
  static std::vector<float> cache;
  if (cache.empty()) {
    cache.resize(n);
    for (int64_t i = 0; i < n; ++i) cache[i] = x[i] > 0 ? x[i] : 0;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = cache[i];
  return 0;
}
