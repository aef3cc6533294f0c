#include "platforms/cpu/harness.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <chrono>
#include <new>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "eval/fixture_manifest.h"
#include "eval/result_json.h"
#include "eval/tolerance.h"
#include "platforms/cpu/cache_flush.h"
#include "platforms/cpu/degraded_probe.h"
#include "platforms/cpu/harness_checks.h"
#include "platforms/cpu/harness_guard.h"
#include "platforms/cpu/harness_tensors.h"
#include "platforms/cpu/harness_timing.h"
#include "platforms/cpu/syscall_filter.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kUsage =
    "usage: kernelevolve-cpu-harness --kernel X.so --manifest DIR/manifest.json "
    "[--warmup-seconds S] [--min-time-seconds S] [--min-reps N] [--max-reps N] [--max-time-seconds S] "
    "[--flush-cache] [--no-kernel-only] [--probe-threads N] [--no-measure] [--no-seccomp]";

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

/// `where` names the input set: "seed 2", "edge case 'large' (float inputs scaled by 10000)".
std::string MismatchMessage(const core::OutputCheck& check, const std::string& where, int64_t elements) {
  std::string text = fmt::format("{} differs from the reference on {}: ", check.output, where);
  if (check.mismatches > 0) {
    text += fmt::format("{} of {} elements outside atol={:g} rtol={:g} (max abs error {:g}, first at flat index {})",
                        check.mismatches, elements, check.atol, check.rtol, check.max_abs_error,
                        check.first_mismatch);
  }
  if (!check.note.empty()) text += (check.mismatches > 0 ? "; " : "") + check.note;
  return text;
}

/// Largest element of a float32 tensor, 0 when empty.
double MaxElement(const eval::HostTensor& tensor) {
  const float* values = tensor.Data<float>();
  const int64_t n = tensor.NumElements();
  return n == 0 ? 0.0 : double{*std::max_element(values, values + n)};
}

/// What a mismatch message on a set with an allowance adds: that each element's
/// tolerance adds allowance.multiple x eager's own error there, and the largest such
/// addition. Precondition: allowance.scale is set.
std::string AllowanceNote(const eval::ElementAllowance& allowance) {
  return fmt::format(
      "; the tolerance at each element adds {:g} x eager PyTorch's own rounding error there "
      "(at most {:g} on this set)",
      allowance.multiple, allowance.multiple * MaxElement(*allowance.scale));
}

/// What a mismatch message on an edge case adds. With an allowance applied
/// (allowance.scale set): that each element's tolerance adds allowance.multiple x eager's
/// own error there, and the largest such addition. Without one, when eager's own max
/// error on the set (`reference_error`) exceeds the dtype's `atol`: a hint that eager
/// misses the tolerance there too, and how to leave the set out (or, with the problem's
/// EAGER_ERROR_MULTIPLE = 0, turn the allowance back on); else "". Worded as the GPU
/// runner's allowance_note.
std::string EdgeAllowanceNote(const eval::ElementAllowance& allowance, double reference_error,
                              double atol) {
  if (allowance.scale != nullptr) return AllowanceNote(allowance);
  if (reference_error <= atol) return "";
  return fmt::format(
      "; eager PyTorch's own float32 result is up to {:g} off the float64 reference on this set, "
      "outside this tolerance too: leave the set out with EDGE_CASES{} in the problem file "
      "(docs/fitness.md)",
      reference_error, allowance.multiple > 0 ? "" : ", or remove EAGER_ERROR_MULTIPLE = 0,");
}

/// The allowance of output `i` on input set `set` (an edge set or a seed): the
/// problem's EAGER_ERROR_MULTIPLE always; the set's allowance tensor of the output only
/// when that multiple is > 0 and the output is not bounded (a bounded output's trimmed
/// shape may differ from it).
eval::ElementAllowance SetAllowance(const eval::FixtureManifest& manifest, const SeedFixture& set,
                                    std::size_t i) {
  eval::ElementAllowance allowance;
  allowance.multiple = manifest.eager_error_multiple;
  const bool bounded = i < manifest.size_output.size() && manifest.size_output[i] >= 0;
  if (allowance.multiple > 0 && !bounded && i < set.allowances.size() && set.allowances[i]) {
    allowance.scale = &*set.allowances[i];
  }
  return allowance;
}

// How long after a checked call returns the harness looks again at its outputs and
// thread count: work a kernel left running in a thread shows up within this window.
constexpr auto kSettleTime = std::chrono::milliseconds(20);

using Clock = std::chrono::steady_clock;

