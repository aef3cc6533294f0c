#include "cli/knowledge_hooks.h"

#include <fmt/format.h>

#include <exception>

#include "core/candidate.h"
#include "knowledge/knowledge_paths.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

void Warn(KnowledgeSession& session, const std::string& what, const std::exception& e) {
  std::string line = fmt::format("{}: {}", what, e.what());
  fmt::print(stderr, "kernelevolve: warning: knowledge base {}; the run goes on without it\n", line);
  session.warnings.push_back(std::move(line));
}

nlohmann::json PriorJson(const knowledge::ExperienceMatch& m) {
  const knowledge::Experience& x = m.experience;
  return {{"experience_id", x.id},
          {"problem", x.problem},
          {"run_dir", x.run_dir},
          {"source_path", x.run_dir.empty() ? "" : (fs::path(x.run_dir) / "best_kernel.cpp").string()},
          {"source_hash", x.source_hash},
          {"template", x.template_name},
          {"knobs", x.knobs},
          {"shape_class", x.shape_class},
          {"shape_distance", m.shape_distance},
          {"same_machine", m.same_machine},
          {"fitness", x.fitness},
          {"speedup", x.speedup},
          {"evaluations", x.evaluations},
          {"evaluations_to_best", x.evaluations_to_best},
          {"why", m.why}};
}

/// Fills the fields that compare this run with the prior best.
/// `prior_hash`: the seed's source as this run evaluated it.
void CompareWithPrior(const knowledge::ExperienceMatch& prior, const std::string& prior_hash,
                      const std::vector<search::Node>& nodes, nlohmann::json& doc) {
  doc["first_evaluated_is_prior"] =
      !nodes.empty() && core::ContentHash(nodes.front().candidate.source) == prior_hash;
  doc["prior_node_id"] = nullptr;
  doc["prior_node_fitness"] = nullptr;
  doc["evaluations_to_reach_prior_best"] = nullptr;
  const double target = kReachTolerance * prior.experience.fitness;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const search::Node& n = nodes[i];
    if (doc["prior_node_id"].is_null() && core::ContentHash(n.candidate.source) == prior_hash) {
      doc["prior_node_id"] = n.id;
      doc["prior_node_fitness"] = n.evaluation.fitness;
    }
    if (doc["evaluations_to_reach_prior_best"].is_null() && n.evaluation.correct &&
        n.evaluation.fitness >= target) {
      doc["evaluations_to_reach_prior_best"] = static_cast<int>(i + 1);
    }
  }
}

/// Runs options.adapt_seed over the plan's seeds, best first, until `keep` survive: a
/// dropped prior makes way for the next match. Keeps seeds and seed_sources in step.
void AdaptSeeds(KnowledgeSession& session, size_t keep) {
  knowledge::WarmStartPlan& plan = session.plan;
  std::vector<core::Candidate> seeds;
  std::vector<knowledge::ExperienceMatch> sources;
  for (size_t i = 0; i < plan.seeds.size() && seeds.size() < keep; ++i) {
    const knowledge::Experience& x = plan.seed_sources[i].experience;
    std::string why;
    std::optional<core::Candidate> seed;
    try {
      seed = session.options.adapt_seed(plan.seeds[i], &why);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!seed) {
      session.dropped_seeds.push_back({{"experience_id", x.id}, {"why", why}});
      if (!session.options.quiet) {
        fmt::print(stderr, "warm start: the prior kernel of experience {} ({}) is not evaluated: {}\n", x.id,
                   x.problem, why);
      }
      continue;
    }
    const bool regenerated = seed->source != plan.seeds[i].source;
    const bool fitted = seed->knobs != plan.seeds[i].knobs;
    if (regenerated) {
      seed->rationale += fitted ? "; written again for this problem's graph and shapes with the knobs above"
                                : "; written again for this problem's graph and shapes with the prior's knobs";
    }
    if (seeds.empty()) {
      session.seed_regenerated = regenerated;
      session.seed_knobs = seed->knobs;
      session.seed_knobs_fitted = fitted;
    }
    seeds.push_back(std::move(*seed));
    sources.push_back(plan.seed_sources[i]);
  }
  plan.seeds = std::move(seeds);
  plan.seed_sources = std::move(sources);
}

}  // namespace

