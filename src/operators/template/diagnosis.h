// Rule-based diagnosis of an evaluated candidate: what limits it and which knob moves
// to try first. Used by the template operator to order a parent's children and to say
// in each child's rationale why it exists; written so the LLM operator can put the same
// text into its prompt.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/evaluation.h"

namespace kernelevolve::operators {

/// What limits a candidate, most urgent first.
enum class Bottleneck {
  kBuildFailed,   // compile_error
  kRunFailed,     // crash, timeout, out_of_memory, runtime_error, rejected_by_check, worker_lost
  kIncorrect,     // ran, outputs outside tolerance
  kUnmeasured,    // correct, but no roofline figures (no machine peaks, not timed)
  kMemoryBound,   // memory-bound, below kNearRooflineFraction of the copy bandwidth, or
                  // above kCacheResidentFraction (cache-resident)
  kNearRoofline,  // memory-bound, kNearRooflineFraction .. kCacheResidentFraction
  kComputeBound,  // arithmetic intensity above the machine balance
};

/// "build_failed", "run_failed", "incorrect", "unmeasured", "memory_bound",
/// "near_roofline", "compute_bound".
std::string BottleneckName(Bottleneck bottleneck);

/// A knob move worth trying: set `knob` to `value` (null: any other value of `knob`).
/// Knob names are the templates' (operators/template/knob_space.h): variant, math,
/// threads, block, rows_per_chunk, i_block, unroll; a template skips names it does not have.
struct KnobPreference {
  std::string knob;
  nlohmann::json value;
};

struct Diagnosis {
  Bottleneck bottleneck = Bottleneck::kUnmeasured;
  /// One line: the outcome, then the advice, e.g. "parent correct at 1.20x, memory-bound
  /// at 40% of copy bandwidth: vectorize / parallelize / fuse passes".
  std::string text;
  /// Moves to try first, in order.
  std::vector<KnobPreference> preferred_moves;
  /// After the preferred moves: true -> each knob's safe value next (after a failure),
  /// false -> each knob's fast value next.
  bool prefer_safe = false;
};

/// At or above this fraction of the copy bandwidth a memory-bound kernel is "near the
/// roofline": STREAM copy is itself the best a plain loop reaches, so the last ~10% is
/// within run-to-run noise on a shared machine.
inline constexpr double kNearRooflineFraction = 0.9;

/// Above this fraction of the DRAM copy bandwidth the timed working set is taken to
/// stay in cache (10% above 1.0 for run-to-run noise): the DRAM roof does not bind.
inline constexpr double kCacheResidentFraction = 1.1;

/// The diagnosis of one evaluation, by these rules, first match wins:
///  - compile_error -> kBuildFailed: "back to the settings that built: scalar math, no
///    unroll" (variant scalar, math libm, unroll 1);
///  - any other non-ok status -> kRunFailed: "back to safe settings: one thread, scalar
///    math, no unroll" (threads 1, variant scalar, math libm, unroll 1);
///  - ok but not correct -> kIncorrect: "back to safe accumulation / scalar math"
///    (variant scalar, math libm, variant three_pass, threads 1, unroll 1);
///  - correct without roofline figures -> kUnmeasured: no advice, fast values first;
///  - memory-bound below kNearRooflineFraction -> kMemoryBound: "memory-bound at 40% of
///    copy bandwidth: vectorize / parallelize / fuse passes" (threads all, variant
///    vectorized, math vectorized, variant online, variant two_pass_store, unroll 4);
///  - memory-bound above kCacheResidentFraction -> kMemoryBound: "at 213% of copy
///    bandwidth (working set in cache, the DRAM roof does not bind): vectorize /
///    parallelize, then block tuning" (threads all, vectorized, then block sizes);
///  - memory-bound from kNearRooflineFraction to kCacheResidentFraction -> kNearRoofline:
///    "within 10% of copy bandwidth (95%): only thread/block tuning left" (block,
///    rows_per_chunk, i_block, unroll: any value);
///  - compute-bound -> kComputeBound: "compute-bound at 12% of FMA peak: vectorize the
///    math, unroll, use every thread" (math vectorized, variant vectorized, unroll 4,
///    unroll 2, threads all).
/// The text starts with the outcome: "parent failed (incorrect: <message>)" or "parent
/// correct at 1.80x".
Diagnosis Diagnose(const core::Evaluation& evaluation);

}  // namespace kernelevolve::operators
