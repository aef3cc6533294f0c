// Control, not adversarial: a correct ReLU whose OpenMP threads allocate and free
// scratch vectors, then open /proc/sys/vm/overcommit_memory as glibc's malloc does the
// first time it shrinks a thread arena's heap (a valid attention kernel with head size
// 200 was once rejected for it). The open itself is refused (EACCES) but must not be
// held against the kernel; tests/unit/adversarial_test.cpp expects it to pass.
#include <dlpack/dlpack.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  int64_t n = 1;
  for (int i = 0; i < in[0].ndim; ++i) n *= in[0].shape[i];
#pragma omp parallel
  {
    std::vector<float> scratch(1 << 16);
    const int fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY);
    if (fd >= 0) close(fd);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      scratch[static_cast<size_t>(i) & 0xffff] = x[i];
      y[i] = scratch[static_cast<size_t>(i) & 0xffff] > 0 ? x[i] : 0.0f;
    }
  }
  return 0;
}
