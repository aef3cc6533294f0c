#include "operators/template/template_operator.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/status.h"
#include "operators/template/diagnosis.h"
#include "operators/template/kernel_template.h"
#include "operators/template/profile_diagnosis.h"
#include "operators/template/triton_softmax.h"

namespace kernelevolve::operators {
namespace {

using templates::KernelTemplate;
using templates::KnobMove;

/// Collects up to `limit` candidates of one template, skipping known sources.
class Collector {
 public:
  Collector(const KernelTemplate& tmpl, const OperatorContext& context, int limit)
      : tmpl_(tmpl), seen_(context.seen_hashes), limit_(limit) {}

  bool Full() const { return static_cast<int>(out_.size()) >= limit_; }
  /// Never propose these settings (the parent's, the siblings').
  void Exclude(const nlohmann::json& knobs) { excluded_.insert(knobs.dump()); }

  void Add(const nlohmann::json& knobs, const std::string& rationale) {
    if (Full() || excluded_.count(knobs.dump()) > 0) return;
    core::Candidate c;
    c.source = tmpl_.Generate(knobs);
    const std::string hash = core::ContentHash(c.source);
    if ((seen_ != nullptr && seen_->count(hash) > 0) || !hashes_.insert(hash).second) return;
    c.operator_name = "template";
    c.template_name = tmpl_.Name();
    c.knobs = knobs;
    c.rationale = rationale;
    out_.push_back(std::move(c));
  }

  std::vector<core::Candidate> Take() { return std::move(out_); }

