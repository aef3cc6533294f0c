#include "core/machine.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace kernelevolve::core {
namespace {

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (in && std::getline(in, line)) return line;
  return "unknown";
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

MachineContext ProbeLocalMachine() {
  MachineContext m;
  m.cpu_model = CpuModel();
  m.isa = HostCpuIsa();
  m.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  m.governor = ReadFirstLine("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) m.hostname = host;
  return m;
}

std::string MachineSummary(const MachineContext& m) {
  std::string out = (m.cpu_model.empty() ? std::string("unknown CPU") : m.cpu_model) + ", " + m.isa.Text();
  if (m.threads > 0) out += ", " + std::to_string(m.threads) + (m.threads == 1 ? " thread" : " threads");
  return out;
}

nlohmann::json MachineToJson(const MachineContext& m) {
  return {{"cpu_model", m.cpu_model}, {"isa", CpuIsaToJson(m.isa)}, {"logical_cores", m.logical_cores},
          {"threads", m.threads},     {"governor", m.governor},
          {"compiler", m.compiler},   {"torch_version", m.torch_version},
          {"hostname", m.hostname},   {"copy_bandwidth_gbps", m.copy_bandwidth_gbps},
          {"peak_gflops", m.peak_gflops}, {"peaks_measured_utc", m.peaks_measured_utc}};
}

}  // namespace kernelevolve::core
