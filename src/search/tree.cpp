#include "search/tree.h"

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::search {

void Tree::Add(Node node) {
  if (index_.count(node.id)) throw core::InternalError(fmt::format("tree: duplicate node id {}", node.id));
  index_[node.id] = nodes_.size();
  hashes_.insert(node.source_hash);
  nodes_.push_back(std::move(node));
}

const Node& Tree::Get(int64_t id) const {
  auto it = index_.find(id);
  if (it == index_.end()) throw core::InternalError(fmt::format("tree: no node {}", id));
  return nodes_[it->second];
}

std::vector<const Node*> Tree::Children(int64_t parent_id) const {
  std::vector<const Node*> out;
  for (const auto& n : nodes_) {
    if (n.parent_id == parent_id) out.push_back(&n);
  }
  return out;
}

const Node* Tree::Best() const {
  const Node* best = nullptr;
  for (const auto& n : nodes_) {
    if (!n.evaluation.correct || n.evaluation.fitness <= 0) continue;
    if (!best || n.evaluation.fitness > best->evaluation.fitness) best = &n;
  }
  return best;
}

}  // namespace kernelevolve::search
