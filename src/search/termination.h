// When the search stops.
#pragma once

#include <optional>
#include <string>

namespace kernelevolve::search {

struct TerminationOptions {
  int budget = 40;                 // evaluations (nodes) at most
  double time_limit_seconds = 600; // wall time of the search loop
};

/// Checks the stop rules in order: budget, then time limit. Returns the stop reason
/// ("budget", "time_limit") or nullopt to go on. ("exhausted" is decided by the loop
/// when neither policy nor operator has anything left.)
std::optional<std::string> CheckTermination(const TerminationOptions& options, int evaluations,
                                            double elapsed_seconds);

}  // namespace kernelevolve::search
