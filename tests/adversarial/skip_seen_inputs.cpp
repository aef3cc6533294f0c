// Adversarial kernel: remembers the address and a few sampled values of the inputs it computed last; when both match, returns without writing (a timed loop on one input set is then almost free)
// Expected: rejected_by_check during timing, wrong result on a verified timed call whose inputs were kept. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
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
  static const float* last = nullptr;
  static float sample[3] = {0, 0, 0};
  const float now[3] = {x[0], x[n / 2], x[n - 1]};
  if (x == last && now[0] == sample[0] && now[1] == sample[1] && now[2] == sample[2]) return 0;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  last = x;
  for (int k = 0; k < 3; ++k) sample[k] = now[k];
  return 0;
}