/// True when `a` and `b` list tensors of the same shapes, in order.
bool SameShapes(const std::vector<core::TensorSpec>& a, const std::vector<core::TensorSpec>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const core::TensorSpec& x, const core::TensorSpec& y) { return x.shape == y.shape; });
}

/// Everything the checks need, read before the system-call filter is installed.
struct CheckContext {
  eval::FixtureManifest manifest;
  std::vector<SeedFixture> seeds;
  std::vector<SeedFixture> edges;     // manifest.edge_cases order; checked once, never timed
  std::vector<TensorSet> edge_inputs; // one per edge case, each at its own address
  std::vector<TensorSet> input_sets;  // one per seed, loaded with that seed's inputs
  std::vector<int> set_content;       // which seed each input set currently holds
  std::vector<TensorSet> output_sets; // one per seed, shaped as that seed's outputs (bounded ones at their bound)
  std::vector<int> timed_seeds;       // seeds whose buffers are shaped as seed set 0's: the timing loop's refreshes
  ThreadCounter threads;
  int allowed_threads = -1;           // after the first checked call (OpenMP pool)

  explicit CheckContext(eval::FixtureManifest m)
      : manifest(std::move(m)), seeds(LoadSeedFixtures(manifest)), edges(LoadEdgeCaseFixtures(manifest)) {
    input_sets.reserve(seeds.size());
    output_sets.reserve(seeds.size());
    set_content.resize(seeds.size());
    for (std::size_t k = 0; k < seeds.size(); ++k) {
      input_sets.emplace_back(manifest.InputsOf(k));
      output_sets.emplace_back(manifest.OutputsOf(k));
      LoadInputs(static_cast<int>(k), static_cast<int>(k));
      if (SameShapes(manifest.InputsOf(k), manifest.InputsOf(0)) &&
          SameShapes(manifest.OutputsOf(k), manifest.OutputsOf(0))) {
        timed_seeds.push_back(static_cast<int>(k));
      }
    }
    edge_inputs.reserve(edges.size());
    for (const auto& edge : edges) {
      edge_inputs.emplace_back(manifest.InputsOf(0));
      for (int i = 0; i < edge_inputs.back().Count(); ++i) edge_inputs.back().CopyFrom(i, edge.inputs[static_cast<std::size_t>(i)]);
    }
  }

  void LoadInputs(int set, int seed) {
    for (int i = 0; i < input_sets[set].Count(); ++i) input_sets[set].CopyFrom(i, seeds[seed].inputs[i]);
    set_content[set] = seed;
  }
};

/// Checks that hold for any call: no file opened, inputs intact, nothing written
/// outside a buffer. nullopt when all hold.
std::optional<std::string> CallSideEffects(const CheckContext& ctx, const TensorSet& inputs, int seed) {
  if (auto path = FileOpenAttempt()) {
    return "tried to open a file: '" + *path + "' (candidates may not touch the file system)";
  }
  if (auto reason = MutatedInputReason(inputs, ctx.seeds[seed])) return reason;
  if (auto reason = inputs.CheckCanaries()) return reason;
  return std::nullopt;
}

/// Output checks of one call on `seed`: constant output, then tolerance, then (when out
/// of tolerance) a result reused from another seed. Returns a rejection reason, or
/// fills `checks` and `first_incorrect`.
std::optional<std::string> CheckOutputs(const CheckContext& ctx, const std::vector<eval::HostTensor>& raw,
                                        int seed, std::vector<core::OutputCheck>* checks,
                                        std::string* first_incorrect) {
  const std::vector<eval::HostTensor> outputs = TrimBoundedOutputs(ctx.manifest, raw, ctx.seeds[seed]);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& spec = ctx.manifest.outputs[i];
    const auto& reference = ctx.seeds[seed].references[i];
    if (auto reason = ConstantOutputReason(outputs[i], reference)) return reason;
    const core::Tolerance tolerance = ctx.manifest.ToleranceFor(spec.dtype);
    const eval::ElementAllowance allowance = SetAllowance(ctx.manifest, ctx.seeds[seed], i);
    core::OutputCheck check = eval::CompareTensors(outputs[i], reference, tolerance, allowance);
    check.seed_index = seed;
    check.output = spec.name;
    if (!check.passed) {
      if (auto reason = StaleResultReason(outputs[i], static_cast<int>(i), seed, ctx.seeds, tolerance)) return reason;
      if (first_incorrect->empty()) {
        *first_incorrect = MismatchMessage(check, fmt::format("seed {}", ctx.seeds[seed].seed), reference.NumElements()) +
                           (allowance.scale ? AllowanceNote(allowance) : "");
      }
    }
    if (checks) checks->push_back(std::move(check));
  }
  return std::nullopt;
}

