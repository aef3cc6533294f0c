// Everything the end-of-run outputs (result.json, console table) are made from.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/machine.h"
#include "core/phase_times.h"
#include "core/problem.h"
#include "eval/roofline.h"
#include "exec/confirm_speedup.h"
#include "search/node.h"

namespace kernelevolve::report {

struct RunSummary {
  std::string problem;                 // name
  std::string problem_path;
  std::string target = "cpu";
  std::string status;                  // ok | no_correct_candidate | error
  std::string stop_reason;             // budget | time_limit | exhausted | error
  std::string error;                   // one line, when status == error
  std::string error_log;               // where the traceback / details are
  int evaluations = 0;
  double elapsed_seconds = 0;
  std::map<std::string, std::string> overrides;
  core::TimingStats eager_baseline;    // eager PyTorch timed when the problem was loaded
  /// The eager measurement every node's speedup was scored against: the one with the
  /// fastest call in the run (exec::Evaluator::SharedBaseline); unmeasured (n == 0)
  /// when the nodes were scored on several machines (--queue).
  core::TimingStats speedup_baseline;
  std::optional<search::Node> best;    // the best correct node
  exec::Confirmation confirmation;     // interleaved re-measurement of `best`
  std::filesystem::path best_source_path;
  std::filesystem::path database_path;
  core::MachineContext machine;
  /// A GPU target run by the CPU interpreter (TRITON_INTERPRET=1; GpuDeviceInfo::cuda
  /// false): the console says so instead of "on the GPU".
  bool gpu_interpret = false;
  std::vector<search::Node> nodes;     // all nodes, for the table
  nlohmann::json warm_start;           // knowledge base (issue 8): cli/knowledge_hooks.h; null: omitted
  /// Bytes and FLOPs per call of the problem (issue 5); nullopt: roofline omitted.
  std::optional<eval::WorkEstimate> work;
  /// Wall seconds per phase of the run (worker_start, load, gpu_prepare or
  /// machine_peaks, baseline_profile, search, confirmation, knowledge, profiles) and the
  /// workers' parts of them ("load.references", ...); result.json's "phase_seconds".
  core::PhaseTimes phases;
};

/// result.json's "roofline" object: the problem's bytes_per_call, flops_per_call,
/// arithmetic_intensity (FLOP/byte), assumed_ops, the machine's copy_bandwidth_gbps,
/// peak_gflops and machine_balance (FLOP/byte), the problem's bound ("memory" when its
/// intensity is below the balance, as eval::ComputeRoofline decides) and
/// roofline_time_us (the time of one call at the bounding peak; 0 when unknown).
nlohmann::json ProblemRooflineJson(const eval::WorkEstimate& work, const core::MachineContext& machine);

/// Why no candidate was correct, for the summary: "  2 incorrect, 1 compile_error; e.g.
/// node 3 (loop_nest): <its message, cut to 300 characters>\n" (the first failed node
/// with a message); "" when no node failed.
/// A line for the summary when a CPU kernel's compute-bound roofline fraction exceeds
/// 1.2 (above the FMA peak, which no kernel can beat): the cached peak was probably
/// measured under load, or the kernel skips work the FLOP estimate counts; "" otherwise
/// (and always on GPU targets, whose peak is torch.mm's).
std::string PeakAboveNote(const core::RooflineFigures& roofline, const core::MachineContext& machine, bool gpu);

std::string FailureSummary(const std::vector<search::Node>& nodes);

/// The confirmation's line: "confirmed: 1.52x vs eager, 95% interval [1.40, 1.61] over 8
/// interleaved rounds -> verified faster\n" ("not clearly faster" when the interval
/// reaches 1.0; rounds the machine probe flagged twice are named after the round count
/// when they were left out, and the verdict is "not verified: the machine was disturbed
/// in N of R rounds ... (REASON)" when too few clean rounds remained:
/// Confirmation::VerifiedFaster), or "" when it was not done.
std::string ConfirmedLine(const exec::Confirmation& confirmation);
/// "verified faster", "not clearly faster" or "not verified (machine disturbed)".
std::string ConfirmedVerdict(const exec::Confirmation& confirmation);

/// A warning line ("warning: ...\n") when the search's speedup of the best node and its
/// interleaved confirmation differ by more than kDisagreementRatio either way (one of
/// the two was measured on a disturbed machine), else "". No confirmation: "".
std::string DisagreementWarning(const core::Speedup& search, const exec::Confirmation& confirmation);
/// Factor between the search's and the confirmation's speedup past which
/// DisagreementWarning speaks: twice the widest A/A confirmation interval seen on the
/// busy development VM (docs/measuring.md, A/A check: median width 0.34).
inline constexpr double kDisagreementRatio = 2.0;

/// A warning line when `speedup` (the search's or the confirmed figure) exceeds
/// kLargeSpeedup: on a busy machine eager calls can be disturbed in every timing of a
/// run, confirmation rounds included, which no rule here can detect; else "".
std::string LargeSpeedupWarning(double speedup);
/// Past this speedup over eager PyTorch, the summary asks for a check on a quiet machine:
/// above the largest confirmed speedup in docs/bench.md (argmax_dim, 31.87x [24.56,
/// 45.31] on the development VM), while a break test on the loaded VM saw 245-774x
/// from disturbed eager timings alone.
inline constexpr double kLargeSpeedup = 50.0;

/// The result.json document (schema in docs/result_json.md).
nlohmann::json ResultJson(const RunSummary& summary);

/// Writes JSON to `path` atomically (temp file + rename). Throws IoError.
void WriteJsonAtomic(const std::filesystem::path& path, const nlohmann::json& doc);
/// Writes text to `path` atomically (temp file + rename). Throws IoError.
void WriteTextAtomic(const std::filesystem::path& path, const std::string& text);

/// How the console names a GPU target run under TRITON_INTERPRET=1 (where it would say
/// "on the GPU").
inline constexpr const char* kInterpretWording = "under TRITON_INTERPRET=1 (CPU, timings meaningless)";

/// Human-readable table of the best nodes and the verdict, for stdout.
std::string SummaryTable(const RunSummary& summary, int max_rows = 10);

}  // namespace kernelevolve::report
