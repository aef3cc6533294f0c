#include "platforms/cpu/bandwidth_probe.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/candidate.h"
#include "core/error.h"
#include "eval/sandbox.h"
#include "platforms/cpu/cache_flush.h"
#include "platforms/native_build.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

// The probe program. argv: array bytes, runs. Prints one JSON line on stdout:
// {"copy_gbps", "peak_gflops", "threads", "array_bytes", "runs"}.
// Copy: STREAM's kernel over doubles, first touch by the timing threads, one untimed
// warm-up run. FMA: per thread, kChains independent vector accumulators (enough to
// cover FMA latency x issue width on current x86 and Arm cores), 2 FLOP per lane.
constexpr const char* kProbeSource = R"cpp(
#include <omp.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <algorithm>

#if defined(__AVX512F__)
constexpr int kBytes = 64;
#elif defined(__AVX__)
constexpr int kBytes = 32;
#else
constexpr int kBytes = 16;
#endif
typedef float vf __attribute__((vector_size(kBytes)));
constexpr int kLanes = kBytes / 4;
constexpr int kChains = 12;
constexpr long kIters = 2000000;

static float FmaBlock(float seed) {
  vf acc[kChains];
  for (int c = 0; c < kChains; ++c) for (int l = 0; l < kLanes; ++l) acc[c][l] = seed + 1e-3f * (c * kLanes + l);
  vf m, k;
  for (int l = 0; l < kLanes; ++l) { m[l] = 0.9999999f; k[l] = 1e-7f; }
  for (long it = 0; it < kIters; ++it) {
#define KE_STEP(c) acc[c] = acc[c] * m + k;
    KE_STEP(0) KE_STEP(1) KE_STEP(2) KE_STEP(3) KE_STEP(4) KE_STEP(5)
    KE_STEP(6) KE_STEP(7) KE_STEP(8) KE_STEP(9) KE_STEP(10) KE_STEP(11)
  }
  float s = 0;
  for (int c = 0; c < kChains; ++c) for (int l = 0; l < kLanes; ++l) s += acc[c][l];
  return s;
}

int main(int argc, char** argv) {
  if (argc != 3) { std::fprintf(stderr, "usage: probe ARRAY_BYTES RUNS\n"); return 2; }
  const size_t n = std::strtoull(argv[1], nullptr, 10) / sizeof(double);
  const int runs = std::atoi(argv[2]);
  double* a = static_cast<double*>(std::aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64));
  double* b = static_cast<double*>(std::aligned_alloc(64, (n * sizeof(double) + 63) / 64 * 64));
  if (!a || !b || n == 0 || runs < 1) { std::fprintf(stderr, "allocation failed\n"); return 3; }
  const long nn = static_cast<long>(n);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < nn; ++i) { a[i] = 0.0; b[i] = 1.0 + (i % 7); }
  double best_copy = 1e30;
  for (int r = 0; r <= runs; ++r) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < nn; ++i) a[i] = b[i];
    double t = omp_get_wtime() - t0;
    if (r > 0) best_copy = std::min(best_copy, t);
  }
  if (a[nn / 2] != b[nn / 2]) { std::fprintf(stderr, "copy check failed\n"); return 4; }
  int threads = 1;
  double best_fma = 1e30;
  float sink = 0;
  for (int r = 0; r <= runs; ++r) {
    double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : sink)
    {
#pragma omp single
      threads = omp_get_num_threads();
      sink += FmaBlock(0.5f + omp_get_thread_num());
    }
    double t = omp_get_wtime() - t0;
    if (r > 0) best_fma = std::min(best_fma, t);
  }
  const double copy_gbps = 2.0 * sizeof(double) * n / best_copy / 1e9;
  const double flops = 2.0 * kLanes * kChains * static_cast<double>(kIters) * threads;
  std::printf("{\"copy_gbps\": %.6g, \"peak_gflops\": %.6g, \"threads\": %d, \"array_bytes\": %zu, "
              "\"runs\": %d, \"sink\": %.3g}\n",
              copy_gbps, flops / best_fma / 1e9, threads, n * sizeof(double), runs, static_cast<double>(sink));
  std::free(a);
  std::free(b);
  return 0;
}
)cpp";

