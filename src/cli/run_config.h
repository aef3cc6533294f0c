// The search flags of `kernelevolve optimize` as stored in runs.config_json, so that
// `kernelevolve resume` continues a run with exactly the flags it was started with, and
// their translation into search options (shared by optimize, resume and compare).
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/optimize_command.h"
#include "search/search_loop.h"
#include "search/selection_policy.h"
#include "store/store.h"

namespace kernelevolve::cli {

/// Checks the search flags before any work: policy and context names, --jobs >= 1,
/// --stall >= 0, --stall-min-improvement >= 0, --target-speedup >= 0, --ucb-c >= 0,
/// --islands >= 1, --migration-interval >= 1, --timing-isolation. Throws
/// InvalidInputError naming the flag.
void ValidateSearchFlags(const OptimizeOptions& options);

search::PolicyOptions MakePolicyOptions(const OptimizeOptions& options);
/// Termination, drafts, threads, jobs, context and clean-slate settings (seeds and
/// experiences of the knowledge base are left empty).
search::SearchOptions MakeSearchOptions(const OptimizeOptions& options);

/// Every flag a resume needs, as JSON (runs.config_json). Paths are stored absolute
/// (resume may run from another directory); `problem_path` keeps the path as given;
/// "problem_hash" is core::FileContentHash of the problem file now ("" when unreadable).
nlohmann::json OptionsToConfig(const OptimizeOptions& options,
                               const std::map<std::string, std::string>& overrides);
/// The flags of a stored run (inverse of OptionsToConfig; out_dir, quiet and the resume
/// fields are left for the caller). Throws InvalidInputError naming the database field
/// when the run was not started by a kernelevolve that records its flags.
OptimizeOptions OptionsFromRun(const store::RunRecord& run);

/// Before a resume: compares core::FileContentHash of `options.problem_path` now with the one
/// OptionsToConfig recorded when the run started (runs.config_json "problem_hash").
/// Returns "" when they match, a one-line warning when the run recorded none (older
/// kernelevolve: the resume goes on unchecked). Throws InvalidInputError ("PATH changed
/// since the run started (hash A then, B now): ... start a new run with `kernelevolve
/// optimize PATH --target T [--set ...] --out NEW_DIR`") when they differ: the stored
/// nodes were timed on the old problem.
std::string CheckProblemUnchanged(const store::RunRecord& run, const OptimizeOptions& options);

}  // namespace kernelevolve::cli
