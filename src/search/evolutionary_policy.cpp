#include "search/evolutionary_policy.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::search {
namespace {

double Fitness(const Tree& tree, int64_t id) {
  const Node& n = tree.Get(id);
  return n.evaluation.correct ? std::max(0.0, n.evaluation.fitness) : 0.0;
}

/// True when a is fitter than b (ties: the earlier node).
bool Fitter(const Tree& tree, int64_t a, int64_t b) {
  const double fa = Fitness(tree, a);
  const double fb = Fitness(tree, b);
  return fa != fb ? fa > fb : a < b;
}

}  // namespace

EvolutionaryPolicy::EvolutionaryPolicy(const PolicyOptions& options)
    : options_(options), rng_(options.seed) {
  if (options_.islands < 1) throw core::InvalidInputError("--islands must be at least 1");
  if (options_.migration_interval < 1) {
    throw core::InvalidInputError("--migration-interval must be at least 1");
  }
  if (options_.population_size < 2 || options_.tournament_size < 1) {
    throw core::InvalidInputError("evolutionary policy: population >= 2 and tournament >= 1");
  }
  islands_.resize(static_cast<size_t>(options_.islands));
}

std::optional<int64_t> EvolutionaryPolicy::Tournament(const Tree& tree, int island,
                                                      const std::vector<int64_t>& taken) {
  std::vector<int64_t> members;
  for (int64_t id : islands_[island]) {
    if (!tree.IsExhausted(id) && std::find(taken.begin(), taken.end(), id) == taken.end()) {
      members.push_back(id);
    }
  }
  if (members.empty()) return std::nullopt;
  int64_t winner = -1;
  for (int t = 0; t < options_.tournament_size; ++t) {
    const int64_t pick = members[rng_.UniformIndex(members.size())];
    if (winner < 0 || Fitter(tree, pick, winner)) winner = pick;
  }
  return winner;
}

void EvolutionaryPolicy::Join(const Tree& tree, int island, int64_t id) {
  auto& pop = islands_[island];
  if (std::find(pop.begin(), pop.end(), id) != pop.end()) return;
  pop.push_back(id);
  if (static_cast<int>(pop.size()) <= options_.population_size) return;
  auto worst = pop.begin();
  for (auto it = pop.begin(); it != pop.end(); ++it) {
    if (Fitter(tree, *worst, *it)) worst = it;  // *it is less fit (or as fit and older)
  }
  pop.erase(worst);
}

void EvolutionaryPolicy::Migrate(const Tree& tree) {
  const int count = options_.islands;
  std::vector<int64_t> best(count, -1);
  for (int i = 0; i < count; ++i) {
    for (int64_t id : islands_[i]) {
      if (best[i] < 0 || Fitter(tree, id, best[i])) best[i] = id;
    }
  }
  for (int i = 0; i < count; ++i) {
    if (best[i] >= 0) Join(tree, (i + 1) % count, best[i]);
  }
}

std::vector<int64_t> EvolutionaryPolicy::Select(const Tree& tree, int k) {
  std::vector<int64_t> out;
  const int count = options_.islands;
  for (int s = 0; s < k; ++s) {
    const int island = static_cast<int>(turns_ % count);
    const int64_t generation = turns_ / count;
    if (island == 0 && generation > 0 && generation % options_.migration_interval == 0) {
      Migrate(tree);
    }
    ++turns_;
    std::optional<int64_t> parent = Tournament(tree, island, out);
    int home = island;
    if (!parent && !tree.IsExhausted(kRootId) &&
        std::find(out.begin(), out.end(), kRootId) == out.end()) {
      parent = kRootId;
    }
    for (int step = 1; !parent && step < count; ++step) {
      home = (island + step) % count;
      parent = Tournament(tree, home, out);
    }
    if (!parent) break;
    outstanding_.emplace_back(*parent, *parent == kRootId ? island : home);
    out.push_back(*parent);
  }
  return out;
}

void EvolutionaryPolicy::Notify(Tree& tree, const Node& node) {
  int island = -1;
  auto it = std::find_if(outstanding_.begin(), outstanding_.end(),
                         [&](const auto& o) { return o.first == node.parent_id; });
  if (it != outstanding_.end()) {
    island = it->second;
    outstanding_.erase(it);
  } else if (node.parent_id == kRootId) {
    island = static_cast<int>(drafts_joined_ % options_.islands);
  } else {
    island = std::max(0, tree.Stats(node.parent_id).island) % options_.islands;
  }
  if (node.parent_id == kRootId) ++drafts_joined_;
  tree.MutableStats(node.id).island = island;
  Join(tree, island, node.id);
}

void EvolutionaryPolicy::OnExhausted(int64_t id) {
  for (auto it = outstanding_.rbegin(); it != outstanding_.rend(); ++it) {
    if (it->first == id) {
      outstanding_.erase(std::next(it).base());
      return;
    }
  }
}

nlohmann::json EvolutionaryPolicy::SaveState() const {
  nlohmann::json outstanding = nlohmann::json::array();
  for (const auto& [parent, island] : outstanding_) outstanding.push_back({parent, island});
  return {{"rng", rng_.Save()},
          {"turns", turns_},
          {"drafts_joined", drafts_joined_},
          {"islands", islands_},
          {"outstanding", outstanding}};
}

void EvolutionaryPolicy::RestoreState(Tree& tree, const nlohmann::json& state) {
  islands_.assign(static_cast<size_t>(options_.islands), {});
  outstanding_.clear();
  if (state.is_object()) {
    rng_.Restore(state.value("rng", nlohmann::json()));
    turns_ = state.value("turns", int64_t{0});
    drafts_joined_ = state.value("drafts_joined", int64_t{0});
    const auto saved = state.value("islands", std::vector<std::vector<int64_t>>{});
    if (static_cast<int>(saved.size()) != options_.islands) {
      throw core::InvalidInputError(fmt::format(
          "saved search state has {} islands but --islands is {}", saved.size(), options_.islands));
    }
    islands_ = saved;
    for (const auto& o : state.value("outstanding", nlohmann::json::array())) {
      outstanding_.emplace_back(o.at(0).get<int64_t>(), o.at(1).get<int>());
    }
    return;
  }
  // No saved state: place every node on its recorded island, else round-robin.
  const auto& nodes = tree.Nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    int island = nodes[i].stats.island;
    if (island < 0 || island >= options_.islands) {
      island = static_cast<int>(i % static_cast<size_t>(options_.islands));
      tree.MutableStats(nodes[i].id).island = island;
    }
    if (nodes[i].parent_id == kRootId) ++drafts_joined_;
    Join(tree, island, nodes[i].id);
  }
}

}  // namespace kernelevolve::search
