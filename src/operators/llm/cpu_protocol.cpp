// --target cpu: one C++17 translation unit exporting the DLPack entry (docs/abi.md).
#include <fmt/format.h>

#include "operators/llm/source_checks.h"
#include "operators/llm/target_protocol.h"

namespace kernelevolve::operators::llm {
namespace {

std::string ValidateCpp(const std::string& source) {
  if (source.find("kernelevolve_entry") == std::string::npos) return "the code does not define kernelevolve_entry";
  if (source.find("extern \"C\"") == std::string::npos) return "kernelevolve_entry is not declared extern \"C\"";
  if (source.find("torch/") != std::string::npos || source.find("ATen/") != std::string::npos) {
    return "the code includes PyTorch headers (the ABI allows only the C/C++ runtime, DLPack and OpenMP)";
  }
  return CheckBalanceC(source);
}

}  // namespace

const TargetProtocol& CpuProtocol() {
  static const TargetProtocol protocol{
      "cpu", "C++", "x86-64 CPUs (C++17, OpenMP)", "cpp", {"", "cpp", "c++", "cxx", "c"},
      "sections/abi_cpu", "sections/abi",
      [](int threads) { return fmt::format("on {} threads", threads); },
      ValidateCpp};
  return protocol;
}

}  // namespace kernelevolve::operators::llm
