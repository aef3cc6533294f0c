#include "core/candidate.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <fmt/format.h>

namespace kernelevolve::core {

std::string ContentHash(const std::string& text) {
  // FNV-1a, 64-bit (Fowler, Noll, Vo; offset basis and prime from the FNV reference).
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
}

std::string FileContentHash(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return "";
  return ContentHash(bytes.str());
}

}  // namespace kernelevolve::core
