#include "cli/machine_peaks.h"

#include <algorithm>

#include <fmt/format.h>

#include "platforms/cpu/bandwidth_probe.h"

namespace kernelevolve::cli {

bool AttachMachinePeaks(core::MachineContext& machine, const std::filesystem::path& cache_dir,
                        bool remeasure, bool quiet) {
  platforms::cpu::PeakProbeOptions options;
  options.threads = std::max(1, machine.threads);
  const auto path = platforms::cpu::PeaksCachePath(cache_dir, machine.cpu_model, options.threads);
  const bool cached = !remeasure && platforms::cpu::ReadPeaksCache(path, machine.cpu_model, options.threads);
  if (!cached && !quiet) {
    fmt::print(stderr, "measuring this machine's copy bandwidth and FMA peak on {} threads (once; cached in {})...\n",
               options.threads, path.string());
  }
  try {
    bool measured = false;
    auto record = platforms::cpu::LoadOrMeasurePeaks(cache_dir, machine.cpu_model, options, remeasure, &measured);
    machine.copy_bandwidth_gbps = record.copy_bandwidth_gbps;
    machine.peak_gflops = record.peak_gflops;
    machine.peaks_measured_utc = record.measured_utc;
    if (measured && !quiet) {
      fmt::print(stderr, "copy bandwidth {:.1f} GB/s, FMA peak {:.0f} GFLOP/s\n", record.copy_bandwidth_gbps,
                 record.peak_gflops);
    }
    return true;
  } catch (const std::exception& e) {
    fmt::print(stderr, "warning: no roofline figures for this run: {}\n", e.what());
    return false;
  }
}

}  // namespace kernelevolve::cli