std::string ResolveCompiler(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path_env = std::getenv("PATH");
  std::stringstream path(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(path, dir, ':')) {
    if (!dir.empty() && access((fs::path(dir) / program).c_str(), X_OK) == 0) return (fs::path(dir) / program).string();
  }
  throw core::IoError(fmt::format("bandwidth probe: compiler '{}' not found on PATH", program));
}

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string Tail(const std::string& text) { return text.size() > 400 ? text.substr(text.size() - 400) : text; }

/// Compiles the probe into work_dir; returns the executable's path.
fs::path BuildProbe(const PeakProbeOptions& o, const std::string& compiler) {
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  if (ec) throw core::IoError(fmt::format("bandwidth probe: cannot create {}: {}", o.work_dir.string(), ec.message()));
  // A probe killed midway (with the process that ran it) leaves its files: named as the
  // build cache's temporaries, the next probe's sweep removes them.
  SweepStaleTemporaries(o.work_dir);
  const std::string stem = fmt::format("peak_probe_v{}.tmp.{}.0", kPeakProbeVersion, getpid());
  const fs::path source = o.work_dir / (stem + ".cpp");
  const fs::path binary = o.work_dir / stem;
  {
    std::ofstream out(source);
    out << kProbeSource;
    if (!out.flush()) throw core::IoError("bandwidth probe: cannot write " + source.string());
  }
  eval::SandboxLimits limits;
  limits.wall_timeout_seconds = o.timeout_seconds;
  limits.memory_bytes = 8LL << 30;
  limits.isolate_network = false;
  const std::string dir = fs::path(compiler).parent_path().string();
  auto result = eval::RunSandboxed(
      {compiler, "-std=c++17", "-O3", "-march=native", "-fopenmp", "-ffp-contract=fast", source.string(), "-o",
       binary.string()},
      // TMPDIR in work_dir: a compile killed midway leaves its cc*.s there, not in /tmp.
      {{"PATH", dir + ":/usr/local/bin:/usr/bin:/bin"}, {"LC_ALL", "C"}, {"TMPDIR", o.work_dir.string()}}, o.work_dir,
      limits);
  fs::remove(source, ec);
  if (result.timed_out || result.exit_code != 0) {
    throw core::IoError(fmt::format("bandwidth probe: compiling with {} failed (exit {}): {}", compiler,
                                    result.exit_code, Tail(result.stderr_text)));
  }
  return binary;
}

}  // namespace

int64_t DefaultArrayBytes() {
  return std::clamp<int64_t>(4 * ReadLastLevelCache().bytes, 64LL << 20, 512LL << 20);
}

MachinePeakRecord MeasureMachinePeaks(const PeakProbeOptions& options) {
  PeakProbeOptions o = options;
  o.threads = std::max(1, o.threads);
  if (o.array_bytes <= 0) o.array_bytes = DefaultArrayBytes();
  if (o.work_dir.empty()) o.work_dir = fs::temp_directory_path();
  const std::string compiler = ResolveCompiler(o.compiler);
  const fs::path binary = BuildProbe(o, compiler);

  eval::SandboxLimits limits;
  limits.wall_timeout_seconds = o.timeout_seconds;
  limits.memory_bytes = 2 * o.array_bytes + (1LL << 30);
  limits.cpu_seconds = static_cast<int64_t>(2 * o.threads * o.timeout_seconds + 10);
  limits.isolate_network = false;
  auto result = eval::RunSandboxed(
      {binary.string(), std::to_string(o.array_bytes), std::to_string(o.runs)},
      {{"OMP_NUM_THREADS", std::to_string(o.threads)}, {"OMP_PROC_BIND", "false"}, {"PATH", "/usr/bin:/bin"}},
      o.work_dir, limits);
  std::error_code ec;
  fs::remove(binary, ec);
  if (result.timed_out || result.signal != 0 || result.exit_code != 0) {
    throw core::IoError(fmt::format("bandwidth probe: the probe run failed ({}): {}",
                                    result.timed_out ? "timed out" : fmt::format("exit {}, signal {}", result.exit_code, result.signal),
                                    Tail(result.stderr_text)));
  }
  nlohmann::json doc = nlohmann::json::parse(result.stdout_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("copy_gbps") || !doc.contains("peak_gflops")) {
    throw core::IoError("bandwidth probe: unreadable output: " + Tail(result.stdout_text));
  }
  MachinePeakRecord record;
  record.threads = o.threads;
  record.copy_bandwidth_gbps = doc["copy_gbps"].get<double>();
  record.peak_gflops = doc["peak_gflops"].get<double>();
  record.array_bytes = o.array_bytes;
  record.runs = o.runs;
  record.measured_utc = UtcNow();
  record.compiler = compiler;
  return record;
}

