#include "search/random_policy.h"

#include <algorithm>

namespace kernelevolve::search {

void RandomPolicy::Append(int open) {
  const size_t i = fenwick_.size() + 1;  // 1-based position of the new slot
  const size_t low = i & (~i + 1);
  // fenwick[i] covers slots (i - low, i]: the new value plus the sum of the slots before
  // it in that range.
  fenwick_.push_back(open + Prefix(i - 1) - Prefix(i - low));
  open_.push_back(open);
  total_open_ += open;
}

void RandomPolicy::Set(size_t slot, int open) {
  const int delta = open - open_[slot];
  if (delta == 0) return;
  open_[slot] = open;
  total_open_ += delta;
  for (size_t i = slot + 1; i <= fenwick_.size(); i += i & (~i + 1)) fenwick_[i - 1] += delta;
}

int64_t RandomPolicy::Prefix(size_t count) const {
  int64_t sum = 0;
  for (size_t i = count; i > 0; i -= i & (~i + 1)) sum += fenwick_[i - 1];
  return sum;
}

size_t RandomPolicy::FindNth(int64_t n) const {
  size_t pos = 0;  // number of slots known to hold at most n open entries before
  size_t step = 1;
  while (step * 2 <= fenwick_.size()) step *= 2;
  for (; step > 0; step /= 2) {
    if (pos + step <= fenwick_.size() && fenwick_[pos + step - 1] <= n) {
      pos += step;
      n -= fenwick_[pos - 1];
    }
  }
  return pos;  // 0-based slot
}

void RandomPolicy::CatchUp(const Tree& tree) {
  if (ids_.empty()) {
    ids_.push_back(kRootId);
    Append(tree.IsExhausted(kRootId) ? 0 : 1);
  }
  const auto& nodes = tree.Nodes();
  for (size_t i = ids_.size() - 1; i < nodes.size(); ++i) {
    ids_.push_back(nodes[i].id);
    Append(nodes[i].stats.exhausted ? 0 : 1);
  }
  tree_ = &tree;
}

std::vector<int64_t> RandomPolicy::Select(const Tree& tree, int k) {
  CatchUp(tree);
  std::vector<int64_t> out;
  std::vector<size_t> taken;
  while (static_cast<int>(out.size()) < k && total_open_ > 0) {
    const size_t slot = FindNth(static_cast<int64_t>(rng_.UniformIndex(total_open_)));
    Set(slot, 0);
    if (tree.IsExhausted(ids_[slot])) continue;  // marked without OnExhausted: drop it
    taken.push_back(slot);
    out.push_back(ids_[slot]);
  }
  for (size_t slot : taken) Set(slot, 1);  // still open: only this call skips them
  return out;
}

void RandomPolicy::OnExhausted(int64_t id) {
  if (id == kRootId) {
    if (!ids_.empty()) Set(0, 0);
    return;
  }
  if (tree_ == nullptr || !tree_->Contains(id)) return;
  const size_t slot = tree_->IndexOfNode(id) + 1;
  if (slot < open_.size()) Set(slot, 0);
}

void RandomPolicy::RestoreState(Tree& tree, const nlohmann::json& state) {
  if (state.is_object()) rng_.Restore(state.value("rng", nlohmann::json()));
  fenwick_.clear();
  open_.clear();
  ids_.clear();
  total_open_ = 0;
  CatchUp(tree);
}

}  // namespace kernelevolve::search
