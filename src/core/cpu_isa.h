// The instruction set of the machine candidates are compiled for and run on.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kernelevolve::core {

/// What `-march=native` can use on this CPU, read through CPUID by the compiler's
/// runtime (GCC's __builtin_cpu_supports).
struct CpuIsa {
  /// The x86-64 microarchitecture level of the System V psABI (x86-64 psABI 1.0,
  /// section 3.1.1 "Processor Architecture"): "x86-64-v4" (AVX-512 F, BW, CD, DQ, VL),
  /// "x86-64-v3" (AVX, AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE), "x86-64-v2" (SSE3 up to
  /// SSE4.2, POPCNT), "x86-64" (SSE2); on another architecture its name, e.g. "aarch64".
  std::string level;
  /// The vector features that change generated code, in this order when present:
  /// sse4_2 avx avx2 fma f16c avx512f avx512bw avx512vl avx512dq avx512vnni avx512bf16.
  std::vector<std::string> features;
  /// Widest float vector register the level has, in bits: 512 (v4), 256 (v3), 128.
  int vector_bits = 128;

  /// float32 lanes of the widest vector: vector_bits / 32.
  int FloatLanes() const { return vector_bits / 32; }
  /// "x86-64-v3 (avx2 fma, 256-bit vectors)".
  std::string Text() const;
};

/// The running machine's ISA. Cheap (no process is started); the same value for the
/// whole process.
const CpuIsa& HostCpuIsa();

/// {"level": ..., "features": [...], "vector_bits": N}.
nlohmann::json CpuIsaToJson(const CpuIsa& isa);

}  // namespace kernelevolve::core
