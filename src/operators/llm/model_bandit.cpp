#include "operators/llm/model_bandit.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace kernelevolve::operators::llm {

ModelBandit::ModelBandit(std::vector<std::string> arms, double c, double min_cost_usd)
    : arms_(std::move(arms)), c_(c), min_cost_usd_(min_cost_usd), pulls_(arms_.size(), 0),
      reward_sum_(arms_.size(), 0.0) {
  if (arms_.empty()) throw core::InternalError("ModelBandit needs at least one model");
}

size_t ModelBandit::Choose() const {
  int64_t total = 0;
  double best_mean = 0;
  for (size_t a = 0; a < arms_.size(); ++a) {
    if (pulls_[a] == 0) return a;
    total += pulls_[a];
    best_mean = std::max(best_mean, mean(a));
  }
  size_t best = 0;
  double best_score = -1;
  for (size_t a = 0; a < arms_.size(); ++a) {
    const double q = best_mean > 0 ? mean(a) / best_mean : 0;
    const double score = q + c_ * std::sqrt(std::log(static_cast<double>(total)) / static_cast<double>(pulls_[a]));
    if (score > best_score) {
      best_score = score;
      best = a;
    }
  }
  return best;
}

void ModelBandit::Record(size_t arm, double fitness_gain, double cost_usd) {
  if (arm >= arms_.size()) throw core::InternalError("ModelBandit::Record: no such arm");
  ++pulls_[arm];
  reward_sum_[arm] += std::max(0.0, fitness_gain) / std::max(cost_usd, min_cost_usd_);
}

int ModelBandit::Find(const std::string& id) const {
  auto it = std::find(arms_.begin(), arms_.end(), id);
  return it == arms_.end() ? -1 : static_cast<int>(it - arms_.begin());
}

}  // namespace kernelevolve::operators::llm
