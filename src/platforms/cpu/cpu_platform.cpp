#include "platforms/cpu/cpu_platform.h"

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "eval/result_json.h"
#include "platforms/cpu/cache_flush.h"
#include "platforms/cpu/degraded_probe.h"
#include "platforms/cpu/harness.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxLogExcerptBytes = 4 * 1024;  // platform.h: stderr tail
constexpr int kOutOfMemoryExitCode = 3;                 // harness.h: ExitOutOfMemory
constexpr double kCpuSlackSeconds = 10;                 // startup, fixture reading

RunResult Failure(core::Status status, std::string message) {
  RunResult result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

/// The last non-empty line of `text`, or "".
std::string LastLine(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  std::size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

std::optional<RunResult> ParseVerdict(const std::string& stdout_text) {
  std::string line = LastLine(stdout_text);
  if (line.empty() || line.front() != '{') return std::nullopt;
  try {
    return HarnessVerdictFromJson(nlohmann::json::parse(line));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool MentionsOutOfMemory(const std::string& text) {
  return text.find("out of memory") != std::string::npos || text.find("bad_alloc") != std::string::npos;
}

}  // namespace

std::string SignalName(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGTERM: return "SIGTERM";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "signal " + std::to_string(signal);
  }
}

RunResult InterpretHarnessOutcome(const eval::SandboxResult& outcome, double timeout_seconds) {
  std::optional<RunResult> verdict = ParseVerdict(outcome.stdout_text);
  RunResult result;
  if (outcome.timed_out) {
    result = Failure(core::Status::kTimeout, fmt::format("exceeded the wall-clock limit of {:g} s", timeout_seconds));
  } else if (outcome.signal == SIGXCPU) {
    result = Failure(core::Status::kTimeout, "exceeded the CPU-time limit (SIGXCPU)");
  } else if (outcome.exit_code == kOutOfMemoryExitCode ||
             (!verdict && (outcome.signal != 0 || outcome.exit_code != 0) && MentionsOutOfMemory(outcome.stderr_text))) {
    result = Failure(core::Status::kOutOfMemory, "out of memory (allocation failed under the memory limit)");
  } else if (outcome.signal == SIGSYS) {
    result = Failure(core::Status::kRejectedByCheck,
                     "killed by SIGSYS: a system call the sandbox forbids (e.g. a 32-bit int 0x80 call)");
  } else if (outcome.signal != 0) {
    result = Failure(core::Status::kCrash, "killed by " + SignalName(outcome.signal));
  } else if (verdict) {
    result = std::move(*verdict);
  } else {
    std::string tail = LastLine(outcome.stderr_text);
    result = Failure(core::Status::kWorkerLost,
                     fmt::format("harness exited with code {} without a verdict{}", outcome.exit_code,
                                 tail.empty() ? "" : ": " + eval::Utf8Tail(tail, 300)));
  }
  result.log_excerpt = eval::Utf8Tail(outcome.stderr_text, kMaxLogExcerptBytes);
  result.seconds = outcome.wall_seconds;
  return result;
}

CpuPlatform::CpuPlatform(fs::path cache_dir, fs::path harness_path, std::string compiler)
    : builder_(cache_dir, std::move(compiler)), harness_path_(fs::absolute(harness_path)) {
  if (access(harness_path_.c_str(), X_OK) != 0) {
    throw core::InvalidInputError("CPU harness '" + harness_path_.string() +
                                  "' is not an executable file; build the kernelevolve-cpu-harness target");
  }
  scratch_dir_ = builder_.CacheDir() / "scratch";
  std::error_code ec;
  fs::create_directories(scratch_dir_, ec);
  if (ec) throw core::IoError("cannot create " + scratch_dir_.string() + ": " + ec.message());
}

BuildResult CpuPlatform::Build(const core::Candidate& candidate) { return builder_.Build(candidate); }

RunResult CpuPlatform::Run(const BuildResult& build, const core::Problem& problem, const RunOptions& options) {
  if (build.status != core::Status::kOk) {
    RunResult result = Failure(build.status, "not run: " + build.message);
    result.log_excerpt = eval::Utf8Tail(build.log, kMaxLogExcerptBytes);
    return result;
  }
  std::vector<std::string> argv = {
      harness_path_.string(),
      "--kernel", fs::absolute(build.artifact).string(),
      "--manifest", fs::absolute(problem.fixtures_dir / "manifest.json").string(),
      "--warmup-seconds", fmt::format("{}", options.warmup_seconds),
      "--min-time-seconds", fmt::format("{}", options.min_time_seconds),
      "--min-reps", std::to_string(options.min_repetitions),
      "--max-reps", std::to_string(options.max_repetitions),
      "--max-time-seconds", fmt::format("{}", options.max_time_seconds),
      "--probe-threads", std::to_string(std::max(1, options.threads))};
  if (!options.measure) argv.push_back("--no-measure");
  if (options.flush_cache) argv.push_back("--flush-cache");
  if (!options.time_kernel_only) argv.push_back("--no-kernel-only");

  const int threads = std::max(1, options.threads);
  std::map<std::string, std::string> env = {
      {"OMP_NUM_THREADS", std::to_string(threads)}, {"OMP_PROC_BIND", "false"}, {"PATH", "/usr/bin:/bin"}};
  if (!options.omp_wait_policy.empty()) env["OMP_WAIT_POLICY"] = options.omp_wait_policy;

  eval::SandboxLimits limits;
  limits.wall_timeout_seconds = options.timeout_seconds;
  limits.memory_bytes = options.memory_limit_bytes;
  if (options.flush_cache && options.measure) limits.memory_bytes += 2 * ReadLastLevelCache().bytes;
  limits.cpu_seconds = static_cast<int64_t>(std::ceil(2.0 * threads * options.timeout_seconds + kCpuSlackSeconds));
  limits.isolate_network = true;
  // Read-only file system except the scratch folder (on top of the harness's seccomp
  // filter, which denies every open once the fixtures are read).
  limits.read_only_filesystem = true;
  limits.writable_paths = {scratch_dir_};

  eval::SandboxResult outcome = eval::RunSandboxed(argv, env, scratch_dir_, limits);
  RunResult result = InterpretHarnessOutcome(outcome, options.timeout_seconds);
  if (result.probe_before_us > 0 && result.probe_after_us > 0) {
    result.probe_reference_us = FoldProbe(result.probe_before_us, result.probe_after_us);
  }
  auto reason = DegradedReason(result.probe_before_us, result.probe_after_us, result.probe_reference_us);
  result.degraded = reason.has_value();
  result.degraded_reason = reason.value_or("");
  return result;
}

double CpuPlatform::FoldProbe(double before_us, double after_us) {
  std::lock_guard<std::mutex> lock(probe_mutex_);
  const double fastest = std::min(before_us, after_us);
  if (fastest_probe_us_ <= 0 || fastest < fastest_probe_us_) fastest_probe_us_ = fastest;
  return fastest_probe_us_;
}

std::optional<std::string> CpuPlatform::DegradedDuring(const std::function<void()>& measurement, int threads) {
  const int probe_threads = std::max(1, threads);
  const double before_us = RunFmaProbeUs(probe_threads);
  measurement();
  const double after_us = RunFmaProbeUs(probe_threads);
  return DegradedReason(before_us, after_us, FoldProbe(before_us, after_us));
}

core::MachineContext CpuPlatform::Machine() const {
  core::MachineContext machine = core::ProbeLocalMachine();
  machine.compiler = builder_.CompilerVersion();
  return machine;
}

}  // namespace kernelevolve::platforms::cpu
