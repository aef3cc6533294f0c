// Roofline figures of a candidate: bytes moved and FLOPs per call from the problem, and
// where a measured latency puts it against the machine's measured peaks.
//
// Model: S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual
// performance model for multicore architectures", CACM 52(4), 2009. Attainable
// FLOP/s = min(peak FLOP/s, arithmetic intensity x peak bandwidth); a kernel whose
// intensity (FLOP per byte of compulsory traffic) is below the machine balance
// (peak FLOP/s / peak bandwidth) is memory-bound. The counting rules are in
// docs/measuring.md ("Roofline").
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/evaluation.h"
#include "core/op_graph.h"
#include "core/problem.h"

namespace kernelevolve::eval {

/// Machine peaks the figures are measured against (platforms/cpu/bandwidth_probe.h).
struct MachinePeaks {
  double copy_bandwidth_gbps = 0;  // STREAM copy, 1e9 bytes/s (read + write); 0: unknown
  double peak_gflops = 0;          // float32 FMA throughput, 1e9 FLOP/s; 0: unknown
};

/// Work of one call of the problem.
struct WorkEstimate {
  /// Compulsory traffic: every ABI input (parameters included) read once plus every
  /// output written once, in bytes. Intermediates and re-reads are not counted, so
  /// a kernel can never move fewer bytes than this.
  int64_t bytes = 0;
  /// FLOP estimate from the op graph (EstimateFlops); 0 when the graph is empty.
  double flops = 0;
  /// Ops counted by the default rule (one FLOP per output element) because the model
  /// does not know them, as "aten.NAME"; empty when every op is known.
  std::vector<std::string> assumed_ops;
};

/// Sum of NumBytes() of problem.inputs and problem.outputs.
int64_t CompulsoryBytes(const core::Problem& problem);

/// FLOPs of one call of `graph`, by op (the name between "aten." and the overload):
///  - views and copies (view, reshape, clone, detach, alias, expand, permute, ...): 0;
///  - elementwise ops: 1 per output element; transcendental ones (exp, tanh, erf,
///    gelu, ...) count as one too, although they cost 10-30 instructions;
///  - reductions (sum, mean, amax, max, prod, ...): 1 per element of the first input;
///  - softmax / log_softmax: 5 per input element (max, subtract, exp, sum, divide or
///    subtract the log);
///  - mm, bmm, matmul, addmm, baddbmm, linear, mv, addmv, dot: 2 x output elements x K
///    (K = last dim of the first matrix operand);
///  - convolution: 2 x output elements x (input channels / groups) x window
///    (transposed: 2 x input elements x (output channels / groups) x window);
///  - attention (aten._scaled_dot_product_flash_attention_for_cpu): 4 B H L S E, half
///    when causal (the two products; the softmax is not counted);
///  - max / average pooling: output elements x window;
///  - any other op: 1 per output element, and its name is added to `assumed_ops`
///    (when not null).
double EstimateFlops(const core::OpGraph& graph, std::vector<std::string>* assumed_ops = nullptr);

/// CompulsoryBytes and EstimateFlops of `problem`.
WorkEstimate EstimateWork(const core::Problem& problem);

/// Machine balance in FLOP per byte: peak_gflops / copy_bandwidth_gbps; 0 when either
/// is unknown.
double MachineBalance(const MachinePeaks& peaks);

/// Intensity below which a problem counts as memory-bound when the FLOP peak is
/// unknown: 1 FLOP/byte, below the balance of any multicore CPU with SIMD FMA units
/// (Williams et al. 2009 list 0.5-4 for 2008 machines; current x86 cores are near 10).
inline constexpr double kFallbackBalance = 1.0;

/// Roofline figures of one call that takes `seconds_per_call` (> 0; the kernel-only
/// median). achieved_gbps = bytes / s / 1e9, achieved_gflops = flops / s / 1e9.
/// bound = "memory" when intensity < MachineBalance (kFallbackBalance when the FLOP
/// peak is unknown), else "compute"; "unknown" when the copy bandwidth is unknown,
/// the work is zero or seconds_per_call <= 0. fraction = achieved / peak of the
/// bounding resource (0 when that peak is unknown). It can exceed 1.0 when the
/// working set stays in cache: the peak is the DRAM copy bandwidth.
core::RooflineFigures ComputeRoofline(const WorkEstimate& work, double seconds_per_call,
                                      const MachinePeaks& peaks);

/// The figures as JSON: {"bytes_per_call", "flops_per_call", "arithmetic_intensity",
/// "achieved_gbps", "achieved_gflops", "bound", "fraction"}.
nlohmann::json RooflineToJson(const core::RooflineFigures& figures);

/// "41% of copy bw", "12% of peak FLOP/s", or "-" when unknown (tables, progress line).
std::string RooflineShort(const core::RooflineFigures& figures);

}  // namespace kernelevolve::eval
