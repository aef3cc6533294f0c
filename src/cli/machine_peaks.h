// The machine's measured peaks for a run's roofline figures (issue 5), read from the
// per-machine cache or measured once (platforms/cpu/bandwidth_probe.h).
#pragma once

#include <filesystem>

#include "core/machine.h"

namespace kernelevolve::cli {

/// Fills machine.copy_bandwidth_gbps, peak_gflops and peaks_measured_utc for
/// machine.threads threads from `<cache_dir>/machine_<hash>.json`, measuring (and
/// caching) when the file is missing or `remeasure` is set; a line on stderr says so
/// unless `quiet`. Never throws: when the probe fails, a warning is printed, the fields
/// stay 0 and the run goes on without roofline fractions. Returns whether peaks are known.
bool AttachMachinePeaks(core::MachineContext& machine, const std::filesystem::path& cache_dir,
                        bool remeasure, bool quiet);

}  // namespace kernelevolve::cli
