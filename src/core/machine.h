// What a measurement was taken on. Recorded with every result.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace kernelevolve::core {

struct MachineContext {
  std::string cpu_model;       // /proc/cpuinfo "model name"
  int logical_cores = 0;       // online logical CPUs
  int threads = 0;             // threads given to candidates and to the eager baseline
  std::string governor;        // cpufreq scaling governor, "unknown" where absent
  std::string compiler;        // "g++ (Debian 12.2.0-14) 12.2.0"
  std::string torch_version;   // from the worker
  std::string hostname;
};

/// Reads the local machine (cpu model, cores, governor, hostname); compiler and torch
/// fields are filled by the platform and the worker.
MachineContext ProbeLocalMachine();
nlohmann::json MachineToJson(const MachineContext& machine);

}  // namespace kernelevolve::core
