#include "knowledge/experience.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "core/candidate.h"
#include "core/dtype.h"

namespace kernelevolve::knowledge {
namespace {

int Bucket(int64_t d) {
  int b = 0;
  while (d > 1) {
    d >>= 1;
    ++b;
  }
  return b;
}

std::string Dtypes(const std::vector<core::TensorSpec>& specs) {
  std::vector<std::string> names;
  for (const auto& s : specs) names.emplace_back(core::DTypeName(s.dtype));
  return fmt::format("{}", fmt::join(names, ","));
}

/// "aten.leaky_relu.default(negative_slope=0.2)": constant scalar arguments only.
std::string CallText(const core::OpNode& call) {
  std::vector<std::string> args;
  for (const auto& a : call.args) {
    if (a.IsRef() || a.value.is_array() || a.value.is_object()) continue;
    args.push_back(fmt::format("{}={}", a.name, a.value.dump()));
  }
  return fmt::format("{}({})", call.target, fmt::join(args, ","));
}

/// {"knob": [old, new]} for the knobs that differ.
nlohmann::json KnobChanges(const nlohmann::json& before, const nlohmann::json& after) {
  nlohmann::json changes = nlohmann::json::object();
  std::set<std::string> keys;
  for (const auto& [k, v] : before.items()) keys.insert(k);
  for (const auto& [k, v] : after.items()) keys.insert(k);
  for (const auto& k : keys) {
    const nlohmann::json a = before.contains(k) ? before.at(k) : nlohmann::json(nullptr);
    const nlohmann::json b = after.contains(k) ? after.at(k) : nlohmann::json(nullptr);
    if (a != b) changes[k] = nlohmann::json::array({a, b});
  }
  return changes;
}

nlohmann::json LineageGains(const std::vector<search::Node>& nodes, const search::Node& best) {
  std::map<int64_t, const search::Node*> by_id;
  for (const auto& n : nodes) by_id[n.id] = &n;
  std::vector<const search::Node*> chain = {&best};
  while (true) {
    auto it = by_id.find(chain.back()->parent_id);
    if (chain.back()->parent_id < 0 || it == by_id.end() || chain.size() > nodes.size()) break;
    chain.push_back(it->second);
  }
  std::reverse(chain.begin(), chain.end());
  nlohmann::json gains = nlohmann::json::array();
  for (size_t i = 1; i < chain.size(); ++i) {
    const auto& before = chain[i - 1]->evaluation;
    const auto& after = chain[i]->evaluation;
    if (after.fitness <= before.fitness) continue;
    gains.push_back({{"changes", KnobChanges(chain[i - 1]->candidate.knobs, chain[i]->candidate.knobs)},
                     {"fitness_before", before.fitness},
                     {"fitness_after", after.fitness}});
  }
  return gains;
}

std::string ValueText(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string ShapeClass::Text() const {
  if (buckets.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& b : buckets) parts.push_back(fmt::format("r{}[{}]", b.size(), fmt::join(b, ",")));
  return fmt::format("{}", fmt::join(parts, ";"));
}

ShapeClass ShapeClassOf(const std::vector<std::vector<int64_t>>& shapes) {
  ShapeClass c;
  for (const auto& shape : shapes) {
    std::vector<int> b;
    for (int64_t d : shape) b.push_back(Bucket(d));
    c.buckets.push_back(std::move(b));
  }
  return c;
}

int ShapeDistance(const ShapeClass& a, const ShapeClass& b) {
  if (a.buckets.size() != b.buckets.size()) return -1;
  int distance = 0;
  for (size_t t = 0; t < a.buckets.size(); ++t) {
    if (a.buckets[t].size() != b.buckets[t].size()) return -1;
    for (size_t d = 0; d < a.buckets[t].size(); ++d) distance += std::abs(a.buckets[t][d] - b.buckets[t][d]);
  }
  return distance;
}

std::vector<std::vector<int64_t>> InputShapes(const core::Problem& problem) {
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& t : problem.inputs) shapes.push_back(t.shape);
  return shapes;
}

std::string OperatorFamily(const core::Problem& problem, const std::string& template_name) {
  std::vector<std::string> targets;
  for (const core::OpNode* call : problem.graph.Calls()) {
    if (std::find(targets.begin(), targets.end(), call->target) == targets.end()) {
      targets.push_back(call->target);
    }
  }
  const std::string joined = fmt::format("{}", fmt::join(targets, "+"));
  if (template_name == "pointwise") return "pointwise:" + joined;
  if (!template_name.empty()) return template_name;
  if (!targets.empty()) return "graph:" + joined;
  return "problem:" + problem.name;
}

std::string OpSignature(const core::Problem& problem) {
  std::vector<std::string> calls;
  for (const core::OpNode* call : problem.graph.Calls()) calls.push_back(CallText(*call));
  std::sort(calls.begin(), calls.end());
  const std::string dtypes = Dtypes(problem.inputs) + "->" + Dtypes(problem.outputs);
  if (calls.empty()) return fmt::format("problem:{}|{}", problem.name, dtypes);
  return fmt::format("{}|{}", fmt::join(calls, ";"), dtypes);
}

std::string Experience::Summary() const {
  std::vector<std::string> gains;
  for (const auto& g : improvements) {
    std::vector<std::string> changes;
    for (const auto& [knob, values] : g.at("changes").items()) {
      changes.push_back(fmt::format("{} {}->{}", knob, ValueText(values[0]), ValueText(values[1])));
    }
    gains.push_back(fmt::format("{} ({:.2f}x->{:.2f}x)", fmt::join(changes, ", "),
                                g.at("fitness_before").get<double>(), g.at("fitness_after").get<double>()));
  }
  std::string line = fmt::format("{} on {} ({}), shapes {}: {:.2f}x vs eager{} with {} {}",
                                 operator_family, platform, MachineText(),
                                 shape_class, speedup, speedup_confirmed ? " (confirmed)" : "",
                                 template_name.empty() ? operator_name : template_name, knobs.dump());
  if (!gains.empty()) line += fmt::format("; gains: {}", fmt::join(gains, "; "));
  line += fmt::format("; best at evaluation {} of {} [experience {}, problem {}]",
                      evaluations_to_best, evaluations, id, problem);
  return line;
}

std::string Experience::MachineText() const {
  const std::string model = machine.empty() ? "unknown machine" : machine;
  return isa.empty() ? model : model + ", " + isa;
}

std::optional<Experience> DistillExperience(const core::Problem& problem,
                                            const std::vector<search::Node>& nodes,
                                            const DistillContext& context) {
  int best_index = -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& e = nodes[i].evaluation;
    if (!e.correct || !(e.fitness > 0)) continue;
    if (best_index < 0 || e.fitness > nodes[static_cast<size_t>(best_index)].evaluation.fitness) {
      best_index = static_cast<int>(i);
    }
  }
  if (best_index < 0) return std::nullopt;
  const search::Node& best = nodes[static_cast<size_t>(best_index)];
  Experience x;
  x.created_unix_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  x.problem = problem.name;
  x.problem_path = problem.source_path.string();
  x.platform = context.platform;
  x.machine = context.machine;
  x.isa = context.isa;
  x.operator_family = OperatorFamily(problem, best.candidate.template_name);
  x.op_signature = OpSignature(problem);
  x.shapes = InputShapes(problem);
  x.shape_class = ShapeClassOf(x.shapes).Text();
  x.operator_name = best.candidate.operator_name;
  x.template_name = best.candidate.template_name;
  x.knobs = best.candidate.knobs;
  x.improvements = LineageGains(nodes, best);
  x.rationale = best.candidate.rationale;
  x.fitness = best.evaluation.fitness;
  x.speedup_confirmed = context.confirmed_speedup > 0;
  x.speedup = x.speedup_confirmed ? context.confirmed_speedup : best.evaluation.speedup_vs_eager.value;
  x.latency_us = best.evaluation.latency.median_us;
  x.eager_us = problem.eager_baseline.median_us;
  x.evaluations = static_cast<int>(nodes.size());
  x.evaluations_to_best = best_index + 1;
  x.source = best.candidate.source;
  x.source_hash = core::ContentHash(best.candidate.source);
  x.run_dir = context.run_dir;
  return x;
}

ExperienceKey ExperienceKeyFor(const core::Problem& problem, const std::string& platform,
                               const std::string& machine, const std::string& isa) {
  return ExperienceKey{platform, OpSignature(problem), InputShapes(problem), machine, isa};
}

std::vector<ExperienceMatch> MatchExperiences(const ExperienceKey& key,
                                              const std::vector<Experience>& records,
                                              int max_shape_distance) {
  const ShapeClass wanted = ShapeClassOf(key.shapes);
  std::vector<ExperienceMatch> out;
  for (const Experience& x : records) {
    if (x.platform != key.platform || x.op_signature != key.op_signature) continue;
    const int distance = ShapeDistance(wanted, ShapeClassOf(x.shapes));
    if (distance < 0 || distance > max_shape_distance) continue;
    ExperienceMatch m;
    m.experience = x;
    m.shape_distance = distance;
    m.same_machine = !key.machine.empty() && x.machine == key.machine && x.isa == key.isa;
    m.why = fmt::format("same op signature and platform {}; shape {} vs {} (distance {}); {}",
                        key.platform, x.shape_class, wanted.Text(), distance,
                        m.same_machine ? "same machine"
                                       : fmt::format("another machine ({}), re-measured here",
                                                     x.MachineText()));
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(), [](const ExperienceMatch& a, const ExperienceMatch& b) {
    if (a.shape_distance != b.shape_distance) return a.shape_distance < b.shape_distance;
    if (a.same_machine != b.same_machine) return a.same_machine;
    if (a.experience.fitness != b.experience.fitness) return a.experience.fitness > b.experience.fitness;
    return a.experience.id > b.experience.id;
  });
  return out;
}

}  // namespace kernelevolve::knowledge
