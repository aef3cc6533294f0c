// The in-memory search tree: every evaluated node, its children and what is left to try.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "search/node.h"

namespace kernelevolve::search {

/// Parent id meaning "the root": the problem itself, whose children are drafts.
inline constexpr int64_t kRootId = -1;

class Tree {
 public:
  /// Adds an evaluated node (node.id already assigned by the store, unique).
  void Add(Node node);
  /// Node by id; throws InternalError when absent.
  const Node& Get(int64_t id) const;
  const std::vector<Node>& Nodes() const { return nodes_; }
  int64_t Size() const { return static_cast<int64_t>(nodes_.size()); }
  /// Children of `parent_id` (kRootId for drafts), in insertion order.
  std::vector<const Node*> Children(int64_t parent_id) const;
  /// The correct node with the highest fitness (ties: the earlier node), or nullptr.
  const Node* Best() const;
  /// Source hashes of every node, for deduplication.
  const std::unordered_set<std::string>& SeenHashes() const { return hashes_; }
  /// Marks a node (or kRootId) as having no more proposals to offer.
  void MarkExhausted(int64_t id) { exhausted_.insert(id); }
  bool IsExhausted(int64_t id) const { return exhausted_.count(id) > 0; }

 private:
  std::vector<Node> nodes_;
  std::map<int64_t, size_t> index_;
  std::unordered_set<std::string> hashes_;
  std::set<int64_t> exhausted_;
};

}  // namespace kernelevolve::search
