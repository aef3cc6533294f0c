#include "platforms/triton/triton_platform.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "eval/result_json.h"
#include "eval/timing_stats.h"
#include "problem/problem_loader.h"

namespace kernelevolve::platforms::triton {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxLogBytes = 4 * 1024;  // platform.h: log excerpt
constexpr double kRunSlackSeconds = 10;         // JSON transfer, fixture cloning

RunResult Failure(core::Status status, std::string message) {
  RunResult result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

core::TimingStats StatsOf(const json& samples, const char* name) {
  if (!samples.is_object() || !samples.contains(name)) return {};
  return eval::Summarize(samples.at(name).get<std::vector<double>>());
}

void WriteFileAtomic(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw core::IoError("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw core::IoError("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
}

/// The peaks cache ({device name: {"copy_gbps", "matmul_tflops", ...}}); an absent
/// or damaged file reads as empty (measured again).
json ReadPeaksCache(const fs::path& cache) {
  if (std::ifstream in(cache); in) {
    try {
      json doc = json::parse(in);
      if (doc.is_object()) return doc;
    } catch (const json::exception&) {
    }
  }
  return json::object();
}

}  // namespace

core::Status LostRunnerStatus(const std::string& message) {
  return message.find("did not answer") != std::string::npos ? core::Status::kTimeout : core::Status::kCrash;
}

RunResult RunResultFromRunner(const json& answer) {
  RunResult result;
  try {
    result.status = core::StatusFromName(answer.at("status").get<std::string>());
    result.message = answer.value("message", "");
    result.correct = answer.value("correct", false);
    for (const auto& check : answer.value("checks", json::array())) {
      result.checks.push_back(eval::OutputCheckFromJson(check));
    }
    const json samples = answer.value("samples_us", json::object());
    result.kernel_only = StatsOf(samples, "candidate");
    result.latency = StatsOf(samples, "candidate_dropin");
    std::string log = answer.value("traceback", "");
    const std::string note = answer.value("timing_note", "");
    if (!note.empty()) log = note + "\n" + log;
    result.log_excerpt = eval::Utf8Tail(log, kMaxLogBytes);
  } catch (const json::exception& e) {
    throw core::InvalidInputError(std::string("gpu_run: malformed answer: ") + e.what());
  }
  return result;
}

TritonPlatform::TritonPlatform(fs::path cache_dir, problem::WorkerOptions runner_options,
                               double prepare_timeout_seconds)
    : cache_dir_(std::move(cache_dir)),
      prepare_timeout_seconds_(prepare_timeout_seconds),
      runner_(std::move(runner_options)) {
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec) throw core::IoError("cannot create " + cache_dir_.string() + ": " + ec.message());
}

BuildResult TritonPlatform::Build(const core::Candidate& candidate) {
  BuildResult build;
  build.source_hash = core::ContentHash(candidate.source + "\ntriton " + runner_.Device().triton_version);
  if (candidate.source.find("kernelevolve_entry") == std::string::npos) {
    build.status = core::Status::kCompileError;
    build.message = "the module defines no kernelevolve_entry(inputs, outputs) launcher";
    return build;
  }
  build.artifact = cache_dir_ / (build.source_hash + ".py");
  build.cache_hit = fs::exists(build.artifact);
  if (!build.cache_hit) WriteFileAtomic(build.artifact, candidate.source);
  build.status = core::Status::kOk;
  build.message = "ok";
  return build;
}

void TritonPlatform::PrepareFor(const core::Problem& problem) {
  runner_.Prepare(fs::absolute(problem.fixtures_dir / "manifest.json"), true, prepare_timeout_seconds_);
}

json TritonPlatform::TimingParams(const RunOptions& options) const {
  return {{"warmup_seconds", options.warmup_seconds},
          {"min_time_seconds", options.min_time_seconds},
          {"min_repetitions", options.min_repetitions},
          {"max_repetitions", options.max_repetitions}};
}

RunResult TritonPlatform::Run(const BuildResult& build, const core::Problem& problem, const RunOptions& options) {
  if (build.status != core::Status::kOk) {
    RunResult result = Failure(build.status, "not run: " + build.message);
    result.log_excerpt = eval::Utf8Tail(build.log, kMaxLogBytes);
    return result;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto start = std::chrono::steady_clock::now();
  json params = TimingParams(options);
  params["candidate_path"] = fs::absolute(build.artifact).string();
  params["measure"] = options.measure;
  RunResult result;
  try {
    PrepareFor(problem);
    const json answer = runner_.Call("gpu_run", params, options.timeout_seconds + kRunSlackSeconds);
    result = RunResultFromRunner(answer);
    if (answer.value("cuda_error", false)) {
      result.message += " (sticky CUDA error: the GPU runner was replaced)";
      runner_.Restart();
    }
    const json samples = answer.value("samples_us", json::object());
    if (result.correct && result.latency.Measured()) {
      last_paired_.eager = StatsOf(samples, "eager");
      last_paired_.compile = StatsOf(samples, "compile");
      last_paired_.notes = runner_.PrepareNotes();
    }
  } catch (const problem::WorkerLostError& e) {
    result = Failure(LostRunnerStatus(e.what()), std::string("GPU runner lost: ") + e.what());
    if (result.status == core::Status::kTimeout) {
      // Compile, checks and timing together ran past the candidate's limit: say which
      // flag raises it (the Triton interpreter and GPU-sized problems often need more).
      result.message += fmt::format(
          "; compiling, checking and timing this candidate took over --candidate-timeout ({:.0f} s): "
          "raise it for TRITON_INTERPRET runs or large sizes",
          options.timeout_seconds);
    }
    runner_.Restart();
  } catch (const problem::WorkerError& e) {
    // The runner refused (e.g. poisoned by an earlier error): not the candidate's fault.
    result = Failure(core::Status::kWorkerLost, std::string("GPU runner error: ") + e.what());
    result.log_excerpt = eval::Utf8Tail(e.traceback(), kMaxLogBytes);
    runner_.Restart();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

GpuBaselines TritonPlatform::TimeBaselines(const core::Problem& problem, const RunOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  PrepareFor(problem);
  json answer;
  try {
    answer = runner_.Call("gpu_time_baselines", TimingParams(options), prepare_timeout_seconds_);
  } catch (const problem::WorkerError& e) {
    // Only the reference runs here: its exception is the problem file's fault.
    if (e.kind() == "problem_error") throw problem::ProblemError(e.what(), e.traceback());
    throw;
  }
  GpuBaselines baselines;
  const json samples = answer.value("samples_us", json::object());
  baselines.eager = StatsOf(samples, "eager");
  baselines.compile = StatsOf(samples, "compile");
  baselines.notes = runner_.PrepareNotes();
  baselines.prepare_phases.AddParts("gpu_prepare", runner_.PreparePhaseSeconds());
  return baselines;
}

json TritonPlatform::CallForProblem(const core::Problem& problem, const std::string& method, const json& params,
                                    double timeout_seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    PrepareFor(problem);
    return runner_.Call(method, params, timeout_seconds);
  } catch (const problem::WorkerLostError&) {
    runner_.Restart();
    throw;
  }
}

GpuBaselines TritonPlatform::LastPairedBaselines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_paired_;
}

double TritonPlatform::CopyBandwidthGbps() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!runner_.Device().cuda) return 0;
  const fs::path cache = cache_dir_ / "gpu_peaks.json";
  json doc = ReadPeaksCache(cache);
  const std::string key = runner_.Device().device_name;
  if (doc.contains(key) && doc[key].value("copy_gbps", 0.0) > 0) return doc[key]["copy_gbps"].get<double>();
  const json answer = runner_.CallUnprepared("gpu_bandwidth", json::object(), 120);
  const double gbps = answer.at("copy_gbps").get<double>();
  doc[key]["copy_gbps"] = gbps;
  doc[key]["bytes"] = answer.value("bytes", 0);
  doc[key]["method"] = "torch device copy, median of 20";
  WriteFileAtomic(cache, doc.dump(2) + "\n");
  return gbps;
}

