#include "search/tree.h"

#include <fmt/format.h>

#include <utility>

#include "core/error.h"

namespace kernelevolve::search {

int64_t Tree::IndexOf(int64_t id) const {
  if (id == kRootId) return -1;
  auto it = index_.find(id);
  if (it == index_.end()) throw core::InternalError(fmt::format("tree: no node {}", id));
  return static_cast<int64_t>(it->second);
}

size_t Tree::IndexOfNode(int64_t id) const {
  auto it = index_.find(id);
  if (it == index_.end()) throw core::InternalError(fmt::format("tree: no node {}", id));
  return it->second;
}

void Tree::Add(Node node) {
  if (index_.count(node.id) || node.id < 0) {
    throw core::InternalError(fmt::format("tree: duplicate or unassigned node id {}", node.id));
  }
  const int64_t parent_index = IndexOf(node.parent_id);  // throws for an unknown parent
  const size_t index = nodes_.size();
  index_[node.id] = index;
  node_hashes_.insert(node.source_hash);
  seen_hashes_.insert(node.source_hash);
  (parent_index < 0 ? root_children_ : children_[parent_index]).push_back(node.id);
  children_.emplace_back();
  subtree_size_.push_back(1);
  in_flight_.push_back(0);
  for (int64_t p = node.parent_id; p != kRootId;) {
    const size_t pi = index_.at(p);
    ++subtree_size_[pi];
    p = nodes_[pi].parent_id;
  }
  nodes_.push_back(std::move(node));
  ConsiderForBest(index);
}

void Tree::ConsiderForBest(size_t index) {
  const core::Evaluation& e = nodes_[index].evaluation;
  if (!e.correct || !(e.fitness > 0)) return;
  if (best_index_ < 0 || e.fitness > nodes_[best_index_].evaluation.fitness) {
    best_index_ = static_cast<int64_t>(index);
  }
}

void Tree::Rescore(const std::function<void(core::Evaluation&)>& rescore) {
  best_index_ = -1;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    rescore(nodes_[i].evaluation);
    ConsiderForBest(i);
  }
}

const Node& Tree::Get(int64_t id) const {
  auto it = index_.find(id);
  if (it == index_.end()) throw core::InternalError(fmt::format("tree: no node {}", id));
  return nodes_[it->second];
}

const std::vector<int64_t>& Tree::ChildIds(int64_t parent_id) const {
  const int64_t index = IndexOf(parent_id);
  return index < 0 ? root_children_ : children_[index];
}

std::vector<const Node*> Tree::Children(int64_t parent_id) const {
  std::vector<const Node*> out;
  for (int64_t id : ChildIds(parent_id)) out.push_back(&nodes_[index_.at(id)]);
  return out;
}

int64_t Tree::ChildCount(int64_t parent_id) const {
  return static_cast<int64_t>(ChildIds(parent_id).size());
}

std::vector<const Node*> Tree::Lineage(int64_t id) const {
  std::vector<const Node*> chain;
  for (int64_t p = id; p != kRootId;) {
    const Node& n = Get(p);
    chain.push_back(&n);
    p = n.parent_id;
  }
  return {chain.rbegin(), chain.rend()};
}

void Tree::MarkExhausted(int64_t id) {
  if (!IsExhausted(id)) MutableStats(id).exhausted = true;
}

void Tree::SetProfile(int64_t id, core::KernelProfile profile) {
  nodes_[IndexOfNode(id)].profile = std::move(profile);
}

const NodeStats& Tree::Stats(int64_t id) const {
  const int64_t index = IndexOf(id);
  return index < 0 ? root_stats_ : nodes_[index].stats;
}

NodeStats& Tree::MutableStats(int64_t id) {
  const int64_t index = IndexOf(id);
  if (dirty_set_.insert(id).second) dirty_.push_back(id);
  return index < 0 ? root_stats_ : nodes_[index].stats;
}

std::vector<int64_t> Tree::TakeDirtyStats() {
  dirty_set_.clear();
  return std::exchange(dirty_, {});
}

int64_t Tree::SubtreeSize(int64_t id) const {
  const int64_t index = IndexOf(id);
  return index < 0 ? Size() : subtree_size_[index];
}

int64_t Tree::InFlight(int64_t id) const {
  const int64_t index = IndexOf(id);
  return index < 0 ? root_in_flight_ : in_flight_[index];
}

void Tree::AddInFlight(int64_t parent_id, int64_t delta) {
  root_in_flight_ += delta;
  for (int64_t p = parent_id; p != kRootId;) {
    const size_t pi = index_.at(p);
    in_flight_[pi] += delta;
    p = nodes_[pi].parent_id;
  }
}

void Tree::AddPending(const PendingCandidate& pending) {
  IndexOf(pending.parent_id);  // throws for an unknown parent
  if (!pending_.emplace(pending.id, pending).second) {
    throw core::InternalError(fmt::format("tree: duplicate pending id {}", pending.id));
  }
  seen_hashes_.insert(pending.source_hash);
  AddInFlight(pending.parent_id, +1);
}

void Tree::RemovePending(int64_t pending_id) {
  auto it = pending_.find(pending_id);
  if (it == pending_.end()) {
    throw core::InternalError(fmt::format("tree: no pending candidate {}", pending_id));
  }
  AddInFlight(it->second.parent_id, -1);
  if (!node_hashes_.count(it->second.source_hash)) seen_hashes_.erase(it->second.source_hash);
  pending_.erase(it);
}

}  // namespace kernelevolve::search
