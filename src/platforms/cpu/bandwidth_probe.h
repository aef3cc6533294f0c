// The machine's measured peaks for the roofline: STREAM-style copy bandwidth and
// float32 FMA throughput, measured once per (CPU model, thread count) and cached.
//
// Copy: J. D. McCalpin, "Memory Bandwidth and Machine Balance in Current High
// Performance Computers", IEEE TCCA Newsletter, 1995 (the STREAM benchmark): a[i] = b[i]
// over double arrays several times the last-level cache, OpenMP static schedule with
// first-touch initialization by the same threads, best of N runs, bytes counted as
// read + write (2 x 8 bytes per element; no write-allocate traffic counted).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kernelevolve::platforms::cpu {

/// Version of the probe program and cache format; a cache file of another version is
/// measured again.
inline constexpr int kPeakProbeVersion = 1;

/// One measurement of the machine's peaks.
struct MachinePeakRecord {
  std::string cpu_model;            // core::MachineContext::cpu_model
  int threads = 0;                  // OMP_NUM_THREADS of the probe (= the candidates')
  double copy_bandwidth_gbps = 0;   // best copy run, 1e9 bytes/s (read + write)
  double peak_gflops = 0;           // best FMA run, 1e9 FLOP/s (float32, 2 FLOP per FMA)
  int64_t array_bytes = 0;          // bytes of each of the two copy arrays
  int runs = 0;                     // timed runs of each kernel (the best one counts)
  std::string measured_utc;         // "2026-11-30T02:10:00Z"
  std::string compiler;             // the compiler the probe was built with
  int probe_version = kPeakProbeVersion;
};

struct PeakProbeOptions {
  int threads = 1;                  // OMP_NUM_THREADS for the probe (>= 1)
  std::string compiler = "g++";     // program name on PATH, or a path
  /// Where the probe's source and executable are written (created).
  std::filesystem::path work_dir;
  int runs = 10;                    // timed runs per kernel (STREAM's NTIMES default)
  int64_t array_bytes = 0;          // 0: DefaultArrayBytes()
  double timeout_seconds = 120;     // compile and run, each
};

/// STREAM's sizing rule (each array at least 4x the last-level cache, as
/// ReadLastLevelCache in cache_flush.h finds it), at least
/// 64 MiB and at most 512 MiB per array.
int64_t DefaultArrayBytes();

/// Compiles the probe with `<compiler> -std=c++17 -O3 -march=native -fopenmp` (the
/// candidates' flags, plus -ffp-contract=fast so a*b+c becomes an FMA; no -ffast-math)
/// and runs it in a child process with OMP_NUM_THREADS=threads, OMP_PROC_BIND=false
/// (as candidates run). cpu_model is left empty for the caller. Throws core::IoError
/// naming the step (compile, run, output) when the probe cannot be built or run.
MachinePeakRecord MeasureMachinePeaks(const PeakProbeOptions& options);

/// `<cache_dir>/machine_<16 hex digits of ContentHash(cpu_model + "|" + threads)>.json`.
std::filesystem::path PeaksCachePath(const std::filesystem::path& cache_dir,
                                     const std::string& cpu_model, int threads);

nlohmann::json PeakRecordToJson(const MachinePeakRecord& record);
/// Inverse of PeakRecordToJson. Throws core::InvalidInputError naming the field when
/// a field is missing or has the wrong type.
MachinePeakRecord PeakRecordFromJson(const nlohmann::json& doc);

/// The cached record at `path` when it exists, parses, has kPeakProbeVersion and
/// matches `cpu_model` and `threads`; nullopt otherwise (never throws).
std::optional<MachinePeakRecord> ReadPeaksCache(const std::filesystem::path& path,
                                                const std::string& cpu_model, int threads);
/// Writes `record` to `path` atomically (temp file + rename; parent created). Throws
/// core::IoError.
void WritePeaksCache(const std::filesystem::path& path, const MachinePeakRecord& record);

/// The cached record for (cpu_model, options.threads) under `cache_dir`, or, when it is
/// missing, stale (other version) or `remeasure` is set, a new measurement (written to
/// the cache). `measured_now` (when not null) tells which. Throws core::IoError as
/// MeasureMachinePeaks does.
MachinePeakRecord LoadOrMeasurePeaks(const std::filesystem::path& cache_dir,
                                     const std::string& cpu_model, PeakProbeOptions options,
                                     bool remeasure, bool* measured_now = nullptr);

}  // namespace kernelevolve::platforms::cpu
