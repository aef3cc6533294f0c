// The CPU harness: loads one candidate shared object, checks it against every fixture
// and times it. Runs inside the sandboxed child (kernelevolve-cpu-harness); the logic
// lives here so it can be tested, harness_main.cpp only calls HarnessMain.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "platforms/platform.h"

namespace kernelevolve::platforms::cpu {

/// Command line of kernelevolve-cpu-harness:
///   --kernel X.so --manifest DIR/manifest.json [--warmup-seconds S]
///   [--min-time-seconds S] [--min-reps N] [--max-reps N] [--max-time-seconds S]
///   [--flush-cache] [--probe-threads N] [--no-measure] [--no-seccomp]
struct HarnessOptions {
  std::filesystem::path kernel;
  std::filesystem::path manifest;
  double warmup_seconds = 0.05;    // per timing mode, at least 2 calls
  double min_time_seconds = 0.25;  // timed time per mode (sum of timed calls)
  int min_repetitions = 10;
  int max_repetitions = 2000;
  double max_time_seconds = 2.0;   // wall-time cap of adaptive stopping (harness_timing.h)
  bool flush_cache = false;        // --flush-cache: write 2x the LLC before every timed call
  bool time_kernel_only = true;    // --no-kernel-only: time the drop-in mode alone
  int probe_threads = 1;           // threads of the degraded-machine probe (the candidate's)
  bool measure = true;
  bool filter_syscalls = true;  // --no-seccomp turns the system-call filter off (debugging)
  int verdict_fd = -1;          // where the fault/seccomp handlers write their verdict (HarnessMain)
};

/// Parses the arguments after the program name. Throws InvalidInputError naming the
/// flag (unknown flag, missing value, unparsable number, missing --kernel/--manifest).
HarnessOptions ParseHarnessArgs(const std::vector<std::string>& args);

/// Reads every fixture, loads the kernel, installs the system-call filter
/// (syscall_filter.h, unless options.filter_syscalls is false), checks the kernel on
/// every seed of the manifest with the anti-cheat checks of harness_checks.h (docs/
/// fitness.md), then (when all pass and options.measure) times it on one input set
/// (seed 0's values to start, as eager PyTorch is timed), verifying a random subset of
/// the timed calls (harness_timing.h); a timed run is
/// bracketed by the degraded-machine probe (probe_before_us / probe_after_us, degraded
/// by their ratio alone; the platform adds the reference). Returns status ok / incorrect / runtime_error /
/// rejected_by_check with message, checks and timings (log_excerpt and seconds are
/// left empty: the parent fills them). A bad_alloc escaping the kernel ends the process
/// with exit code 3 ("out of memory"). Throws IoError / InvalidInputError when the
/// manifest or a fixture file is unreadable or inconsistent (not the candidate's fault).
RunResult RunHarness(const HarnessOptions& options);

/// The verdict line: {"status", "message", "correct", "checks": [OutputCheck...],
/// "latency": TimingStats, "kernel_only": TimingStats} (eval/result_json.h forms), plus
/// "probe": {"before_us", "after_us"} when timed. A timed run also prints, on stderr,
/// where its flush size came from when --flush-cache is given.
nlohmann::json HarnessVerdictToJson(const RunResult& result);
/// Inverse of HarnessVerdictToJson. Throws InvalidInputError on a malformed verdict.
RunResult HarnessVerdictFromJson(const nlohmann::json& doc);

/// Process entry: installs the out-of-memory handler (message "out of memory", exit
/// code 3), moves the real stdout aside so the kernel's prints go to stderr, runs
/// RunHarness and prints the verdict as one JSON line, the last line of stdout.
/// Exit codes: 0 verdict printed; 2 usage or fixture error (message on stderr, no
/// verdict); 3 out of memory. Does not return on success (_Exit skips the kernel's
/// static destructors, which could otherwise crash after the verdict).
int HarnessMain(int argc, char** argv);

}  // namespace kernelevolve::platforms::cpu
