// Adversarial kernel: memoizes results by input address: correct while checked (every seed has its own buffer), a cache hit on every timed call
// Expected: rejected_by_check during timing, a result reused from an earlier call. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
#include <dlpack/dlpack.h>
#include <cstdint>
#include <map>
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
  static std::map<const void*, std::vector<float>> cache;
  auto& hit = cache[x];
  if (hit.empty()) {
    hit.resize(n);
    for (int64_t i = 0; i < n; ++i) hit[i] = x[i] > 0 ? x[i] : 0;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = hit[i];
  return 0;
}
