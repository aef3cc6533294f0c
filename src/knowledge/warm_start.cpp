#include "knowledge/warm_start.h"

#include <fmt/format.h>

#include <set>

namespace kernelevolve::knowledge {

WarmStartPlan PlanWarmStart(const KnowledgeBase& kb, const ExperienceKey& key,
                            const WarmStartOptions& options) {
  WarmStartPlan plan;
  plan.key = key;
  ExperienceFilter filter;
  filter.platform = key.platform;
  filter.op_signature = key.op_signature;
  plan.matches = MatchExperiences(key, kb.Experiences(filter, &plan.unreadable), options.max_shape_distance);
  std::set<std::string> sources;
  for (const ExperienceMatch& m : plan.matches) {
    if (static_cast<int>(plan.notes.size()) < options.max_notes) {
      plan.notes.push_back(m.experience.Summary());
    }
    if (static_cast<int>(plan.seeds.size()) >= options.max_seeds) continue;
    const Experience& x = m.experience;
    // A prior kernel slower than eager (speedup < 1) is not worth an evaluation: the
    // reference was that run's answer. Its record stays a note.
    if (x.speedup < 1.0) continue;
    if (x.source.empty() || !sources.insert(x.source_hash).second) continue;
    core::Candidate c;
    c.source = x.source;
    c.operator_name = x.operator_name;
    c.template_name = x.template_name;
    c.knobs = x.knobs;
    c.rationale = fmt::format(
        "{}best prior kernel of experience {} (problem {}, shape {}, {:.2f}x vs eager on {}); {}",
        core::kWarmStartRationalePrefix, x.id, x.problem, x.shape_class, x.speedup,
        x.MachineText(), m.why);
    plan.seeds.push_back(std::move(c));
    plan.seed_sources.push_back(m);
  }
  return plan;
}

}  // namespace kernelevolve::knowledge
