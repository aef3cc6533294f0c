#include "core/cpu_isa.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kernelevolve::core {
namespace {

CpuIsa Probe() {
  CpuIsa isa;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  // GCC >= 12 and clang >= 14 know the psABI level names.
  if (__builtin_cpu_supports("x86-64-v4")) {
    isa.level = "x86-64-v4";
    isa.vector_bits = 512;
  } else if (__builtin_cpu_supports("x86-64-v3")) {
    isa.level = "x86-64-v3";
    isa.vector_bits = 256;
  } else if (__builtin_cpu_supports("x86-64-v2")) {
    isa.level = "x86-64-v2";
  } else {
    isa.level = "x86-64";
  }
  struct Feature {
    const char* name;
    bool present;
  };
  const Feature features[] = {
      {"sse4_2", __builtin_cpu_supports("sse4.2") != 0},
      {"avx", __builtin_cpu_supports("avx") != 0},
      {"avx2", __builtin_cpu_supports("avx2") != 0},
      {"fma", __builtin_cpu_supports("fma") != 0},
      {"f16c", __builtin_cpu_supports("f16c") != 0},
      {"avx512f", __builtin_cpu_supports("avx512f") != 0},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
      {"avx512dq", __builtin_cpu_supports("avx512dq") != 0},
      {"avx512vnni", __builtin_cpu_supports("avx512vnni") != 0},
      {"avx512bf16", __builtin_cpu_supports("avx512bf16") != 0},
  };
  for (const auto& f : features) {
    if (f.present) isa.features.emplace_back(f.name);
  }
#elif defined(__aarch64__)
  isa.level = "aarch64";  // NEON: 128-bit vectors
#else
  isa.level = "unknown";
#endif
  return isa;
}

}  // namespace

std::string CpuIsa::Text() const {
  // Only the features that tell the levels apart in a line a person reads.
  std::vector<std::string> shown;
  for (const auto& f : features) {
    if (f == "avx2" || f == "fma" || f == "avx512f" || f == "avx512bf16") shown.push_back(f);
  }
  if (shown.empty()) return fmt::format("{} ({}-bit vectors)", level, vector_bits);
  return fmt::format("{} ({}, {}-bit vectors)", level, fmt::join(shown, " "), vector_bits);
}

const CpuIsa& HostCpuIsa() {
  static const CpuIsa isa = Probe();
  return isa;
}

nlohmann::json CpuIsaToJson(const CpuIsa& isa) {
  return {{"level", isa.level}, {"features", isa.features}, {"vector_bits", isa.vector_bits}};
}

}  // namespace kernelevolve::core
