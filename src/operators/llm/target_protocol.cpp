#include "operators/llm/target_protocol.h"

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::operators::llm {

const TargetProtocol& ProtocolFor(const std::string& target) {
  if (target == "cpu") return CpuProtocol();
  if (target == "triton") return TritonProtocol();
  if (target == "cuda") return CudaProtocol();
  throw core::InvalidInputError(
      fmt::format("--target {}: the LLM operator writes kernels for cpu, triton and cuda only", target));
}

}  // namespace kernelevolve::operators::llm
