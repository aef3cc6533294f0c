// Tensor buffers and the guarded kernel call used by the CPU harness.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor_spec.h"
#include "eval/safetensors.h"
#include "platforms/cpu/harness_guard.h"
#include "platforms/cpu/candidate_abi.h"

namespace kernelevolve::platforms::cpu {

/// Alignment of every buffer handed to a kernel: one cache line (64 bytes on x86-64
/// and most AArch64 parts), so aligned vector loads of any width up to AVX-512 work.
inline constexpr std::size_t kBufferAlignment = 64;

/// `bytes` bytes from posix_memalign(kBufferAlignment) (at least one cache line, so
/// 0-element tensors still get a valid pointer). Throws std::bad_alloc on failure.
std::unique_ptr<std::byte, void (*)(void*)> AllocateAligned(std::size_t bytes);

/// One buffer per spec, 64-byte aligned, each a GuardedBuffer (guard pages and canaries
/// around it, harness_guard.h), with DLTensor views (device kDLCPU, strides NULL,
/// byte_offset 0). The views point into this object: keep it alive while the kernel runs.
class TensorSet {
 public:
  explicit TensorSet(const std::vector<core::TensorSpec>& specs);

  int32_t Count() const { return static_cast<int32_t>(views_.size()); }
  DLTensor* Views() { return views_.data(); }
  const core::TensorSpec& Spec(int i) const { return specs_[static_cast<std::size_t>(i)]; }
  std::byte* Data(int i) { return static_cast<std::byte*>(views_[static_cast<std::size_t>(i)].data); }
  std::size_t NumBytes(int i) const { return static_cast<std::size_t>(Spec(i).NumBytes()); }

  /// Copies a fixture tensor into buffer `i`. Throws InvalidInputError when its dtype
  /// or shape differs from the spec (a fixture inconsistent with its manifest).
  void CopyFrom(int i, const eval::HostTensor& tensor);
  /// Fills every buffer with a value no correct kernel leaves behind: NaN (all bits
  /// set) for float dtypes, bytes 0x5A for integer and bool dtypes.
  void FillPoison();
  /// The same poison written into `views` (Count() tensors shaped like this set's), e.g.
  /// freshly allocated drop-in outputs.
  void FillPoison(DLTensor* views) const;
  /// Buffer `i` as a HostTensor (a copy), for comparison with the reference.
  eval::HostTensor ToHost(int i) const;
  /// nullopt when every buffer's canaries are intact, else the first
  /// "wrote outside <name>: ..." reason (GuardedBuffer::CheckCanaries).
  std::optional<std::string> CheckCanaries() const;
  /// True when buffer `i` holds exactly `tensor`'s bytes.
  bool Equals(int i, const eval::HostTensor& tensor) const;

 private:
  std::vector<core::TensorSpec> specs_;
  std::vector<GuardedBuffer> buffers_;
  std::vector<DLTensor> views_;
};

/// Calls the entry point. Returns nullopt on success, else a one-line reason
/// ("kernel returned 7", "kernel threw std::runtime_error: ..."). A std::bad_alloc
/// from the kernel ends the process as out of memory (exit code 3, see HarnessMain).
std::optional<std::string> CallEntry(EntryFn entry, TensorSet& inputs, DLTensor* outputs,
                                     int32_t num_outputs);

/// Prints "out of memory" to stderr and ends the process with exit code 3, the code
/// CpuPlatform maps to kOutOfMemory. Async-signal-safe.
[[noreturn]] void ExitOutOfMemory();

}  // namespace kernelevolve::platforms::cpu
