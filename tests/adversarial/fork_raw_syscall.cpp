// Adversarial kernel: spawns a process with a raw fork system call (no libc symbol for the link check to see)
// Expected: rejected_by_check, tried to spawn a process. ABI: docs/abi.md; run by tests/unit/adversarial_test.cpp.
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
  long pid;
  asm volatile("syscall" : "=a"(pid) : "0"(57L) : "rcx", "r11", "memory");  // x86-64 fork
  if (pid == 0) asm volatile("syscall" : : "a"(60L), "D"(0L) : "rcx", "r11", "memory");  // child: exit
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
