// Adversarial kernel: calls into PyTorch (at::relu_) instead of computing
// Expected: rejected_by_check at build time, forbidden symbol at::relu_. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
#include <dlpack/dlpack.h>
#include <cstdint>
namespace at {
class Tensor;
const Tensor& relu_(const Tensor& self);
}  // namespace at
static int64_t Numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  const int64_t n = Numel(in[0]);
  at::relu_(*reinterpret_cast<const at::Tensor*>(x));
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
