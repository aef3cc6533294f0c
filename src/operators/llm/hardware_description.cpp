#include "operators/llm/hardware_description.h"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>

namespace kernelevolve::operators::llm {
namespace {

std::string Bytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return fmt::format("{:.0f} GiB", static_cast<double>(bytes) / (1 << 30));
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{:.0f} KiB", static_cast<double>(bytes) / 1024);
}

}  // namespace

std::string DescribeHardware(const std::string& cpu_model, int logical_cores, int threads, double copy_bandwidth_gbps,
                             double peak_gflops) {
  std::ifstream in("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) flags.insert(w);
    break;
  }
  std::string isa;
  for (const char* f : {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_bf16",
                        "avx512_vnni", "amx_tile"}) {
    if (flags.count(f)) isa += std::string(isa.empty() ? "" : " ") + f;
  }
  std::string text = fmt::format("CPU: {} ({} logical CPUs; kernels run on {} threads). ISA extensions: {}.",
                                 cpu_model.empty() ? "unknown" : cpu_model, logical_cores, threads,
                                 isa.empty() ? "none detected beyond the baseline" : isa);
  if (copy_bandwidth_gbps > 0 || peak_gflops > 0) {
    text += fmt::format(" Measured here on {} threads: copy bandwidth {:.1f} GB/s (read + write), float32 FMA peak "
                        "{:.1f} GFLOP/s.", threads, copy_bandwidth_gbps, peak_gflops);
  }
  return text;
}

std::string DescribeGpu(const GpuFacts& g) {
  if (g.interpret) {
    return "GPU: none; the kernels run on CPU tensors through Triton's interpreter (TRITON_INTERPRET=1), so "
           "correctness is checked but timings say nothing about GPU speed. Write the kernel for an NVIDIA GPU.";
  }
  std::string text = fmt::format("GPU: {} (compute capability {}, {} SMs", g.device_name.empty() ? "unknown" : g.device_name,
                                 g.capability.empty() ? "unknown" : g.capability, g.sm_count);
  if (g.l2_bytes > 0) text += ", L2 " + Bytes(g.l2_bytes);
  if (g.shared_memory_per_block_optin > 0) {
    text += ", shared memory " + Bytes(g.shared_memory_per_block_optin) + " per block (opt-in)";
    if (g.shared_memory_per_sm > 0) text += " / " + Bytes(g.shared_memory_per_sm) + " per SM";
  }
  if (g.memory_bytes > 0) text += ", " + Bytes(g.memory_bytes) + " memory";
  text += ").";
  std::string measured;
  if (g.copy_bandwidth_gbps > 0) {
    measured += fmt::format(" device copy bandwidth {:.0f} GB/s (read + write)", g.copy_bandwidth_gbps);
  }
  if (!g.matmul_tflops.empty()) {
    measured += measured.empty() ? " torch.mm peaks" : "; torch.mm peaks";
    bool first = true;
    for (const auto& [dtype, tflops] : g.matmul_tflops) {
      measured += fmt::format("{} {} {:.0f} TFLOP/s", first ? "" : ",", dtype, tflops);
      first = false;
    }
  }
  if (!measured.empty()) text += " Measured here:" + measured + ".";
  return text;
}

}  // namespace kernelevolve::operators::llm
