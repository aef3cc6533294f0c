// The knowledge base's two hooks into `kernelevolve optimize` (issue 8): before the
// search, open the knowledge base and plan the warm start; after it, record what the
// run learned. Neither ever fails the run: knowledge-base problems become one warning
// line on stderr and a note in result.json.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/candidate.h"
#include "core/problem.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/warm_start.h"
#include "search/node.h"

namespace kernelevolve::cli {

/// Writes a prior kernel again for the problem at hand before it is evaluated (a
/// template kernel has its sizes in its text: operators::TemplateOperator::Rederive);
/// nullopt, with the reason in `why`, drops the seed (its experience stays a note).
using SeedAdapter = std::function<std::optional<core::Candidate>(const core::Candidate& prior, std::string* why)>;

struct KnowledgeHookOptions {
  std::filesystem::path kb_path;    // --kb; empty: knowledge::DefaultKnowledgeDbPath(cache_dir)
  bool disabled = false;            // --no-kb
  std::filesystem::path cache_dir;  // the run's build cache folder
  bool quiet = false;               // no "warm start: ..." line on stderr
  std::string platform = "cpu";     // the --target
  std::string machine;              // CPU model (core::MachineContext::cpu_model)
  std::string isa;                  // its instruction set (core::CpuIsa::level)
  SeedAdapter adapt_seed;           // null: prior kernels run as stored
};

/// State carried from StartKnowledge to FinishKnowledge.
struct KnowledgeSession {
  std::unique_ptr<knowledge::KnowledgeBase> kb;  // null: disabled or failed to open
  knowledge::WarmStartPlan plan;                 // seeds and notes for search::SearchOptions
  KnowledgeHookOptions options;
  std::filesystem::path kb_path;
  std::vector<std::string> warnings;
  /// ContentHash of plan.seeds.front() as evaluated (after adapt_seed); empty: no seed.
  std::string seed_hash;
  bool seed_regenerated = false;  // adapt_seed changed the first seed's source
  bool seed_knobs_fitted = false;  // ... and its knobs (fitted to this run's knob space)
  nlohmann::json seed_knobs;       // the first seed's knobs as evaluated
  /// {"experience_id", "why"} of each prior kernel adapt_seed dropped.
  nlohmann::json dropped_seeds = nlohmann::json::array();
};

/// Opens the knowledge base (indexing changed corpus files) and plans the warm start for
/// `problem`; options.adapt_seed rewrites (or drops) each prior kernel, best first, until
/// one survives (at most kSeedCandidates tried), and a dropped one gets a "warm start:
/// ..." line on stderr unless quiet. Copy plan.seeds into
/// SearchOptions::seed_candidates and plan.notes into SearchOptions::experiences.
/// Never throws (an adapter that throws drops its seed, the exception as the reason).
KnowledgeSession StartKnowledge(const KnowledgeHookOptions& options, const core::Problem& problem);

/// Distills the run (`nodes` in evaluation order) into an experience and records it;
/// returns the "warm_start" object for result.json (docs/result_json.md): the prior
/// kernel that was seeded, whether it was evaluated first, the evaluations this run
/// needed to reach 0.9x of the prior best fitness, and the recorded experience id.
/// `confirmed_speedup` > 0 is the final interleaved speedup of the best node. Never throws.
nlohmann::json FinishKnowledge(KnowledgeSession& session, const core::Problem& problem,
                               const std::vector<search::Node>& nodes, double confirmed_speedup,
                               const std::filesystem::path& run_dir);

/// The share of the prior best fitness a warm-started run must reach to count as
/// having reached it: 0.9, because two measurements of one kernel on a shared machine
/// differ by several percent (docs/measuring.md).
inline constexpr double kReachTolerance = 0.9;

/// Prior kernels StartKnowledge offers an adapter, best first: when it drops one (other
/// sizes, knobs outside this run's space), the next is tried, up to this many.
inline constexpr int kSeedCandidates = 5;

}  // namespace kernelevolve::cli
