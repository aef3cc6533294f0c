// A wrong ReLU for `kernelevolve eval`'s tests: NaN where the input is negative (the
// reference gives 0 there), so eval must exit 1 with "incorrect" and the NaN named
// (tests/integration/eval_cli_test.cpp). ABI: docs/abi.md.
#include <dlpack/dlpack.h>
#include <cstdint>
#include <limits>

extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t, DLTensor* outputs, int32_t) {
  int64_t n = 1;
  for (int32_t d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* in = static_cast<const float*>(inputs[0].data);
  float* out = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : std::numeric_limits<float>::quiet_NaN();
  return 0;
}
