// Adversarial probe: returns without writing when the inputs look unchanged (same address, same sampled values) AND the output still holds its previous result (the drop-in allocator hands back the block it freed); after one such early return it marks every later result wrong, so any early return surfaces as a wrong verified call
// Expected: ok (every timed call's outputs are poisoned first, so it never finds them intact and computes every call). ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
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
  const int64_t at[3] = {0, n / 2, n - 1};
  static const float* last_in = nullptr;
  static float last_x[3] = {0, 0, 0};
  static float last_y[3] = {0, 0, 0};
  static bool skipped = false;
  bool same = x == last_in;
  for (int k = 0; k < 3; ++k) same = same && x[at[k]] == last_x[k] && y[at[k]] == last_y[k];
  if (same) {
    skipped = true;
    return 0;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  if (skipped) y[n / 3] += 1.0f;  // an early return happened: make it visible
  last_in = x;
  for (int k = 0; k < 3; ++k) {
    last_x[k] = x[at[k]];
    last_y[k] = y[at[k]];
  }
  return 0;
}
