// The verdict of `kernelevolve eval` (issue 20): one kernel, written by a person or a
// model, judged by the full fitness of a search (checks, sandbox, timing, interleaved
// confirmation). Console text and result.json's "eval" object.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "report/run_summary.h"

namespace kernelevolve::report {

/// What `eval` decided about the kernel of summary.nodes[0].
struct EvalVerdict {
  std::filesystem::path kernel_path;  // the file as given on the command line
  /// "correct", a core::StatusName of the failed evaluation ("incorrect",
  /// "rejected_by_check", "compile_error", ...) or "failed_confirmation" (correct when
  /// first checked, then failed in an interleaved round).
  std::string verdict;
  std::string message;                // one line: "ok" or the reason
  /// Whether `eval` exits 0: the kernel passed every check, also in every confirmation
  /// round. Its speed does not enter: a correct but slower kernel is still correct.
  bool Correct() const { return verdict == "correct"; }
};

/// Decides the verdict from the single node of `summary` (its evaluation) and
/// summary.confirmation: the node's failure first, then a confirmation that failed
/// after it started (its message says which round and why); a confirmation skipped
/// (--confirm-rounds 0) leaves a correct kernel correct.
EvalVerdict DecideEvalVerdict(const RunSummary& summary, const std::filesystem::path& kernel_path);

/// result.json's "eval" object: {"kernel_path", "verdict", "message", "node_id",
/// "operator" ("user"), "log_excerpt" (compiler or harness output of a failed kernel,
/// "" when it passed)}. docs/result_json.md, "kernelevolve eval".
nlohmann::json EvalResultJson(const RunSummary& summary, const EvalVerdict& verdict);

/// Console text: what was evaluated, eager and kernel timings with the search's
/// speedup, the confirmation, the roofline, and a last line "correct: X.XXx eager ..."
/// or "<verdict>: <reason>" followed by up to 20 lines of the kernel's log excerpt
/// (indented) when it failed.
std::string EvalVerdictText(const RunSummary& summary, const EvalVerdict& verdict);

}  // namespace kernelevolve::report
