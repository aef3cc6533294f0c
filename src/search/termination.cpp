#include "search/termination.h"

namespace kernelevolve::search {

std::optional<std::string> CheckTermination(const TerminationOptions& options, int evaluations,
                                            double elapsed_seconds) {
  if (evaluations >= options.budget) return "budget";
  if (elapsed_seconds >= options.time_limit_seconds) return "time_limit";
  return std::nullopt;
}

}  // namespace kernelevolve::search
