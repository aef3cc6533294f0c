// Guard pages and canaries around every tensor buffer the CPU harness hands to a
// kernel, so a write outside a buffer is caught (docs/fitness.md, "out of bounds").
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace kernelevolve::platforms::cpu {

/// One tensor buffer inside its own mmap'ed region:
///
///   [guard page][front canary | data (bytes) | back canary][guard page]
///
/// The data starts 64-byte aligned and ends at most 63 bytes before the back guard
/// page (the region between the end of the data and the next 64-byte boundary, and
/// the rest of the first data page before the start, are canary bytes). The guard pages
/// are PROT_NONE: any access there raises SIGSEGV, which the handler installed by
/// InstallGuardFaultHandler turns into a rejected_by_check verdict naming the tensor.
/// Move-only; the region is unmapped on destruction.
class GuardedBuffer {
 public:
  /// Maps a region for `bytes` bytes (0 allowed: 64 data bytes are mapped anyway) and
  /// registers its guard pages under `name` ("output.0"). Throws std::bad_alloc when
  /// mmap or mprotect fails.
  GuardedBuffer(std::size_t bytes, const std::string& name);
  ~GuardedBuffer();
  GuardedBuffer(GuardedBuffer&& other) noexcept;
  GuardedBuffer& operator=(GuardedBuffer&&) = delete;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  std::byte* Data() const { return data_; }
  std::size_t Bytes() const { return bytes_; }
  /// Rewrites the canary bytes (after a legitimate fill of the data, never needed;
  /// done once at construction).
  void WriteCanaries();
  /// nullopt when both canaries are intact, else "wrote outside <name>: N bytes before
  /// its start changed" / "... after its end changed".
  std::optional<std::string> CheckCanaries() const;

 private:
  std::string name_;
  std::byte* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t front_ = 0;  // canary bytes before data_
  std::size_t back_ = 0;   // canary bytes after data_ + bytes_
};

/// Installs a SIGSEGV/SIGBUS handler (on an alternate signal stack, so it also runs
/// after a stack overflow) that, when the faulting address lies in a registered guard
/// page, writes a rejected_by_check verdict line ("accessed memory outside output.0:
/// past its end (guard page)") to `verdict_fd` and ends the process with exit code 0.
/// A fault anywhere else restores the default action, so the process dies by the signal
/// as before (reported as a crash). Call once, from the main thread, before the kernel
/// runs. `verdict_fd` < 0 disables the verdict (the handler then only re-raises).
void InstallGuardFaultHandler(int verdict_fd);

}  // namespace kernelevolve::platforms::cpu
