#include "platforms/cpu/cache_flush.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> ReadWord(const fs::path& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word)) return std::nullopt;
  return word;
}

}  // namespace

std::optional<int64_t> ParseCacheSizeText(const std::string& text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  if (begin == end) return std::nullopt;
  int64_t value = 0;
  std::size_t i = begin;
  for (; i < end && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (value > (int64_t{1} << 40)) return std::nullopt;  // absurd for a cache
    value = value * 10 + (text[i] - '0');
  }
  if (i == begin) return std::nullopt;
  if (i == end) return value;
  if (i + 1 != end) return std::nullopt;
  switch (text[i]) {
    case 'K': return value << 10;
    case 'M': return value << 20;
    case 'G': return value << 30;
    default: return std::nullopt;
  }
}

LastLevelCache ReadLastLevelCache(const fs::path& cache_dir) {
  LastLevelCache best;
  int best_level = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cache_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0) continue;
    auto type = ReadWord(entry.path() / "type");
    if (type && *type == "Instruction") continue;
    auto level_text = ReadWord(entry.path() / "level");
    auto size_text = ReadWord(entry.path() / "size");
    if (!level_text || !size_text) continue;
    auto size = ParseCacheSizeText(*size_text);
    int level = std::atoi(level_text->c_str());
    if (!size || *size <= 0 || level <= 0) continue;
    if (level > best_level || (level == best_level && *size > best.bytes)) {
      best_level = level;
      best.bytes = *size;
      best.source = fmt::format("{} (level {})", (entry.path() / "size").string(), level);
    }
  }
  if (best_level < 0) {
    best.bytes = kFallbackLastLevelCacheBytes;
    best.source = fmt::format("fallback {} MiB (no readable cache entry under {})",
                              kFallbackLastLevelCacheBytes >> 20, cache_dir.string());
  }
  return best;
}

CacheFlusher::CacheFlusher(int64_t bytes)
    : bytes_(bytes > 0 ? bytes : 1), buffer_(new unsigned char[static_cast<std::size_t>(bytes_)]) {}

void CacheFlusher::Flush() {
  ++value_;
  std::memset(buffer_.get(), value_, static_cast<std::size_t>(bytes_));
  // The buffer escapes: the compiler may not drop the stores as dead.
  asm volatile("" : : "r"(buffer_.get()) : "memory");
}

}  // namespace kernelevolve::platforms::cpu
