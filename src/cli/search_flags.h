// The command-line flags that `optimize` (cli/kernelevolve_main.cpp) and `bench`
// (cli/bench_command.cpp) share: same name, default and meaning, declared once so that
// the two commands cannot drift apart. Flags whose meaning differs per command (--budget
// and --time-limit per problem in a bench, --kb, --out, --quiet, --profile-top, ...) stay
// with each command.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/paths.h"

namespace kernelevolve::cli {

/// Adds to `cmd`, in this order, bound to the same-named fields of `o` (OptimizeOptions or
/// BenchOptions): --threads (0: all CPUs), --seeds (3), --drafts (0: max(3, budget/10)),
/// --seed (0), --policy (greedy), --min-time (0.2 s), --candidate-timeout (60 s),
/// --omp-wait-policy (passive | active; default OpenMP's own), --cache-dir (default
/// DefaultCacheDir), --fixtures (files | device; default $KE_FIXTURES, else files),
/// --remeasure-machine and --profile-timeout (240 s).
template <class Options>
void AddSharedSearchFlags(CLI::App& cmd, Options& o) {
  cmd.add_option("--threads", o.threads,
                 "threads for candidates and the eager baseline (0: all CPUs)")
      ->default_val(0);
  cmd.add_option("--seeds", o.seeds, "seeded input sets every candidate is checked on")
      ->default_val(3);
  cmd.add_option("--drafts", o.drafts, "independent first candidates (0: max(3, budget/10))")
      ->default_val(0);
  cmd.add_option("--seed", o.seed, "seed of every random choice of the search")->default_val(0);
  cmd.add_option("--policy", o.policy, "selection policy")->default_val("greedy");
  cmd.add_option("--min-time", o.min_time_seconds, "timed seconds per measurement")
      ->default_val(0.2);
  cmd.add_option("--candidate-timeout", o.candidate_timeout_seconds,
                 "wall-clock limit per candidate run, seconds")
      ->default_val(60);
  cmd.add_option("--omp-wait-policy", o.omp_wait_policy,
                 "OMP_WAIT_POLICY for eager PyTorch and candidates alike: passive suits a busy "
                 "or oversubscribed machine (default: OpenMP's own, as PyTorch runs)")
      ->check(CLI::IsMember({"passive", "active"}));
  cmd.add_option("--cache-dir", o.cache_dir, fmt::format("build cache ({})", kCacheDirDefaultHelp));
  cmd.add_option("--fixtures", o.fixtures,
                 "GPU targets: where the input sets and reference outputs live: files (safetensors under "
                 "OUT/fixtures) or device (drawn again on the GPU from their seeds, no files: for inputs of several "
                 "GB; fixed-shape problems only); default $KE_FIXTURES, else files")
      ->transform(CLI::IsMember({"files", "device"}, CLI::ignore_case));
  cmd.add_flag("--remeasure-machine", o.remeasure_machine,
               "measure the copy bandwidth and FMA peak again instead of using the cached figures");
  cmd.add_option("--profile-timeout", o.profile_timeout_seconds,
                 "wall-clock limit of ncu per profiled candidate, seconds")
      ->default_val(240);
}

}  // namespace kernelevolve::cli
