// `kernelevolve compare`: every selection policy on every problem with the same budget,
// and a table of the best speedup each reached (docs/search.md, "Comparing policies").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/llm_flags.h"

namespace CLI {
class App;
}

namespace kernelevolve::cli {

/// Every flag of `compare`; with --llm (LlmFlags, issue 21) the language model writes the
/// candidates of every (problem, policy) run, --max-cost capping each run.
struct CompareOptions : LlmFlags {
  std::vector<std::filesystem::path> problems;  // --problems P1.py P2.py ...
  std::vector<std::string> policies;            // --policies a,b,c (default: all five)
  int budget = 20;                              // evaluations per (problem, policy) run
  double time_limit_seconds = 600;              // per run
  std::vector<std::string> sets;                // --set NAME=VALUE, applied to every problem
  int threads = 0;
  int seeds = 3;
  int drafts = 0;
  int jobs = 1;
  std::string queue;  // --queue redis://HOST:PORT[/DB] (issue 22)
  uint64_t seed = 0;
  double min_time_seconds = 0.05;
  int confirm_rounds = 0;                       // interleaved re-measurement of each best
  std::filesystem::path out_dir;                // default runs/compare-<UTC time>
  std::filesystem::path cache_dir;
  bool quiet = false;
};

/// One cell of the table.
struct CompareCell {
  std::string problem;
  std::string policy;
  int exit_code = -1;           // optimize's exit code (0 ok, 1 no correct kernel, ...)
  double best_speedup = 0;      // best node's search-time speedup vs eager (0: none correct)
  double confirmed_speedup = 0; // with --confirm-rounds; 0 otherwise
  int evaluations = 0;
  std::string stop_reason;
  double elapsed_seconds = 0;
  std::filesystem::path run_dir;
  std::string error;            // non-empty: the run failed (e.g. the problem did not load);
                                // an "error" cell, left out of the geomean
};

/// Adds the `compare` subcommand to `app`, filling `options`.
void AddCompareCommand(CLI::App& app, CompareOptions& options);

/// Runs `optimize` (knowledge base off, so no run warm-starts another) for every
/// problem and policy, each in OUT/<problem>-<policy>/ with its console summary in
/// summary.txt; prints the table of best speedups (a geometric-mean row at the bottom)
/// and writes OUT/compare.json. A problem that fails to load is an error row (its other
/// policies are not run) and the geomeans cover the problems that loaded, a run without a
/// correct kernel counted as 1.0 (the reference stays the answer). Returns, as
/// `bench` does: 0 when the comparison ran (whatever each run's outcome), 2 on bad input
/// (no such problem file, unknown policy, --out already holding a compare run, unusable
/// --cache-dir; InvalidInputError), 128 + signal (130 for Ctrl-C) when interrupted.
int RunCompare(const CompareOptions& options);

/// The table printed by RunCompare, rows = problems, columns = policies.
std::string CompareTable(const std::vector<CompareCell>& cells,
                         const std::vector<std::string>& problems,
                         const std::vector<std::string>& policies);

/// compare.json: {"budget", "policies", "problems", "cells": [...], "geomean": {...}}.
nlohmann::json CompareJson(const CompareOptions& options, const std::vector<CompareCell>& cells,
                           const std::vector<std::string>& problems);

}  // namespace kernelevolve::cli
