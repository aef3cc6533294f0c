// Diagnosis refined by hardware counters (issue 6): the rule-based Diagnose() of the
// evaluation, then what the Nsight Compute profile of the same kernel says (DRAM and SM
// throughput, achieved occupancy, registers per thread, top warp stall reasons), with
// knob moves of the GPU templates (num_warps, block, num_stages, persistent) first.
#pragma once

#include <string>

#include "core/evaluation.h"
#include "core/kernel_profile.h"
#include "operators/template/diagnosis.h"

namespace kernelevolve::operators {

/// Registers per thread at or above which the register file limits occupancy: 65536
/// registers per SM / 128 = 512 threads = 16 warps of the 64 an SM holds (25%), on every
/// NVIDIA GPU since Volta (CUDA C Programming Guide, "Compute Capabilities" table).
inline constexpr double kHighRegistersPerThread = 128;
/// DRAM throughput (percent of peak) from which a kernel is taken to be at the memory roof.
inline constexpr double kDramRoofPct = 80;
/// Below this DRAM throughput (percent of peak) a memory-bound kernel leaves bandwidth unused.
inline constexpr double kLowDramPct = 60;
/// Achieved occupancy (percent of the SM's warp slots) below which latency is poorly hidden.
inline constexpr double kLowOccupancyPct = 50;
/// SM throughput (percent of peak) from which the SM pipes, not memory, limit a kernel.
inline constexpr double kHighSmPct = 60;
/// Share of a multi-kernel call's time from which one kernel's figures, not the call's
/// duration-weighted totals, decide the rules (a split reduction: partials, combine and
/// element kernels; group_norm's element kernel took 84% of 508 us on the H200).
inline constexpr double kDominantKernelShare = 0.5;

/// One line of the profile's headline figures (whole call), e.g. "ncu: 128.5 us in 2
/// kernels, DRAM 53% of peak, SM 25%, occupancy 37%, 168 registers/thread, stalls:
/// long_scoreboard 58%, lg_throttle 14%, wait 13%"; for a failed profile "ncu: <note>".
std::string ProfileLine(const core::KernelProfile& profile);

/// Diagnose(evaluation), refined by `profile` when the evaluation is correct and the
/// profile is ok; otherwise exactly Diagnose(evaluation). First matching rule wins:
///  - registers >= kHighRegistersPerThread -> "N registers per thread cap occupancy:
///    more warps per block, fewer stages" (num_warps 8, num_warps 16, num_stages 1, block any);
///  - DRAM >= kDramRoofPct -> kNearRoofline: "DRAM at X% of peak: at the memory roof,
///    only fewer bytes (fusion) help" (block any, num_warps any);
///  - DRAM < kLowDramPct and occupancy < kLowOccupancyPct -> kMemoryBound: "low DRAM
///    throughput and low occupancy: more warps / rows per program" (num_warps 8,
///    num_warps 16, persistent yes, block any);
///  - SM >= kHighSmPct and DRAM < kLowDramPct -> kComputeBound: "SM pipes busy: fewer
///    instructions per element" (variant any, num_warps any);
///  - top stall long_scoreboard and DRAM < kLowDramPct -> "warps wait on global loads:
///    more loads in flight" (num_stages 3, num_stages 2, block any, persistent yes);
///  - top stall mio_throttle or lg_throttle and DRAM < kLowDramPct -> kMemoryBound:
///    "warps wait on the load/store pipes: fewer memory instructions per element"
///    (num_stages 1, block any, num_warps any);
///  - otherwise the evaluation's moves stay, the profile line is appended.
/// When one kernel of several takes kDominantKernelShare of the time, the rules read its
/// figures instead of the totals, and the text names it ("kernel K takes P% of the time
/// at DRAM D% of peak (stalls: S first)").
/// The text is Diagnose()'s, then "; " + ProfileLine + ": " + the advice; the named
/// stall reasons appear in it. Moves of the matched rule come before Diagnose()'s.
Diagnosis DiagnoseWithProfile(const core::Evaluation& evaluation,
                              const core::KernelProfile& profile);

}  // namespace kernelevolve::operators
