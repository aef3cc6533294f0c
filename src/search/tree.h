// The in-memory search tree: every evaluated node, its children, the candidates in
// flight, and what the selection policies keep per node.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "search/node.h"

namespace kernelevolve::search {

/// Parent id meaning "the root": the problem itself, whose children are drafts.
inline constexpr int64_t kRootId = -1;

/// Costs: Add is O(depth) (subtree counts up the ancestors); Get, Best, IsExhausted,
/// SubtreeSize and InFlight are O(1); Children is O(number of children). Node
/// references and pointers are invalidated by Add (nodes live in one vector); keep ids.
/// Not thread-safe: the search loop owns it on one thread.
class Tree {
 public:
  /// Adds an evaluated node (node.id already assigned by the store, unique; its parent,
  /// unless kRootId, already in the tree). node.stats are kept as given (a resumed
  /// search restores them). Throws InternalError on a duplicate id or unknown parent.
  void Add(Node node);
  /// Node by id; throws InternalError when absent.
  const Node& Get(int64_t id) const;
  bool Contains(int64_t id) const { return index_.count(id) > 0; }
  /// Every node in insertion (= evaluation) order.
  const std::vector<Node>& Nodes() const { return nodes_; }
  int64_t Size() const { return static_cast<int64_t>(nodes_.size()); }
  /// Children of `parent_id` (kRootId for drafts), in insertion order.
  std::vector<const Node*> Children(int64_t parent_id) const;
  /// Number of evaluated children of `parent_id`.
  int64_t ChildCount(int64_t parent_id) const;
  /// Ids of the children of `parent_id`, in insertion order (no copy).
  const std::vector<int64_t>& ChildIds(int64_t parent_id) const;
  /// The node and its ancestors, root-most first (the draft first, `id` last); empty
  /// for kRootId.
  std::vector<const Node*> Lineage(int64_t id) const;
  /// The correct node with the highest fitness (ties: the earlier node), or nullptr.
  const Node* Best() const { return best_index_ < 0 ? nullptr : &nodes_[best_index_]; }
  /// Calls `rescore` on every node's evaluation in insertion order (the search rescores
  /// speedups against an improved eager baseline) and recomputes Best(). O(Size()).
  void Rescore(const std::function<void(core::Evaluation&)>& rescore);
  /// Source hashes of every node and every pending candidate: a proposal with one of
  /// these is wasted.
  const std::unordered_set<std::string>& SeenHashes() const { return seen_hashes_; }

  /// Marks a node (or kRootId) as having no more proposals to offer (persisted through
  /// the node's stats, TakeDirtyStats).
  void MarkExhausted(int64_t id);
  bool IsExhausted(int64_t id) const { return Stats(id).exhausted; }

  /// Sets the hardware-counter profile of node `id` (issue 6; the caller stores it with
  /// Store::SaveProfile). Throws InternalError for an unknown id or kRootId.
  void SetProfile(int64_t id, core::KernelProfile profile);

  /// Policy statistics of a node, or of the root for kRootId. Throws InternalError for
  /// an unknown id.
  const NodeStats& Stats(int64_t id) const;
  /// Writable statistics; the id is remembered as changed until TakeDirtyStats.
  NodeStats& MutableStats(int64_t id);
  /// Ids (kRootId included) whose stats changed since the last call, in first-change
  /// order; clears the list.
  std::vector<int64_t> TakeDirtyStats();

  /// Evaluated nodes in the subtree of `id`, the node included; Size() for kRootId.
  int64_t SubtreeSize(int64_t id) const;
  /// Pending candidates whose parent is `id` or one of its descendants; every pending
  /// candidate for kRootId.
  int64_t InFlight(int64_t id) const;

  /// Index-based forms for policies scanning Nodes() (index i is Nodes()[i]); no checks.
  int64_t SubtreeSizeAt(size_t index) const { return subtree_size_[index]; }
  int64_t InFlightAt(size_t index) const { return in_flight_[index]; }
  /// Index of node `id` in Nodes(); throws InternalError when absent.
  size_t IndexOfNode(int64_t id) const;

  /// Adds a pending candidate (id assigned by the store; parent in the tree or kRootId).
  void AddPending(const PendingCandidate& pending);
  /// Removes a pending candidate: evaluated (its node is added next) or dropped. Its
  /// hash leaves SeenHashes unless a node has it. Throws InternalError when unknown.
  void RemovePending(int64_t pending_id);
  /// Pending candidates by id.
  const std::map<int64_t, PendingCandidate>& Pending() const { return pending_; }

 private:
  /// Index of a node in nodes_, or -1 for kRootId; throws InternalError when unknown.
  int64_t IndexOf(int64_t id) const;
  /// Makes nodes_[index] Best() when it is correct, scores, and beats the current best.
  void ConsiderForBest(size_t index);
  /// Adds `delta` to the in-flight count of `parent_id` and each of its ancestors.
  void AddInFlight(int64_t parent_id, int64_t delta);

  std::vector<Node> nodes_;
  std::unordered_map<int64_t, size_t> index_;
  std::vector<std::vector<int64_t>> children_;  // by node index
  std::vector<int64_t> subtree_size_;           // by node index
  std::vector<int64_t> in_flight_;              // by node index
  std::vector<int64_t> root_children_;
  int64_t root_in_flight_ = 0;
  NodeStats root_stats_;
  int64_t best_index_ = -1;
  std::unordered_set<std::string> node_hashes_;
  std::unordered_set<std::string> seen_hashes_;
  std::map<int64_t, PendingCandidate> pending_;
  std::vector<int64_t> dirty_;
  std::unordered_set<int64_t> dirty_set_;
};

}  // namespace kernelevolve::search