fs::path PeaksCachePath(const fs::path& cache_dir, const std::string& cpu_model, int threads) {
  const std::string hash = core::ContentHash(cpu_model + "|" + std::to_string(threads));
  return cache_dir / fmt::format("machine_{}.json", hash.substr(0, 16));
}

nlohmann::json PeakRecordToJson(const MachinePeakRecord& r) {
  return {{"cpu_model", r.cpu_model},     {"threads", r.threads},
          {"copy_bandwidth_gbps", r.copy_bandwidth_gbps}, {"peak_gflops", r.peak_gflops},
          {"array_bytes", r.array_bytes}, {"runs", r.runs},
          {"measured_utc", r.measured_utc}, {"compiler", r.compiler},
          {"probe_version", r.probe_version}};
}

MachinePeakRecord PeakRecordFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) throw core::InvalidInputError("machine peaks: expected a JSON object");
  auto field = [&](const char* key) -> const nlohmann::json& {
    if (!doc.contains(key)) throw core::InvalidInputError(fmt::format("machine peaks: field '{}' is missing", key));
    return doc.at(key);
  };
  MachinePeakRecord r;
  try {
    r.cpu_model = field("cpu_model").get<std::string>();
    r.threads = field("threads").get<int>();
    r.copy_bandwidth_gbps = field("copy_bandwidth_gbps").get<double>();
    r.peak_gflops = field("peak_gflops").get<double>();
    r.array_bytes = field("array_bytes").get<int64_t>();
    r.runs = field("runs").get<int>();
    r.measured_utc = field("measured_utc").get<std::string>();
    r.compiler = field("compiler").get<std::string>();
    r.probe_version = field("probe_version").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw core::InvalidInputError(fmt::format("machine peaks: a field has the wrong type: {}", e.what()));
  }
  return r;
}

std::optional<MachinePeakRecord> ReadPeaksCache(const fs::path& path, const std::string& cpu_model, int threads) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) return std::nullopt;
  try {
    MachinePeakRecord r = PeakRecordFromJson(doc);
    if (r.probe_version != kPeakProbeVersion || r.cpu_model != cpu_model || r.threads != threads) return std::nullopt;
    if (r.copy_bandwidth_gbps <= 0) return std::nullopt;
    return r;
  } catch (const core::InvalidInputError&) {
    return std::nullopt;
  }
}

void WritePeaksCache(const fs::path& path, const MachinePeakRecord& record) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  fs::path tmp = path;
  tmp += fmt::format(".tmp{}", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << PeakRecordToJson(record).dump(2) << "\n";
    if (!out.flush()) throw core::IoError("cannot write " + tmp.string());
  }
  fs::rename(tmp, path, ec);
  if (ec) throw core::IoError(fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), ec.message()));
}

MachinePeakRecord LoadOrMeasurePeaks(const fs::path& cache_dir, const std::string& cpu_model,
                                     PeakProbeOptions options, bool remeasure, bool* measured_now) {
  options.threads = std::max(1, options.threads);
  const fs::path path = PeaksCachePath(cache_dir, cpu_model, options.threads);
  if (!remeasure) {
    if (auto cached = ReadPeaksCache(path, cpu_model, options.threads)) {
      if (measured_now != nullptr) *measured_now = false;
      return *cached;
    }
  }
  if (options.work_dir.empty()) options.work_dir = cache_dir / "scratch";
  MachinePeakRecord record = MeasureMachinePeaks(options);
  record.cpu_model = cpu_model;
  WritePeaksCache(path, record);
  if (measured_now != nullptr) *measured_now = true;
  return record;
}

}  // namespace kernelevolve::platforms::cpu