/// What happened on one seed.
struct SeedOutcome {
  std::optional<RunResult> failure;  // runtime_error or rejected_by_check: stop at once
  std::string first_incorrect;       // message of the first failed output check
};

SeedOutcome CheckSeed(EntryFn entry, CheckContext& ctx, int k, std::vector<core::OutputCheck>* checks) {
  SeedOutcome outcome;
  TensorSet& inputs = ctx.input_sets[k];
  TensorSet& out = ctx.output_sets[k];
  out.FillPoison();
  auto reject = [&](std::string reason) {
    outcome.failure = Verdict(core::Status::kRejectedByCheck, std::move(reason));
    return outcome;
  };

  auto error = CallEntry(entry, inputs, out.Views(), out.Count());
  const auto returned = Clock::now();
  std::vector<eval::HostTensor> snapshot;
  for (int i = 0; i < out.Count(); ++i) snapshot.push_back(out.ToHost(i));
  if (auto reason = CallSideEffects(ctx, inputs, k)) return reject(*reason);
  if (error) {
    outcome.failure = Verdict(core::Status::kRuntimeError, *error + " on seed " + std::to_string(ctx.seeds[k].seed));
    return outcome;
  }
  if (auto reason = out.CheckCanaries()) return reject(*reason);

  std::this_thread::sleep_until(returned + kSettleTime);
  for (int i = 0; i < out.Count(); ++i) {
    if (!out.Equals(i, snapshot[static_cast<std::size_t>(i)])) {
      return reject(out.Spec(i).name +
                    " changed after the kernel returned: work was left running in another thread");
    }
  }
  const int threads = ctx.threads.Count();
  if (ctx.allowed_threads < 0) {
    ctx.allowed_threads = threads;  // the first call may start a thread pool (OpenMP)
  } else if (threads > ctx.allowed_threads) {
    return reject(fmt::format("left {} more thread(s) running after it returned (every thread must have "
                              "finished when the entry returns)", threads - ctx.allowed_threads));
  }
  if (auto reason = CheckOutputs(ctx, snapshot, k, checks, &outcome.first_incorrect)) return reject(*reason);
  return outcome;
}

/// When output `index`, wrong on edge case `e`, is the reference of a seed or of an
/// earlier edge case: the reason naming both; else nullopt.
std::optional<std::string> EdgeStaleResult(const CheckContext& ctx, int e, int index,
                                           const eval::HostTensor& output) {
  const core::Tolerance tolerance = ctx.manifest.ToleranceFor(output.dtype);
  const std::string& name = ctx.manifest.edge_cases[static_cast<std::size_t>(e)].name;
  auto reused = [&](const SeedFixture& other) {
    const auto& reference = other.references[static_cast<std::size_t>(index)];
    return reference.bytes != ctx.edges[static_cast<std::size_t>(e)].references[static_cast<std::size_t>(index)].bytes &&
           eval::CompareTensors(output, reference, tolerance).passed;
  };
  for (const auto& seed : ctx.seeds) {
    if (reused(seed)) {
      return fmt::format("{} on edge case '{}' is the result for seed {}: a result reused from an earlier call",
                         output.name, name, seed.seed);
    }
  }
  for (int other = 0; other < e; ++other) {
    if (reused(ctx.edges[static_cast<std::size_t>(other)])) {
      return fmt::format("{} on edge case '{}' is the result for edge case '{}': a result reused from an earlier call",
                         output.name, name, ctx.manifest.edge_cases[static_cast<std::size_t>(other)].name);
    }
  }
  return std::nullopt;
}

