#include "exec/fake_operator.h"

#include <fmt/format.h>

#include <numeric>

#include "core/error.h"

namespace kernelevolve::exec {

FakeOperator::FakeOperator(int dims, int values) : dims_(dims), values_(values) {
  if (dims < 1 || values < 2) throw core::InternalError("FakeOperator: dims >= 1, values >= 2");
  int64_t total = 1;
  for (int d = 0; d < dims; ++d) total *= values;
  // Scramble with a full-period step (coprime with total) so drafts are spread out.
  int64_t step = total / 2 + 1;
  while (std::gcd(step, total) != 1) ++step;
  for (int64_t i = 0, k = 0; i < total; ++i, k = (k + step) % total) {
    std::vector<int> point(static_cast<size_t>(dims));
    int64_t rest = k;
    for (int d = 0; d < dims; ++d, rest /= values) point[d] = static_cast<int>(rest % values);
    draft_order_.push_back(point);
  }
}

core::Candidate FakeOperator::Make(const std::vector<int>& point,
                                   const std::string& rationale) const {
  core::Candidate c;
  c.source = "// fake kernel";
  c.knobs = nlohmann::json::object();
  for (size_t d = 0; d < point.size(); ++d) {
    c.source += fmt::format(" x{}={}", d, point[d]);
    c.knobs[fmt::format("x{}", d)] = point[d];
  }
  c.source += "\n";
  c.operator_name = "fake";
  c.template_name = "grid";
  c.rationale = rationale;
  return c;
}

std::vector<int> FakeOperator::Point(const core::Candidate& candidate) {
  std::vector<int> point;
  for (size_t d = 0; candidate.knobs.contains(fmt::format("x{}", d)); ++d) {
    point.push_back(candidate.knobs.at(fmt::format("x{}", d)).get<int>());
  }
  return point;
}

std::vector<core::Candidate> FakeOperator::Propose(const operators::OperatorContext& context,
                                                   int n) {
  history_.push_back({context.parent ? context.parent->id : -1, context.lineage.size(),
                      context.siblings.size(), context.clean_slate, context.experiences.size()});
  std::vector<std::vector<int>> order;
  std::string why = "draft";
  if (context.parent == nullptr) {
    order = draft_order_;
  } else {
    const std::vector<int> p = Point(context.parent->candidate);
    why = fmt::format("neighbour of node {}", context.parent->id);
    for (int d = 0; d < dims_; ++d) {
      for (int delta : {-1, +1}) {
        std::vector<int> q = p;
        q[d] += delta;
        if (q[d] >= 0 && q[d] < values_) order.push_back(q);
      }
    }
    for (int d = 0; d < dims_; ++d) {
      for (int e = d + 1; e < dims_; ++e) {
        for (int dd : {-1, +1}) {
          for (int de : {-1, +1}) {
            std::vector<int> q = p;
            q[d] += dd;
            q[e] += de;
            if (q[d] >= 0 && q[d] < values_ && q[e] >= 0 && q[e] < values_) order.push_back(q);
          }
        }
      }
    }
  }
  std::vector<core::Candidate> out;
  for (const auto& point : order) {
    if (static_cast<int>(out.size()) >= n) break;
    core::Candidate c = Make(point, why);
    if (context.seen_hashes && context.seen_hashes->count(core::ContentHash(c.source))) continue;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace kernelevolve::exec
