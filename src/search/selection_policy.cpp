#include "search/selection_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "search/evolutionary_policy.h"
#include "search/mcts_policy.h"
#include "search/random_policy.h"
#include "search/ucb1_policy.h"

namespace kernelevolve::search {

std::vector<std::string> PolicyNames() {
  return {"greedy", "ucb1", "mcts", "evolutionary", "random"};
}

std::unique_ptr<SelectionPolicy> MakePolicy(const std::string& name, const PolicyOptions& options) {
  if (!(options.ucb_c >= 0)) {
    throw core::InvalidInputError(fmt::format("--ucb-c {}: must be a number >= 0", options.ucb_c));
  }
  if (name == "greedy") return std::make_unique<GreedyPolicy>();
  if (name == "ucb1") return std::make_unique<Ucb1Policy>(options.ucb_c);
  if (name == "mcts") return std::make_unique<MctsPolicy>(options.ucb_c);
  if (name == "evolutionary") return std::make_unique<EvolutionaryPolicy>(options);
  if (name == "random") return std::make_unique<RandomPolicy>(options.seed);
  throw core::InvalidInputError(fmt::format("--policy {}: unknown policy (available: {})", name,
                                            fmt::join(PolicyNames(), ", ")));
}

}  // namespace kernelevolve::search
