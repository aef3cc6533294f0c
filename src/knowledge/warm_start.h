// Warm start: the best prior kernels for a problem seen before, to evaluate first, and
// the matching experiences as text for the operator's context.
#pragma once

#include <string>
#include <vector>

#include "core/candidate.h"
#include "knowledge/experience.h"
#include "knowledge/knowledge_base.h"

namespace kernelevolve::knowledge {

struct WarmStartOptions {
  int max_seeds = 1;           // prior kernels to evaluate first
  int max_notes = 5;           // experience summaries for the operator context
  /// Shape classes further apart than this do not match: 3 allows e.g. a batch 8x
  /// larger, or batch 2x and row length 4x. Chosen so that kernels whose loops are
  /// shape-generic (all templates are) see similar cache regimes.
  int max_shape_distance = 3;
};

/// What a run starts from.
struct WarmStartPlan {
  ExperienceKey key;
  std::vector<ExperienceMatch> matches;  // every match, best first
  /// The prior kernels to evaluate before the operator's drafts, best first, distinct
  /// sources, none slower than eager (an experience with speedup < 1 is only a note).
  /// Each keeps the prior candidate's operator, template and knobs (so the operator can
  /// refine it) and says where it comes from in its rationale.
  std::vector<core::Candidate> seeds;
  std::vector<ExperienceMatch> seed_sources;  // the match behind each seed, same order
  std::vector<std::string> notes;             // Experience::Summary() of the best matches
  /// Records of this platform and op signature skipped because their JSON columns do
  /// not parse (one message each, naming the experience id); the others still match.
  std::vector<std::string> unreadable;
};

/// Looks up the experiences with the key's platform and op signature and plans the
/// warm start. An empty plan when nothing matches. Throws IoError on database failure.
WarmStartPlan PlanWarmStart(const KnowledgeBase& kb, const ExperienceKey& key,
                            const WarmStartOptions& options = {});

}  // namespace kernelevolve::knowledge
