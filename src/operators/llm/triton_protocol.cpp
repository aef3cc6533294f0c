// --target triton: a Python module with @triton.jit kernels and one launcher,
// kernelevolve_entry(inputs, outputs) (docs/gpu.md "Candidate ABI (Triton)").
#include <regex>

#include "operators/llm/source_checks.h"
#include "operators/llm/target_protocol.h"

namespace kernelevolve::operators::llm {
namespace {

std::string ValidateTriton(const std::string& source) {
  static const std::regex entry(R"((^|\n)def\s+kernelevolve_entry\s*\()");
  static const std::regex jit(R"(@\s*triton\s*\.\s*jit)");
  static const std::regex import(R"((^|\n)\s*(import\s+triton|from\s+triton\b))");
  if (!std::regex_search(source, entry)) {
    return "the code does not define a top-level def kernelevolve_entry(inputs, outputs)";
  }
  if (!std::regex_search(source, jit)) {
    return "the code defines no @triton.jit kernel (the GPU work must be the candidate's own kernels)";
  }
  if (!std::regex_search(source, import)) return "the code does not import triton";
  if (source.find("extern \"C\"") != std::string::npos || source.find("#include") != std::string::npos) {
    return "the code is C/C++, not a Python module with Triton kernels";
  }
  return CheckBalancePython(source);
}

}  // namespace

const TargetProtocol& TritonProtocol() {
  static const TargetProtocol protocol{
      "triton", "Triton", "NVIDIA GPUs (Triton kernels in Python, launched from PyTorch tensors)", "python",
      {"", "python", "py", "python3"},
      "sections/abi_triton", "",
      [](int) { return std::string("on the GPU"); },
      ValidateTriton};
  return protocol;
}

}  // namespace kernelevolve::operators::llm
