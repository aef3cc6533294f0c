// The figures of a benchmark suite run (`kernelevolve bench`): one entry per problem,
// and the KernelBench-style totals (correctness rate, fast_p, geometric-mean speedup).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelevolve::report {

/// One problem of the suite, read from its run's result.json.
struct BenchEntry {
  std::string problem;               // file stem
  std::string problem_path;
  /// core::FileContentHash of the problem file when the bench ran it ("" unknown):
  /// `bench --resume` refuses a suite whose file changed since.
  std::string problem_hash;
  std::filesystem::path run_dir;
  /// "correct" (a correct kernel was found), "no_correct_candidate", "unsupported"
  /// (no template covers an op or dtype), "load_error" (the problem file failed to
  /// load), "error" (kernelevolve itself failed on it), "interrupted" (Ctrl-C during it).
  std::string outcome;
  bool correct = false;
  /// The speedup vs eager counted for fast_p and the geomean: the confirmed median of
  /// the interleaved rounds when they ran, else the search-time figure; 0 when not correct.
  double speedup = 0;
  double ci_low = 0;                 // its interval: ci95 when confirmed, else the spread
  double ci_high = 0;
  std::string speedup_source;        // "confirmed" | "search" | "" (not correct)
  double search_speedup = 0;         // best node's search-time speedup
  bool clearly_faster = false;       // confirmed interval above 1.0
  std::string bound = "unknown";     // best kernel's roofline bound: memory | compute | unknown
  double roofline_fraction = 0;      // best kernel's roofline fraction (0: unknown)
  int evaluations = 0;
  double elapsed_seconds = 0;
  std::string stop_reason;
  std::string message;               // why it failed, one line ("" when correct)
  int exit_code = -1;                // optimize's exit code for this problem
  /// GPU targets (issue 6): torch.compile median / best kernel's median, paired in the
  /// runner (result.json gpu.best_speedup_vs_torch_compile); 0 when not measured.
  double speedup_vs_compile = 0;
  bool has_gpu = false;              // result.json has a "gpu" object
};

/// Suite totals. Rates are fractions of `problems` (every finished problem, broken and
/// unsupported ones included: they count as not correct), as KernelBench does.
struct BenchTotals {
  int problems = 0;                  // finished problems (outcome != "interrupted")
  int correct = 0;
  double correct_rate = 0;           // = fast_0
  double fast_0 = 0;
  double fast_1 = 0;
  double fast_1_5 = 0;
  double fast_2 = 0;
  /// Geometric mean of `speedup` over the correct problems (0 when none is correct).
  double geomean_speedup_correct = 0;
  /// Geometric mean over every problem, an incorrect one counting as 1.0 (the PyTorch
  /// reference stays the answer there); 0 when there are no problems.
  double geomean_speedup_all = 0;
  int memory_bound = 0;              // correct problems whose best kernel is memory-bound
  /// Median roofline fraction of those (0 when none); mean of the middle two for an even count.
  double median_memory_roofline_fraction = 0;
  /// Correct problems whose speedup interval spans more than kWideIntervalRatio
  /// (ci_high / ci_low): their figure is counted as measured but is uncertain; the
  /// table names them so a reader re-runs them on a quieter machine.
  std::vector<std::string> wide_interval;
  /// GPU targets (issue 6): the same figures against torch.compile (default mode)
  /// instead of eager. `gpu` is true when any finished entry has a "gpu" object.
  /// fast_p: correct AND speedup_vs_compile > p, over every finished problem
  /// (compile_fast_1 is the share faster than torch.compile). Geomeans as above, over
  /// the correct problems whose torch.compile time was measured (`compile_measured`),
  /// and over all with incorrect or unmeasured ones counted as 1.0.
  bool gpu = false;
  int compile_measured = 0;
  double compile_fast_1 = 0;
  double compile_fast_1_5 = 0;
  double compile_fast_2 = 0;
  double compile_geomean_correct = 0;
  double compile_geomean_all = 0;
};

/// An interval whose high end is more than this many times its low end marks a noisy
/// measurement (a factor of two: the VM's two vCPUs acting as one halves a
/// two-thread kernel's speed; our choice, not a published constant).
inline constexpr double kWideIntervalRatio = 2.0;

/// fast_p of KernelBench (A. Ouyang et al., "KernelBench: Can LLMs Write Efficient GPU
/// Kernels?", arXiv:2502.10517, 2025): the fraction of problems that are correct AND
/// have speedup > p. fast_0 is the correctness rate. Entries with outcome
/// "interrupted" are left out; 0 when none is left.
double FastP(const std::vector<BenchEntry>& entries, double p);

/// Geometric mean of `values` (all > 0: speedups); 0 for none.
double GeoMean(const std::vector<double>& values);

/// Every total of BenchTotals (entries with outcome "interrupted" left out).
BenchTotals SummarizeBench(const std::vector<BenchEntry>& entries);

/// Fills `entry` (problem, path, run_dir and exit_code set by the caller) from a run's
/// result.json document (docs/result_json.md). Never throws: a document without the
/// expected fields gives outcome "error".
BenchEntry BenchEntryFromResult(const nlohmann::json& result, BenchEntry entry);

nlohmann::json BenchEntryToJson(const BenchEntry& entry);
/// The inverse of BenchEntryToJson, for `bench --resume` reading a bench.json back.
/// Never throws: missing fields keep BenchEntry's defaults; a document without
/// "problem" or with an outcome not listed in BenchEntry gives outcome "error" (not
/// correct).
BenchEntry BenchEntryFromJson(const nlohmann::json& doc);
nlohmann::json BenchTotalsToJson(const BenchTotals& totals);

/// The readable table: one row per problem, then the totals (both geomean forms).
std::string BenchTable(const std::vector<BenchEntry>& entries, const BenchTotals& totals);

}  // namespace kernelevolve::report