KnowledgeSession StartKnowledge(const KnowledgeHookOptions& options, const core::Problem& problem) {
  KnowledgeSession session;
  session.options = options;
  if (options.disabled) return session;
  session.kb_path = options.kb_path.empty() ? knowledge::DefaultKnowledgeDbPath(options.cache_dir)
                                            : options.kb_path;
  try {
    session.kb = std::make_unique<knowledge::KnowledgeBase>(
        knowledge::KnowledgeBase::Open(session.kb_path, knowledge::DefaultCorpusDirs()));
  } catch (const std::exception& e) {
    Warn(session, fmt::format("'{}' cannot be opened", session.kb_path.string()), e);
    return session;
  }
  try {
    auto key = knowledge::ExperienceKeyFor(problem, options.platform, options.machine, options.isa);
    knowledge::WarmStartOptions plan_options;
    // With an adapter, the next matches stand by for a prior it drops.
    if (options.adapt_seed) plan_options.max_seeds = kSeedCandidates;
    session.plan = knowledge::PlanWarmStart(*session.kb, key, plan_options);
    for (const std::string& why : session.plan.unreadable) {
      fmt::print(stderr, "kernelevolve: warning: {}; that record is skipped\n", why);
      session.warnings.push_back(why);
    }
  } catch (const std::exception& e) {
    Warn(session, fmt::format("'{}': cannot look up experiences", session.kb_path.string()), e);
  }
  if (session.options.adapt_seed) AdaptSeeds(session, knowledge::WarmStartOptions{}.max_seeds);
  if (!session.plan.seeds.empty()) session.seed_hash = core::ContentHash(session.plan.seeds.front().source);
  if (!options.quiet && !session.plan.seed_sources.empty()) {
    const auto& x = session.plan.seed_sources.front().experience;
    fmt::print(stderr, "warm start: evaluating the best prior kernel first (experience {}, {:.2f}x, {}{})\n",
               x.id, x.speedup, session.plan.seed_sources.front().why,
               !session.seed_regenerated ? ""
               : session.seed_knobs_fitted
                   ? fmt::format("; written again for this problem, its knobs fitted to this run's space: {}",
                                 session.seed_knobs.dump())
                   : "; written again for this problem with its knobs");
  }
  return session;
}

nlohmann::json FinishKnowledge(KnowledgeSession& session, const core::Problem& problem,
                               const std::vector<search::Node>& nodes, double confirmed_speedup,
                               const fs::path& run_dir) {
  nlohmann::json doc = {{"enabled", session.kb != nullptr}, {"kb", session.kb_path.string()}};
  if (session.options.disabled) doc["disabled_by"] = "--no-kb";
  try {
    doc["op_signature"] = knowledge::OpSignature(problem);
    doc["shape_class"] = knowledge::ShapeClassOf(knowledge::InputShapes(problem)).Text();
    doc["matches"] = session.plan.matches.size();
    doc["seeded"] = !session.plan.seeds.empty();
    doc["reach_tolerance"] = kReachTolerance;
    doc["prior"] = nullptr;
    if (!session.plan.seed_sources.empty()) {
      const auto& prior = session.plan.seed_sources.front();
      doc["prior"] = PriorJson(prior);
      doc["prior"]["regenerated"] = session.seed_regenerated;
      doc["prior"]["knobs_fitted"] = session.seed_knobs_fitted;
      doc["prior"]["seed_knobs"] = session.seed_knobs;
      CompareWithPrior(prior, session.seed_hash, nodes, doc);
    }
    doc["dropped_seeds"] = session.dropped_seeds;
  } catch (const std::exception& e) {
    Warn(session, "cannot summarize the warm start", e);
  }
  doc["recorded_experience_id"] = nullptr;
  if (session.kb) {
    try {
      knowledge::DistillContext context;
      context.platform = session.options.platform;
      context.machine = session.options.machine;
      context.isa = session.options.isa;
      context.run_dir = fs::absolute(run_dir).lexically_normal().string();
      context.confirmed_speedup = confirmed_speedup;
      if (auto x = knowledge::DistillExperience(problem, nodes, context)) {
        doc["recorded_experience_id"] = session.kb->RecordExperience(*x);
      }
    } catch (const std::exception& e) {
      Warn(session, fmt::format("'{}': cannot record the experience", session.kb_path.string()), e);
    }
  }
  doc["warnings"] = session.warnings;
  return doc;
}

}  // namespace kernelevolve::cli
