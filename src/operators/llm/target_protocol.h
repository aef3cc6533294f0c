// What the LLM operator says and accepts differently per target (issue 21): the words of
// the system message, the fenced block's language, the prompt section holding the
// target's ABI with a correct example kernel (prompts/<version>/sections/abi_<target>.md),
// and the static checks of an answer. One protocol per target, each in its own file
// (cpu_protocol.cpp, triton_protocol.cpp, cuda_protocol.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kernelevolve::operators::llm {

struct TargetProtocol {
  std::string target;       // "cpu" | "triton" | "cuda" (the --target and the knowledge platform)
  std::string language;     // "C++" | "Triton" | "CUDA C++": what the system message asks for
  std::string platform;     // "x86-64 CPUs (C++17, OpenMP)", "NVIDIA GPUs (Triton, Python)", ...
  std::string fence;        // the fence tag the prompts ask for: "cpp" | "python" | "cuda"
  /// Fence tags an answer may use (lower case; "" is a bare ```).
  std::vector<std::string> fence_tags;
  /// Template of the ABI section, with its example kernel ("sections/abi_triton"), and
  /// the older name a prompt folder may use instead ("sections/abi" in prompts/v1, CPU
  /// only; "" when none).
  std::string abi_template;
  std::string legacy_abi_template;
  /// Where eager PyTorch was timed, for the problem section ("on 2 threads", "on the GPU").
  std::function<std::string(int threads)> eager_where;
  /// "" when a whole source (after edits) is acceptable, else why not (stored with the
  /// call): the entry point, the language's required parts, forbidden includes or
  /// imports, bracket balance.
  std::function<std::string(const std::string& source)> validate;
};

/// C++17 with DLPack for --target cpu (docs/abi.md).
const TargetProtocol& CpuProtocol();
/// A Python module with @triton.jit kernels and kernelevolve_entry(inputs, outputs)
/// (docs/gpu.md "Candidate ABI (Triton)").
const TargetProtocol& TritonProtocol();
/// One .cu translation unit with the DLPack entry on device tensors (docs/gpu.md "CUDA C++").
const TargetProtocol& CudaProtocol();

/// The protocol of `target`. Throws InvalidInputError naming --target for another name.
const TargetProtocol& ProtocolFor(const std::string& target);

}  // namespace kernelevolve::operators::llm
