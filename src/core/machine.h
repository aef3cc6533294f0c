// What a measurement was taken on. Recorded with every result.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/cpu_isa.h"

namespace kernelevolve::core {

struct MachineContext {
  std::string cpu_model;       // /proc/cpuinfo "model name"
  CpuIsa isa;                  // instruction set -march=native compiles for (HostCpuIsa)
  int logical_cores = 0;       // online logical CPUs
  int threads = 0;             // threads given to candidates and to the eager baseline
  std::string governor;        // cpufreq scaling governor, "unknown" where absent
  std::string compiler;        // "g++ (Debian 12.2.0-14) 12.2.0"
  std::string torch_version;   // from the worker
  std::string hostname;
  /// Measured by platforms/cpu/bandwidth_probe.h with `threads` threads (0: not measured):
  /// STREAM-style copy bandwidth in 1e9 bytes/s (read + write counted) and float32 FMA
  /// throughput in 1e9 FLOP/s; `peaks_measured_utc` is when ("" when not measured).
  double copy_bandwidth_gbps = 0;
  double peak_gflops = 0;
  std::string peaks_measured_utc;
};

/// Reads the local machine (cpu model, cores, governor, hostname); compiler and torch
/// fields are filled by the platform and the worker.
MachineContext ProbeLocalMachine();
nlohmann::json MachineToJson(const MachineContext& machine);
/// One line for a console table: "AMD EPYC 7B13, x86-64-v3 (avx2 fma, 256-bit vectors),
/// 2 threads" (the thread count only when set).
std::string MachineSummary(const MachineContext& machine);

}  // namespace kernelevolve::core
