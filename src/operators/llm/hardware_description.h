// The "Target hardware" section of a prompt: what the run knows about the machine the
// kernels run on, measured figures included (issue 21).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace kernelevolve::operators::llm {

/// CPU model, logical cores, threads used, and the vector ISA extensions from
/// /proc/cpuinfo that matter to a kernel (sse4_2, avx, avx2, fma, avx512f/bw/vl,
/// avx512_bf16, amx), e.g. "CPU: Intel Xeon ... (8 logical CPUs; kernels run on 2
/// threads). ISA extensions: avx2 fma avx512f.". With measured peaks (> 0; cli/
/// machine_peaks.h, with `threads` threads) a second sentence gives the copy bandwidth
/// (1e9 bytes/s, read + write) and the float32 FMA peak (1e9 FLOP/s).
std::string DescribeHardware(const std::string& cpu_model, int logical_cores, int threads,
                             double copy_bandwidth_gbps = 0, double peak_gflops = 0);

/// What the GPU runner reported and measured (platforms/triton/gpu_runner_client.h,
/// gpu_peaks.py); zero / empty where unknown.
struct GpuFacts {
  std::string device_name;          // "NVIDIA H200"
  std::string capability;           // "9.0"
  bool interpret = false;           // TRITON_INTERPRET=1: CPU tensors, no GPU facts
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int64_t shared_memory_per_block_optin = 0;  // bytes a block may opt into
  int64_t shared_memory_per_sm = 0;           // bytes per SM
  double copy_bandwidth_gbps = 0;   // device-to-device copy, read + write, 1e9 bytes/s
  std::map<std::string, double> matmul_tflops;  // torch.mm peak per dtype, 1e12 FLOP/s
};

/// "GPU: NVIDIA H200 (compute capability 9.0, 132 SMs, L2 60 MiB, shared memory 227 KiB
/// per block (opt-in) / 228 KiB per SM, 140 GiB memory). Measured here: device copy
/// bandwidth 4251 GB/s (read + write); torch.mm peaks float16 761 TFLOP/s, ...". Under
/// the interpreter it says that the kernels run on the CPU through TRITON_INTERPRET=1
/// and timings mean nothing.
std::string DescribeGpu(const GpuFacts& facts);

}  // namespace kernelevolve::operators::llm
