// Nsight Compute profiles for tests of what reads them (diagnosis rules, the template
// and LLM operators, the search loop's profiler hook, summaries), written by hand.
#pragma once

#include <optional>
#include <string>

#include "core/evaluation.h"
#include "core/kernel_profile.h"

namespace kernelevolve::testing_util {

/// An "ok" profile of one kernel whose totals are `duration_us` (µs), DRAM and SM
/// throughput and achieved occupancy (percent of peak) and registers per thread;
/// std::nullopt: not measured. A non-empty `top_stall` makes the top stalls
/// {top_stall: 50 %, share 0.6} then {"wait": 10 %, share 0.12}; empty: none.
inline core::KernelProfile OkNcuProfile(double duration_us, std::optional<double> dram_pct,
                                        std::optional<double> occupancy_pct,
                                        std::optional<double> sm_pct,
                                        std::optional<double> registers,
                                        const std::string& top_stall = "") {
  core::KernelProfile p;
  p.status = "ok";
  p.kernels.resize(1);
  p.total.duration_us = duration_us;
  p.total.dram_throughput_pct = dram_pct;
  p.total.achieved_occupancy_pct = occupancy_pct;
  p.total.sm_throughput_pct = sm_pct;
  p.total.registers_per_thread = registers;
  if (!top_stall.empty()) p.total.top_stalls = {{top_stall, 50, 0.6}, {"wait", 10, 0.12}};
  return p;
}

/// A correct, memory-bound evaluation at `roofline_fraction` of the memory roof with
/// speedup `speedup` over eager: what the diagnosis rules read beside a profile.
inline core::Evaluation CorrectMemoryBound(double roofline_fraction, double speedup = 1.2) {
  core::Evaluation ev;
  ev.status = core::Status::kOk;
  ev.correct = true;
  ev.speedup_vs_eager.value = speedup;
  ev.roofline.bound = "memory";
  ev.roofline.fraction = roofline_fraction;
  return ev;
}

}  // namespace kernelevolve::testing_util