 private:
  const KernelTemplate& tmpl_;
  const std::unordered_set<std::string>* seen_;
  int limit_;
  std::set<std::string> excluded_;
  std::set<std::string> hashes_;
  std::vector<core::Candidate> out_;
};

void AddDrafts(const KernelTemplate& tmpl, const std::string& prefix, Collector& collector) {
  bool first = true;
  for (const auto& knobs : tmpl.Drafts()) {
    collector.Add(knobs, prefix + (first ? "draft (baseline): " : "draft: ") + tmpl.Summary(knobs));
    first = false;
  }
  for (const auto& knobs : tmpl.Space().Enumerate()) {
    collector.Add(knobs, prefix + "draft: " + tmpl.Summary(knobs) + " (rest of the knob space)");
  }
}

/// Whether move `m` is what preference `p` asks for.
bool Matches(const KnobMove& m, const KnobPreference& p) {
  return m.dim == p.knob && (p.value.is_null() || m.value == p.value);
}

/// A parent's one-knob neighbours, then the rest of the space by distance. Order: the
/// diagnosis's preferred moves (operators/template/diagnosis.h; profile_diagnosis.h when
/// the parent has a hardware-counter profile) in its order; then
/// each knob's safe value (after a failure) or fast value (after a success); then every
/// other one-knob move. After a success, moves back to the safe value of a knob that has
/// a fast one (scalar libm math, one thread, double accumulators: the fallbacks for a
/// failed parent) come after every setting that makes none, two-knob ones included:
/// with a budget of 8 they used to take 2-3 evaluations on candidates at 0.04-0.1x of
/// their parent. Every rationale starts with the diagnosis text.
void AddNeighbours(const KernelTemplate& tmpl, const search::Node& parent,
                   const nlohmann::json& parent_knobs, Collector& collector) {
  const auto& space = tmpl.Space();
  // Issue 6: with the parent's Nsight Compute profile (taken during the search), the
  // counters' advice and knob moves come first and the rationale carries the ncu line.
  const Diagnosis diagnosis = parent.profile ? DiagnoseWithProfile(parent.evaluation, *parent.profile)
                                             : Diagnose(parent.evaluation);
  const bool failed = diagnosis.prefer_safe;
  const std::string& outcome = diagnosis.text;
  const std::vector<KnobMove> moves = space.Neighbours(parent_knobs);
  auto verb = [&](const KnobMove& m) {
    const auto* dim = space.Find(m.dim);
    return failed && m.value == dim->safe_value ? "; move to safer " : "; try ";
  };
  for (const auto& preference : diagnosis.preferred_moves) {
    for (const auto& m : moves) {
      if (Matches(m, preference)) collector.Add(m.knobs, outcome + verb(m) + space.Phrase(m.dim, m.value));
    }
  }
  auto preferred = [&](const KnobMove& m) {
    const auto* dim = space.Find(m.dim);
    return m.value == (failed ? dim->safe_value : dim->fast_value);
  };
  for (const auto& m : moves) {
    if (!preferred(m)) continue;
    collector.Add(m.knobs, outcome + verb(m) + space.Phrase(m.dim, m.value));
  }
  // After a success: how many knobs a setting moves back to their safe value.
  auto backwards = [&](const nlohmann::json& knobs) {
    int count = 0;
    if (failed) return count;
    for (const auto& d : space.Dims()) {
      if (d.safe_value.is_null() || d.fast_value.is_null() || d.safe_value == d.fast_value ||
          !knobs.contains(d.name)) {
        continue;  // no fast direction to fall back from (e.g. unroll)
      }
      const bool parent_safe = parent_knobs.contains(d.name) && parent_knobs.at(d.name) == d.safe_value;
      if (knobs.at(d.name) == d.safe_value && !parent_safe) ++count;
    }
    return count;
  };
  std::vector<const KnobMove*> back;
  for (const auto& m : moves) {
    if (preferred(m)) continue;
    if (backwards(m.knobs) > 0) {
      back.push_back(&m);
      continue;
    }
    collector.Add(m.knobs, outcome + "; try " + space.Phrase(m.dim, m.value));
  }
  // The settings two or more knobs away, nearest first (enumeration order within a
  // distance), each with its distance and whether it moves a knob back, computed once.
  struct Far {
    nlohmann::json knobs;
    int distance;
    bool backward;
  };
  std::vector<Far> far;
  for (auto& knobs : space.Enumerate()) {
    const int distance = space.Distance(knobs, parent_knobs);
    if (distance < 2) continue;
    const bool backward = backwards(knobs) > 0;
    far.push_back({std::move(knobs), distance, backward});
  }
  std::stable_sort(far.begin(), far.end(), [](const Far& a, const Far& b) { return a.distance < b.distance; });
  auto add_rest = [&](bool with_backward_moves) {
    for (const Far& f : far) {
      if (f.backward != with_backward_moves) continue;
      collector.Add(f.knobs, fmt::format("{}; one-knob moves used up, try {} ({} knobs from parent)",
                                         outcome, space.Describe(f.knobs), f.distance));
    }
  };
  add_rest(false);
  for (const KnobMove* m : back) {
    collector.Add(m->knobs, outcome + "; faster settings tried, try the fallback " + space.Phrase(m->dim, m->value));
  }
  add_rest(true);
}

/// The parent's knobs in `tmpl`'s space, or nullopt when the parent is not one of
/// its candidates (another operator, another template, knobs outside this space).
std::optional<nlohmann::json> ParentKnobs(const KernelTemplate& tmpl, const search::Node& parent) {
  const core::Candidate& c = parent.candidate;
  if (c.operator_name != "template" || c.template_name != tmpl.Name()) return std::nullopt;
  if (!tmpl.Space().IsValid(c.knobs)) return std::nullopt;
  return tmpl.Space().Canonical(c.knobs);
}

}  // namespace

std::optional<std::string> TemplateOperator::Unsupported(const core::Problem& problem) const {
  templates::TemplateMatch match = templates::MatchTemplateForTarget(target_, problem, 1);
  if (match.tmpl) return std::nullopt;
  return match.unsupported;
}

std::vector<core::Candidate> TemplateOperator::Propose(const OperatorContext& context, int n) {
  if (context.problem == nullptr) {
    throw core::InternalError("TemplateOperator::Propose: context.problem is null");
  }
  if (n <= 0) return {};
  const int threads = std::max(context.threads, context.problem->threads);
  templates::TemplateMatch match = templates::MatchTemplateForTarget(target_, *context.problem, threads, vector_lanes_);
  if (!match.tmpl) return {};
  const KernelTemplate& tmpl = *match.tmpl;
  Collector collector(tmpl, context, n);
  for (const search::Node* sibling : context.siblings) {
    if (sibling == nullptr) continue;
    if (auto knobs = ParentKnobs(tmpl, *sibling)) collector.Exclude(*knobs);
  }
  if (context.parent == nullptr) {
    AddDrafts(tmpl, "", collector);
    return collector.Take();
  }
  const auto parent_knobs = ParentKnobs(tmpl, *context.parent);
  if (!parent_knobs) {
    const std::string prefix = fmt::format(
        "parent is not a {} template candidate (operator '{}', template '{}'); ", tmpl.Name(),
        context.parent->candidate.operator_name, context.parent->candidate.template_name);
    AddDrafts(tmpl, prefix, collector);
    return collector.Take();
  }
  collector.Exclude(*parent_knobs);
  AddNeighbours(tmpl, *context.parent, *parent_knobs, collector);
  return collector.Take();
}

std::optional<core::Candidate> TemplateOperator::Rederive(const core::Problem& problem,
                                                          const core::Candidate& prior, int threads,
                                                          std::string* why) const {
  auto fail = [why](std::string reason) -> std::optional<core::Candidate> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  if (prior.operator_name != Name()) {
    return fail(fmt::format("written by operator '{}', not by the templates", prior.operator_name));
  }
  templates::TemplateMatch match =
      templates::MatchTemplateForTarget(target_, problem, std::max(threads, problem.threads), vector_lanes_);
  if (!match.tmpl) return fail(match.unsupported);
  const KernelTemplate& tmpl = *match.tmpl;
  if (tmpl.Name() != prior.template_name) {
    return fail(fmt::format("template '{}', but this problem takes '{}'", prior.template_name, tmpl.Name()));
  }
  if (!prior.knobs.is_object()) return fail(fmt::format("stored knobs {} are no JSON object", prior.knobs.dump()));
  core::Candidate c = prior;
  try {
    c.knobs = tmpl.Space().Canonical(prior.knobs);
  } catch (const std::exception& e) {
    // The space depends on the problem and on the threads (no "threads": "all" with one):
    // the knobs it allows are kept, the others take their defaults.
    c.knobs = tmpl.Space().Fit(prior.knobs);
    c.rationale += fmt::format("; knobs fitted to this problem's {} space at {} thread(s) ({}): {}", tmpl.Name(),
                               std::max(threads, problem.threads), e.what(), c.knobs.dump());
  }
  c.source = tmpl.Generate(c.knobs);
  return c;
}

}  // namespace kernelevolve::operators
