// A recorded answer that does not compile (an undeclared identifier), to exercise the
// compile_error path and the repair prompt.
#include <dlpack/dlpack.h>

#include <cstdint>

extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs, DLTensor* outputs,
                                  int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1) return 1;
  const float* in = static_cast<const float*>(inputs[0].data);
  float* out = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < element_count; ++i) out[i] = in[i];
  return 0;
}
