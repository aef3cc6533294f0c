#include "platforms/cpu/harness.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <new>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "eval/fixture_manifest.h"
#include "eval/result_json.h"
#include "eval/tolerance.h"
#include "platforms/cpu/harness_tensors.h"
#include "platforms/cpu/harness_timing.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kUsage =
    "usage: kernelevolve-cpu-harness --kernel X.so --manifest DIR/manifest.json "
    "[--warmup-seconds S] [--min-time-seconds S] [--min-reps N] [--max-reps N] [--no-measure]";

double ParseNumber(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size() && value >= 0) return value;
  } catch (const std::exception&) {
  }
  throw core::InvalidInputError(flag + ": expected a non-negative number, got '" + text + "'");
}

RunResult Verdict(core::Status status, std::string message) {
  RunResult result;
  result.status = status;
  result.message = std::move(message);
  return result;
}

std::string MismatchMessage(const core::OutputCheck& check, int seed, int64_t elements) {
  std::string text = fmt::format("{} differs from the reference on seed {}: ", check.output, seed);
  if (check.mismatches > 0) {
    text += fmt::format("{} of {} elements outside atol={:g} rtol={:g} (max abs error {:g}, first at flat index {})",
                        check.mismatches, elements, check.atol, check.rtol, check.max_abs_error,
                        check.first_mismatch);
  }
  if (!check.note.empty()) text += (check.mismatches > 0 ? "; " : "") + check.note;
  return text;
}

/// What happened on one seed.
struct SeedOutcome {
  std::optional<RunResult> failure;  // runtime_error or rejected_by_check: stop at once
  std::string first_incorrect;       // message of the first failed output check
};

SeedOutcome CheckSeed(EntryFn entry, const eval::FixtureManifest& manifest, int k, TensorSet& inputs,
                      TensorSet& outputs, std::vector<core::OutputCheck>* checks) {
  SeedOutcome outcome;
  const int seed = manifest.seeds[static_cast<std::size_t>(k)];
  eval::SafetensorsFile file = eval::ReadSafetensors(manifest.files[static_cast<std::size_t>(k)]);
  for (int i = 0; i < inputs.Count(); ++i) inputs.CopyFrom(i, file.Get(inputs.Spec(i).name));
  outputs.FillPoison();

  if (auto error = CallEntry(entry, inputs, outputs.Views(), outputs.Count())) {
    outcome.failure = Verdict(core::Status::kRuntimeError, *error + " on seed " + std::to_string(seed));
    return outcome;
  }
  for (int i = 0; i < inputs.Count(); ++i) {
    const auto& fixture = file.Get(inputs.Spec(i).name);
    if (std::memcmp(inputs.Data(i), fixture.bytes.data(), inputs.NumBytes(i)) != 0) {
      outcome.failure = Verdict(core::Status::kRejectedByCheck, "mutated input " + inputs.Spec(i).name);
      return outcome;
    }
  }
  for (int i = 0; i < outputs.Count(); ++i) {
    const auto& spec = outputs.Spec(i);
    core::OutputCheck check =
        eval::CompareTensors(outputs.ToHost(i), file.Get(spec.name), manifest.ToleranceFor(spec.dtype));
    check.seed_index = k;
    check.output = spec.name;
    if (!check.passed && outcome.first_incorrect.empty()) {
      outcome.first_incorrect = MismatchMessage(check, seed, spec.NumElements());
    }
    checks->push_back(std::move(check));
  }
  return outcome;
}

EntryFn LoadEntry(const fs::path& kernel, std::optional<RunResult>* failure) {
  // Never dlclose'd: OpenMP worker threads of the kernel may outlive the last call.
  // An absolute path: dlopen would search the library path for a bare file name.
  void* handle = dlopen(fs::absolute(kernel).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *failure = Verdict(core::Status::kRuntimeError, std::string("cannot load kernel: ") + (why ? why : "?"));
    return nullptr;
  }
  void* symbol = dlsym(handle, kEntrySymbol);
  if (symbol == nullptr) {
    *failure = Verdict(core::Status::kRejectedByCheck,
                       std::string("missing entry point: the kernel must export extern \"C\" int ") +
                           kEntrySymbol + "(const DLTensor*, int32_t, DLTensor*, int32_t)");
    return nullptr;
  }
  return reinterpret_cast<EntryFn>(symbol);
}

