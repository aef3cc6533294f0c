// Control, not adversarial: a correct ReLU that uses everything a legitimate kernel may
// use (OpenMP, a joined std::thread, std::thread::hardware_concurrency, printf, heap
// memory). It must pass every check; tests/unit/adversarial_test.cpp runs it first.
#include <dlpack/dlpack.h>
#include <cstdint>
#include <cstdio>
#include <thread>
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
  static bool said = false;
  if (!said) std::printf("control kernel, %u hardware threads\n", std::thread::hardware_concurrency());
  said = true;
  std::vector<float> scratch(static_cast<size_t>(n));
  std::thread half([&] {
    for (int64_t i = 0; i < n / 2; ++i) scratch[i] = x[i] > 0 ? x[i] : 0;
  });
#pragma omp parallel for schedule(static)
  for (int64_t i = n / 2; i < n; ++i) scratch[i] = x[i] > 0 ? x[i] : 0;
  half.join();
  for (int64_t i = 0; i < n; ++i) y[i] = scratch[i];
  return 0;
}
