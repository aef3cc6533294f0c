// --target cuda: one .cu translation unit exporting the DLPack entry on device tensors,
// with its own __global__ kernels (docs/gpu.md "CUDA C++").
#include <regex>

#include "operators/llm/source_checks.h"
#include "operators/llm/target_protocol.h"

namespace kernelevolve::operators::llm {
namespace {

std::string ValidateCuda(const std::string& source) {
  if (source.find("kernelevolve_entry") == std::string::npos) return "the code does not define kernelevolve_entry";
  if (source.find("extern \"C\"") == std::string::npos) return "kernelevolve_entry is not declared extern \"C\"";
  if (source.find("__global__") == std::string::npos) {
    return "the code defines no __global__ kernel (the GPU work must be the candidate's own kernels)";
  }
  if (source.find("torch/") != std::string::npos || source.find("ATen/") != std::string::npos ||
      source.find("c10/") != std::string::npos) {
    return "the code includes PyTorch headers (the ABI allows the CUDA runtime, DLPack and the C++ library only)";
  }
  static const std::regex vendor(R"(#\s*include\s*[<"](cublas|cublasLt|cudnn|cufft|curand|cusparse|cusolver)\w*\.h)");
  if (std::regex_search(source, vendor)) {
    return "the code includes a vendor library (cuBLAS, cuDNN, ...): every GPU kernel must be the candidate's own";
  }
  return CheckBalanceC(source);
}

}  // namespace

const TargetProtocol& CudaProtocol() {
  static const TargetProtocol protocol{
      "cuda", "CUDA C++", "NVIDIA GPUs (CUDA C++ built by nvcc, C++17)", "cuda",
      {"", "cuda", "cu", "cpp", "c++", "cxx"},
      "sections/abi_cuda", "",
      [](int) { return std::string("on the GPU"); },
      ValidateCuda};
  return protocol;
}

}  // namespace kernelevolve::operators::llm