/// Checks the kernel once on each edge-case set (after the seeds passed): side effects,
/// runtime errors and tolerance. Returns the first failure as a verdict, or an
/// incorrect message in `first_incorrect`; appends the output checks.
SeedOutcome CheckEdgeCases(EntryFn entry, CheckContext& ctx, std::vector<core::OutputCheck>* checks) {
  SeedOutcome outcome;
  for (std::size_t e = 0; e < ctx.edges.size(); ++e) {
    const eval::EdgeCaseFixture& edge = ctx.manifest.edge_cases[e];
    const std::string where = fmt::format("edge case '{}' ({})", edge.name, edge.description);
    TensorSet& inputs = ctx.edge_inputs[e];
    TensorSet& out = ctx.output_sets[0];  // edge sets are built from the first seed's inputs
    out.FillPoison();
    auto error = CallEntry(entry, inputs, out.Views(), out.Count());
    std::optional<std::string> reason;
    if (auto path = FileOpenAttempt()) reason = "tried to open a file: '" + *path + "'";
    if (!reason) reason = MutatedInputReason(inputs, ctx.edges[e]);
    if (!reason) reason = inputs.CheckCanaries();
    if (!reason) reason = out.CheckCanaries();
    if (reason) {
      outcome.failure = Verdict(core::Status::kRejectedByCheck, *reason + " on " + where);
      return outcome;
    }
    if (error) {
      outcome.failure = Verdict(core::Status::kRuntimeError, *error + " on " + where);
      return outcome;
    }
    std::vector<eval::HostTensor> raw;
    for (int i = 0; i < out.Count(); ++i) raw.push_back(out.ToHost(i));
    const std::vector<eval::HostTensor> host = TrimBoundedOutputs(ctx.manifest, std::move(raw), ctx.edges[e]);
    for (int i = 0; i < out.Count(); ++i) {
      const auto& spec = ctx.manifest.outputs[static_cast<std::size_t>(i)];
      const auto& reference = ctx.edges[e].references[static_cast<std::size_t>(i)];
      const core::Tolerance tolerance = ctx.manifest.ToleranceFor(spec.dtype);
      const eval::ElementAllowance allowance =
          SetAllowance(ctx.manifest, ctx.edges[e], static_cast<std::size_t>(i));
      core::OutputCheck check =
          eval::CompareTensors(host[static_cast<std::size_t>(i)], reference, tolerance, allowance);
      check.output = spec.name;
      check.edge_case = edge.name;
      if (!check.passed) {
        if (auto stale = EdgeStaleResult(ctx, static_cast<int>(e), i, host[static_cast<std::size_t>(i)])) {
          outcome.failure = Verdict(core::Status::kRejectedByCheck, *stale);
          return outcome;
        }
        if (outcome.first_incorrect.empty()) {
          outcome.first_incorrect =
              MismatchMessage(check, where, reference.NumElements()) +
              EdgeAllowanceNote(allowance, edge.ReferenceError(spec.name), tolerance.atol);
        }
      }
      checks->push_back(std::move(check));
    }
    if (!outcome.first_incorrect.empty()) return outcome;
  }
  return outcome;
}

/// The timing loop's view of the fixtures: the input set it times on (set 0) and the
/// checks of verified timed calls. Refreshes cycle through the seeds whose buffers have
/// set 0's shapes (all seeds when shapes do not vary; only seed 0 itself when no other
/// seed has its shapes, so the reload check is then a reload of the same values).
class HarnessVerifier : public CallVerifier {
 public:
  explicit HarnessVerifier(CheckContext& ctx) : ctx_(ctx) {}
  TensorSet& Inputs() override { return ctx_.input_sets[kSet]; }
  void Refresh() override {
    const auto& order = ctx_.timed_seeds;
    const auto at = std::find(order.begin(), order.end(), ctx_.set_content[kSet]);
    const std::size_t next = at == order.end() ? 0 : static_cast<std::size_t>(at - order.begin() + 1) % order.size();
    ctx_.LoadInputs(kSet, order[next]);
  }
  std::optional<std::string> Verify(const DLTensor* outputs) override {
    const int seed = ctx_.set_content[kSet];
    if (auto reason = CallSideEffects(ctx_, ctx_.input_sets[kSet], seed)) return reason;
    const TensorSet& out = ctx_.output_sets[kSet];
    if (auto reason = out.CheckCanaries()) return reason;
    std::vector<eval::HostTensor> host;
    for (int i = 0; i < out.Count(); ++i) host.push_back(ViewToHost(out.Spec(i), outputs[i]));
    std::string incorrect;
    if (auto reason = CheckOutputs(ctx_, host, seed, nullptr, &incorrect)) return reason;
    if (!incorrect.empty()) return "wrong result on a verified timed call (the kernel computes less when timed): " + incorrect;
    return std::nullopt;
  }

