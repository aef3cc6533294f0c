// Hardware-counter profile of one candidate call (issue 6): Nsight Compute metrics per
// kernel and for the whole call, as the GPU runner reports them
// (worker/kernelevolve_worker/ncu_profile.py). Stored per node (store schema v5), put in
// result.json ("profiles") and fed to the diagnosis (operators/template/profile_diagnosis.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernelevolve::core {

/// One warp stall reason (Nsight Compute Profiling Guide, "Warp Stall Reasons").
struct StallReason {
  std::string reason;  // "long_scoreboard", "wait", "lg_throttle", ... (metric name infix)
  double pct = 0;      // smsp__warp_issue_stalled_<reason>_per_warp_active.pct, percent
  double share = 0;    // pct / sum over every stall reason ("selected" left out), 0..1
};

/// Metrics of one kernel, or of a whole call (KernelProfile::total). A value ncu did
/// not report is nullopt. Percentages are 0..100 of the device's peak.
struct KernelMetrics {
  std::string name;                           // kernel name ("" for the total)
  std::optional<double> duration_us;          // gpu__time_duration.sum (ncu locks clocks to base)
  std::optional<double> dram_throughput_pct;  // dram__throughput.avg.pct_of_peak_sustained_elapsed
  std::optional<double> sm_throughput_pct;    // sm__throughput.avg.pct_of_peak_sustained_elapsed
  std::optional<double>
      achieved_occupancy_pct;                  // sm__warps_active.avg.pct_of_peak_sustained_active
  std::optional<double> registers_per_thread;  // launch__registers_per_thread (total: the maximum)
  std::optional<double> block_size;            // launch__block_size (threads; kernels only)
  std::optional<double> grid_size;             // launch__grid_size (blocks; kernels only)
  std::vector<StallReason> top_stalls;         // largest first, at most 3
};

/// The profile of one candidate call.
struct KernelProfile {
  std::string tool = "ncu";
  /// "ok", "unavailable" (no ncu), "not_permitted" (ERR_NVGPUCTRPERM), "timeout",
  /// "failed", or "skipped".
  std::string status = "skipped";
  std::string note;                    // one line when status != "ok"
  std::vector<KernelMetrics> kernels;  // launch order
  KernelMetrics total;                 // durations summed; percentages duration-weighted
  double seconds = 0;                  // wall time the profiler took
  bool Ok() const { return status == "ok"; }
};

/// Reads the runner's gpu_ncu answer (or KernelProfileToJson's output). Missing or
/// null metrics become nullopt. Throws InvalidInputError naming the field on a value
/// of the wrong type.
KernelProfile KernelProfileFromJson(const nlohmann::json& doc);
/// {"tool", "status", "note", "seconds", "kernels": [...], "total": {...}}; a metric
/// without a value is null.
nlohmann::json KernelProfileToJson(const KernelProfile& profile);

}  // namespace kernelevolve::core
