// The CUDA C++ hardware interpreter (--target cuda): candidates are .cu sources
// exporting the native DLPack entry point, built by nvcc into shared objects and
// run by the same long-lived GPU runner as Triton candidates (docs/gpu.md).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "platforms/cuda/cuda_builder.h"
#include "platforms/triton/triton_platform.h"

namespace kernelevolve::platforms::cuda {

/// Builds with CudaBuilder (arch from the runner's device: ArchForCapability) and
/// runs through the GPU runner exactly as TritonPlatform does: the runner loads a
/// `.so` with worker/kernelevolve_worker/cuda_candidate.py, checks it on every seed
/// and edge case, rejects side-stream work, times it interleaved with eager PyTorch
/// and torch.compile, and is replaced after a crash, a timeout or a sticky CUDA
/// error. Candidate contract: docs/gpu.md "CUDA C++" (legacy default stream, return
/// codes, 1000 + cudaError_t after a failed launch).
/// Why --target cuda has no TRITON_INTERPRET=1 mode, and what to use instead; ends the
/// no-GPU error and the CLI's refusal of --target cuda under TRITON_INTERPRET=1.
inline constexpr const char* kNeedsGpuNote =
    "CUDA candidates need a real GPU; use --target triton with TRITON_INTERPRET=1 to check "
    "Triton kernels on the CPU";

class CudaPlatform : public triton::TritonPlatform {
 public:
  /// `cache_dir`: where .cu sources and .so objects go. `nvcc`: see FindNvcc ("" for
  /// $CUDACXX / PATH). Throws InvalidInputError when no GPU is visible (unless
  /// TRITON_INTERPRET=1, where the arch defaults to sm_90a and only host-side code
  /// could run) or nvcc is missing.
  CudaPlatform(std::filesystem::path cache_dir, problem::WorkerOptions runner_options, const std::string& nvcc,
               double prepare_timeout_seconds = 600);

  std::string Name() const override { return "cuda"; }
  BuildResult Build(const core::Candidate& candidate) override;
  /// As TritonPlatform's, with compiler "nvcc <release> -arch=<arch> on <device> ...".
  core::MachineContext Machine() const override;
  const CudaBuilder& Builder() const { return *builder_; }

 private:
  std::unique_ptr<CudaBuilder> builder_;
};

}  // namespace kernelevolve::platforms::cuda