std::map<std::string, double> TritonPlatform::MatmulPeakTflops() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!runner_.Device().cuda || !matmul_peaks_.empty()) return matmul_peaks_;
  const fs::path cache = cache_dir_ / "gpu_peaks.json";
  json doc = ReadPeaksCache(cache);
  const std::string key = runner_.Device().device_name;
  if (doc.contains(key) && doc[key].contains("matmul_tflops") && doc[key]["matmul_tflops"].is_object()) {
    for (const auto& [dtype, value] : doc[key]["matmul_tflops"].items()) {
      if (value.is_number() && value.get<double>() > 0) matmul_peaks_[dtype] = value.get<double>();
    }
    if (!matmul_peaks_.empty()) return matmul_peaks_;
  }
  const json answer = runner_.CallUnprepared("gpu_matmul_peak", json::object(), 300);
  for (const auto& [dtype, value] : answer.at("tflops").items()) matmul_peaks_[dtype] = value.get<double>();
  doc[key]["matmul_tflops"] = answer.at("tflops");
  doc[key]["matmul_method"] = answer.value("method", "");
  WriteFileAtomic(cache, doc.dump(2) + "\n");
  return matmul_peaks_;
}

core::MachineContext TritonPlatform::Machine() const {
  core::MachineContext machine = core::ProbeLocalMachine();
  const GpuDeviceInfo& d = runner_.Device();
  machine.compiler = d.cuda ? fmt::format("triton {} on {} (sm {}, {} SMs, L2 {} MiB)", d.triton_version,
                                          d.device_name, d.capability, d.sm_count, d.l2_bytes >> 20)
                           : fmt::format("triton {} under TRITON_INTERPRET=1 (CPU, timings meaningless)",
                                         d.triton_version);
  machine.torch_version = d.torch_version;
  return machine;
}

}  // namespace kernelevolve::platforms::triton
