// Cache flushing between timed calls: every timed call starts with cold caches, so a
// kernel is not credited for inputs left in cache by its previous call (Triton's
// do_bench flushes L2 the same way on GPUs). Also the last-level-cache size it needs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace kernelevolve::platforms::cpu {

/// Used when sysfs names no cache: 32 MiB, the L3 of the 2-vCPU development VM
/// (/sys/devices/system/cpu/cpu0/cache/index3/size = 32768K) and a common server L3.
inline constexpr int64_t kFallbackLastLevelCacheBytes = 32LL << 20;

/// Default sysfs folder holding index0/, index1/, ... (Linux ABI, Documentation/ABI/
/// testing/sysfs-devices-system-cpu, "cache/index*/{level,size,type}").
inline const std::filesystem::path kSysfsCacheDir = "/sys/devices/system/cpu/cpu0/cache";

/// Parses a sysfs cache "size" text: "32768K" -> 33554432, "1M", "512" (bytes);
/// suffixes K, M, G are powers of 1024; surrounding whitespace ignored. nullopt for
/// anything else (empty, negative, unknown suffix, trailing garbage).
std::optional<int64_t> ParseCacheSizeText(const std::string& text);

/// The last-level cache: the largest "size" among the index*/ entries with the highest
/// "level" (Data/Unified only; an Instruction cache is skipped). `source` says where the
/// number comes from, e.g. "/sys/devices/system/cpu/cpu0/cache/index3/size (level 3)" or
/// "fallback 32 MiB (no readable cache entry under ...)". Never throws.
struct LastLevelCache {
  int64_t bytes = kFallbackLastLevelCacheBytes;
  std::string source;
};
LastLevelCache ReadLastLevelCache(const std::filesystem::path& cache_dir = kSysfsCacheDir);

/// A buffer of `bytes` that Flush() writes completely (a new byte value each time), so
/// that every line of a cache of bytes / 2 or less is evicted by write-allocated lines
/// of the buffer. Allocates at construction (not under the seccomp filter's watch:
/// malloc/mmap are allowed anyway). Throws std::bad_alloc when memory runs out.
class CacheFlusher {
 public:
  explicit CacheFlusher(int64_t bytes);
  /// Writes the whole buffer; ~bytes / (write bandwidth): about 5-10 ms for 64 MiB.
  void Flush();
  int64_t Bytes() const { return bytes_; }

 private:
  int64_t bytes_;
  std::unique_ptr<unsigned char[]> buffer_;
  unsigned char value_ = 0;
};

}  // namespace kernelevolve::platforms::cpu
