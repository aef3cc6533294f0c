// Which model writes the next candidate when several are given: UCB1 on improvement
// per dollar.
#pragma once

#include <string>
#include <vector>

namespace kernelevolve::operators::llm {

/// One arm per model. The reward of a candidate is
///   max(0, fitness(candidate) - fitness(parent)) / max(cost_usd, min_cost_usd)
/// (fitness gained per dollar; a draft's parent fitness is 0; a failure gains 0).
/// Arms are scored by UCB1 (Auer, Cesa-Bianchi and Fischer 2002) on rewards
/// normalized by the largest arm mean, so the scale stays in [0, 1] as in the search's
/// policies (docs/search.md):
///   score(a) = mean(a) / max_b mean(b) + c * sqrt(ln N / n(a))
/// An arm never pulled is chosen first (in the order given); ties go to the earlier arm.
/// Deterministic: no random draws.
class ModelBandit {
 public:
  /// `arms`: model ids ("openai:gpt-4.1"). `min_cost_usd` keeps free local models from
  /// dividing by zero (default $0.0001, about 100 tokens of a small hosted model).
  explicit ModelBandit(std::vector<std::string> arms, double c = 1.4142135623730951,
                       double min_cost_usd = 1e-4);
  /// Index of the arm to pull next (0 with a single arm).
  size_t Choose() const;
  /// Records the outcome of one candidate written by `arm` (index).
  void Record(size_t arm, double fitness_gain, double cost_usd);
  /// Counts a call of `arm` that produced no candidate (rejected, failed): reward 0.
  void RecordNothing(size_t arm) { Record(arm, 0, 1); }
  const std::vector<std::string>& arms() const { return arms_; }
  int64_t pulls(size_t arm) const { return pulls_[arm]; }
  double mean(size_t arm) const { return pulls_[arm] ? reward_sum_[arm] / static_cast<double>(pulls_[arm]) : 0; }
  /// Index of `id` in arms, or -1.
  int Find(const std::string& id) const;

 private:
  std::vector<std::string> arms_;
  double c_;
  double min_cost_usd_;
  std::vector<int64_t> pulls_;
  std::vector<double> reward_sum_;
};

}  // namespace kernelevolve::operators::llm
