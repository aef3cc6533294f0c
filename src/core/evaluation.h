// Everything measured about one candidate: build, correctness, timing, fitness.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/timing.h"

namespace kernelevolve::core {

/// Comparison of one output tensor of one input set against the reference.
struct OutputCheck {
  int seed_index = 0;           // index into the manifest's seeds (0 for edge cases)
  std::string output;           // "output.0"
  bool passed = false;
  double max_abs_error = 0;
  double max_rel_error = 0;     // |a-b| / max(|b|, tiny)
  int64_t mismatches = 0;       // elements outside atol + rtol * |ref|
  int64_t first_mismatch = -1;  // flat index, -1 if none
  double atol = 0;
  double rtol = 0;
  std::string note;             // "shape mismatch", "NaN where reference is finite", ...
  std::string edge_case;        // "large", "zeros", ... for an edge-case set; empty for a seed
};

/// Where a candidate sits on the roofline (Williams, Waterman, Patterson 2009, "Roofline:
/// an insightful visual performance model", CACM 52(4)); computed by eval/roofline.h from
/// the problem's compulsory traffic and FLOP estimate and the kernel-only median latency.
/// All zero / "unknown" when not computed (failed candidate, no machine peaks).
struct RooflineFigures {
  double bytes_per_call = 0;         // compulsory traffic: inputs read once + outputs written once
  double flops_per_call = 0;         // estimate from the op graph (docs/measuring.md)
  double arithmetic_intensity = 0;   // FLOP per byte
  double achieved_gbps = 0;          // bytes_per_call / kernel_only median, 1e9 bytes/s
  double achieved_gflops = 0;        // flops_per_call / kernel_only median, 1e9 FLOP/s
  /// "memory" (intensity below the machine balance), "compute", or "unknown".
  std::string bound = "unknown";
  /// Memory-bound: achieved_gbps / measured copy bandwidth. Compute-bound: achieved
  /// GFLOP/s / measured peak GFLOP/s. 0 when unknown.
  double fraction = 0;
  bool Known() const { return bound != "unknown"; }
};

struct Evaluation {
  Status status = Status::kWorkerLost;
  std::string message;       // one line: what went wrong, or "ok"
  std::string log_excerpt;   // compiler output / stderr tail, at most a few KiB
  bool correct = false;
  std::vector<OutputCheck> checks;
  TimingStats latency;       // drop-in: outputs allocated per call (headline)
  TimingStats kernel_only;   // outputs preallocated
  /// Eager PyTorch timed right after this candidate (same thread count), so machine
  /// drift hits both alike; unmeasured (n == 0) when no baseline timer was given.
  TimingStats paired_baseline;
  /// The run's fastest eager drop-in call / this candidate's fastest drop-in call
  /// (eval::RobustSpeedupOf), rescored by the search whenever the run's fastest eager
  /// call improves, so that every node of a run is scored against one baseline.
  Speedup speedup_vs_eager;
  double fitness = 0;        // 0 for any failure; speedup_vs_eager.value when correct (eval/fitness.h)
  double build_seconds = 0;
  double run_seconds = 0;
  bool build_cache_hit = false;
  /// Roofline position of a correct, timed candidate (issue 5); unknown otherwise.
  RooflineFigures roofline;
  /// Where it was built, checked and timed when it went through the evaluation queue
  /// (issue 22): the worker's name and machine as a JSON object text
  /// ({"worker", "machine": core::MachineToJson}); "" when evaluated in this process.
  std::string worker;
};

}  // namespace kernelevolve::core
