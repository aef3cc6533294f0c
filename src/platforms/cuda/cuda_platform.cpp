#include "platforms/cuda/cuda_platform.h"

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::platforms::cuda {

namespace {

/// The runner client names --target triton in its errors; this is --target cuda, and
/// its TRITON_INTERPRET=1 hint (triton::kInterpretHint) does not apply: CUDA kernels
/// need a real GPU.
std::string Retargeted(std::string message) {
  const std::string hint = triton::kInterpretHint;
  if (auto at = message.find(hint); at != std::string::npos) message.erase(at, hint.size());
  const std::string from = "--target triton";
  for (auto at = message.find(from); at != std::string::npos; at = message.find(from, at)) {
    message.replace(at, from.size(), "--target cuda");
  }
  if (message.find("no CUDA GPU") != std::string::npos) message += " (" + std::string(kNeedsGpuNote) + ")";
  return message;
}

}  // namespace

CudaPlatform::CudaPlatform(std::filesystem::path cache_dir, problem::WorkerOptions runner_options,
                           const std::string& nvcc, double prepare_timeout_seconds) try
    : TritonPlatform(cache_dir, std::move(runner_options), prepare_timeout_seconds),
      builder_(std::make_unique<CudaBuilder>(cache_dir, nvcc, ArchForCapability(Device().capability))) {
} catch (const core::InvalidInputError& e) {
  throw core::InvalidInputError(Retargeted(e.what()));
}

BuildResult CudaPlatform::Build(const core::Candidate& candidate) { return builder_->Build(candidate); }

core::MachineContext CudaPlatform::Machine() const {
  core::MachineContext machine = TritonPlatform::Machine();
  const auto& d = Device();
  machine.compiler = fmt::format("nvcc ({}) -arch={} on {} (sm {}, {} SMs, L2 {} MiB){}", builder_->Version(),
                                 builder_->Arch(), d.device_name, d.capability, d.sm_count, d.l2_bytes >> 20,
                                 d.cuda ? "" : " [no GPU: TRITON_INTERPRET=1, timings meaningless]");
  return machine;
}

}  // namespace kernelevolve::platforms::cuda