void WriteAll(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

HarnessOptions ParseHarnessArgs(const std::vector<std::string>& args) {
  HarnessOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--no-measure") {
      options.measure = false;
      continue;
    }
    static const std::set<std::string> kValueFlags = {"--kernel",   "--manifest", "--warmup-seconds",
                                                      "--min-time-seconds", "--min-reps", "--max-reps"};
    if (!kValueFlags.contains(flag)) throw core::InvalidInputError("unknown flag '" + flag + "'; " + kUsage);
    if (i + 1 >= args.size()) throw core::InvalidInputError(flag + ": missing value; " + kUsage);
    const std::string& value = args[++i];
    if (flag == "--kernel") {
      options.kernel = value;
    } else if (flag == "--manifest") {
      options.manifest = value;
    } else if (flag == "--warmup-seconds") {
      options.warmup_seconds = ParseNumber(flag, value);
    } else if (flag == "--min-time-seconds") {
      options.min_time_seconds = ParseNumber(flag, value);
    } else if (flag == "--min-reps") {
      options.min_repetitions = static_cast<int>(ParseNumber(flag, value));
    } else {  // --max-reps
      options.max_repetitions = std::max(1, static_cast<int>(ParseNumber(flag, value)));
    }
  }
  if (options.kernel.empty() || options.manifest.empty()) {
    throw core::InvalidInputError(std::string("--kernel and --manifest are required; ") + kUsage);
  }
  return options;
}

RunResult RunHarness(const HarnessOptions& options) {
  eval::FixtureManifest manifest = eval::ReadFixtureManifest(options.manifest);
  std::optional<RunResult> failure;
  EntryFn entry = LoadEntry(options.kernel, &failure);
  if (failure) return *failure;

  TensorSet inputs(manifest.inputs);
  TensorSet outputs(manifest.outputs);
  RunResult result;
  std::string first_incorrect;
  for (int k = static_cast<int>(manifest.files.size()) - 1; k >= 0; --k) {
    // Seed 0 last, so its inputs stay in place for timing.
    SeedOutcome seed = CheckSeed(entry, manifest, k, inputs, outputs, &result.checks);
    if (seed.failure) {
      seed.failure->checks = std::move(result.checks);
      return *seed.failure;
    }
    if (!seed.first_incorrect.empty()) first_incorrect = seed.first_incorrect;
  }
  std::sort(result.checks.begin(), result.checks.end(),
            [](const auto& a, const auto& b) { return a.seed_index < b.seed_index; });
  if (!first_incorrect.empty()) {
    result.status = core::Status::kIncorrect;
    result.message = first_incorrect;
    return result;
  }
  result.status = core::Status::kOk;
  result.correct = true;
  result.message = "ok";
  if (!options.measure) return result;

  TimingBudget budget{options.warmup_seconds, options.min_time_seconds, options.min_repetitions,
                      options.max_repetitions};
  TimingOutcome timing = TimeKernel(entry, inputs, outputs, budget);
  if (timing.error) {
    result.status = core::Status::kRuntimeError;
    result.correct = false;
    result.message = *timing.error + " while timing";
    return result;
  }
  result.latency = timing.latency;
  result.kernel_only = timing.kernel_only;
  return result;
}

json HarnessVerdictToJson(const RunResult& result) {
  json checks = json::array();
  for (const auto& check : result.checks) checks.push_back(eval::OutputCheckToJson(check));
  return {{"status", core::StatusName(result.status)},
          {"message", result.message},
          {"correct", result.correct},
          {"checks", checks},
          {"latency", eval::TimingStatsToJson(result.latency)},
          {"kernel_only", eval::TimingStatsToJson(result.kernel_only)}};
}

RunResult HarnessVerdictFromJson(const json& doc) {
  if (!doc.is_object() || !doc.contains("status")) {
    throw core::InvalidInputError("harness verdict: expected an object with 'status', got " + doc.dump());
  }
  RunResult result;
  try {
    result.status = core::StatusFromName(doc.at("status").get<std::string>());
    result.message = doc.value("message", "");
    result.correct = doc.value("correct", false);
    for (const auto& check : doc.value("checks", json::array())) {
      result.checks.push_back(eval::OutputCheckFromJson(check));
    }
    if (doc.contains("latency")) result.latency = eval::TimingStatsFromJson(doc.at("latency"));
    if (doc.contains("kernel_only")) result.kernel_only = eval::TimingStatsFromJson(doc.at("kernel_only"));
  } catch (const json::exception& e) {
    throw core::InvalidInputError(std::string("harness verdict: ") + e.what());
  }
  return result;
}

int HarnessMain(int argc, char** argv) {
  std::set_new_handler([] { ExitOutOfMemory(); });
  // The verdict goes to the real stdout; fd 1 becomes stderr, so whatever the kernel
  // prints (printf, std::cout, write(1, ...)) lands in the log instead.
  int verdict_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (verdict_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("kernelevolve-cpu-harness: cannot redirect stdout");
    return 2;
  }
  RunResult result;
  try {
    result = RunHarness(ParseHarnessArgs(std::vector<std::string>(argv + 1, argv + argc)));
  } catch (const std::exception& e) {  // core::Error from the manifest or fixtures
    std::fprintf(stderr, "kernelevolve-cpu-harness: %s\n", e.what());
    return 2;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  // replace: a kernel's exception text may hold invalid UTF-8.
  WriteAll(verdict_fd, "\n" + HarnessVerdictToJson(result).dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  std::_Exit(0);
}

}  // namespace kernelevolve::platforms::cpu