 private:
  static constexpr int kSet = 0;  // the timed input set
  CheckContext& ctx_;
};

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
    if (flag == "--no-seccomp") {
      options.filter_syscalls = false;
      continue;
    }
    if (flag == "--flush-cache") {
      options.flush_cache = true;
      continue;
    }
    if (flag == "--no-kernel-only") {
      options.time_kernel_only = false;
      continue;
    }
    static const std::set<std::string> kValueFlags = {"--kernel",   "--manifest", "--warmup-seconds",
                                                      "--min-time-seconds", "--min-reps", "--max-reps",
                                                      "--max-time-seconds", "--probe-threads"};
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
    } else if (flag == "--max-time-seconds") {
      options.max_time_seconds = ParseNumber(flag, value);
    } else if (flag == "--probe-threads") {
      options.probe_threads = std::max(1, static_cast<int>(ParseNumber(flag, value)));
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
  CheckContext ctx(eval::ReadFixtureManifest(options.manifest));
  std::optional<RunResult> failure;
  EntryFn entry = LoadEntry(options.kernel, &failure);
  if (failure) return *failure;
  // Sized and allocated before the filter: sysfs cannot be read under it.
  std::unique_ptr<CacheFlusher> flusher;
  if (options.flush_cache && options.measure) {
    const LastLevelCache llc = ReadLastLevelCache();
    flusher = std::make_unique<CacheFlusher>(2 * llc.bytes);
    std::fprintf(stderr, "kernelevolve-cpu-harness: flushing %lld bytes (2x the last-level cache, from %s)\n",
                 static_cast<long long>(2 * llc.bytes), llc.source.c_str());
  }
  if (options.filter_syscalls) {
    // Everything is read and loaded: from here on the kernel runs under the filter.
    if (auto error = InstallSyscallFilter(options.verdict_fd)) {
      throw core::InternalError(*error + "; pass --no-seccomp to run unfiltered");
    }
  }

  RunResult result;
  std::string first_incorrect;
  for (int k = static_cast<int>(ctx.seeds.size()) - 1; k >= 0; --k) {
    SeedOutcome seed = CheckSeed(entry, ctx, k, &result.checks);
    if (seed.failure) {
      seed.failure->checks = std::move(result.checks);
      return *seed.failure;
    }
    if (!seed.first_incorrect.empty()) first_incorrect = seed.first_incorrect;
  }
  std::sort(result.checks.begin(), result.checks.end(),
            [](const auto& a, const auto& b) { return a.seed_index < b.seed_index; });
  if (first_incorrect.empty()) {
    SeedOutcome edges = CheckEdgeCases(entry, ctx, &result.checks);
    if (edges.failure) {
      edges.failure->checks = std::move(result.checks);
      return *edges.failure;
    }
    first_incorrect = edges.first_incorrect;
  }
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
                      options.max_repetitions, options.max_time_seconds};
  budget.kernel_only = options.time_kernel_only;
  HarnessVerifier verifier(ctx);
  result.probe_before_us = RunFmaProbeUs(options.probe_threads);
  TimingOutcome timing = TimeKernel(entry, verifier, ctx.output_sets[0], budget, flusher.get());
  result.probe_after_us = RunFmaProbeUs(options.probe_threads);
  if (timing.error || timing.rejection) {
    result.status = timing.error ? core::Status::kRuntimeError : core::Status::kRejectedByCheck;
    result.correct = false;
    result.message = timing.error ? *timing.error + " while timing" : "during timing: " + *timing.rejection;
    return result;
  }
  result.latency = timing.latency;
  result.kernel_only = timing.kernel_only;
  if (auto reason = DegradedReason(result.probe_before_us, result.probe_after_us, 0)) {
    result.degraded = true;
    result.degraded_reason = *reason;
  }
  return result;
}

json HarnessVerdictToJson(const RunResult& result) {
  json checks = json::array();
  for (const auto& check : result.checks) checks.push_back(eval::OutputCheckToJson(check));
  json verdict = {{"status", core::StatusName(result.status)},
                  {"message", result.message},
                  {"correct", result.correct},
                  {"checks", checks},
                  {"latency", eval::TimingStatsToJson(result.latency)},
                  {"kernel_only", eval::TimingStatsToJson(result.kernel_only)}};
  if (result.probe_before_us > 0) {
    verdict["probe"] = {{"before_us", result.probe_before_us}, {"after_us", result.probe_after_us}};
  }
  return verdict;
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
    if (doc.contains("probe")) {
      result.probe_before_us = doc.at("probe").value("before_us", 0.0);
      result.probe_after_us = doc.at("probe").value("after_us", 0.0);
    }
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
  InstallGuardFaultHandler(verdict_fd);
  RunResult result;
  try {
    HarnessOptions options = ParseHarnessArgs(std::vector<std::string>(argv + 1, argv + argc));
    options.verdict_fd = verdict_fd;
    result = RunHarness(options);
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
