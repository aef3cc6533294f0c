// One candidate in the search tree, with what was measured about it, and the
// candidates chosen but not evaluated yet (pending).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/candidate.h"
#include "core/evaluation.h"
#include "core/kernel_profile.h"

namespace kernelevolve::search {

/// What the selection policies keep per node (docs/search.md). Persisted in the store's
/// node_stats table at every checkpoint, so a resumed search sees the same numbers.
struct NodeStats {
  int64_t visits = 0;      // MCTS: evaluations back-propagated through this node
  double value_sum = 0;    // MCTS: sum of their rewards (normalized fitness, [0, 1] each)
  int island = -1;         // evolutionary: the island this node was born on; -1: none
  bool exhausted = false;  // the operator had nothing new to propose from this node
};

struct Node {
  int64_t id = -1;          // assigned by the store on commit
  int64_t parent_id = -1;   // -1: child of the root (a draft)
  int depth = 1;            // drafts have depth 1
  core::Candidate candidate;
  std::string source_hash;  // core::ContentHash(candidate.source)
  core::Evaluation evaluation;
  double created_unix_s = 0;  // seconds since the epoch
  NodeStats stats;          // policy statistics (not part of the nodes table)
  /// Hardware counters (Nsight Compute) of this node's kernel when it was profiled
  /// (issue 6): during the search (SearchOptions::profiler) or after it (--profile-top).
  /// Not part of the nodes table: the store's profiles table (schema v5) holds it.
  std::optional<core::KernelProfile> profile;
};

/// A candidate chosen for evaluation (by a policy and the operator, or as a draft or
/// seed) but not evaluated yet. Persisted before it is evaluated, so that a killed
/// search re-queues it on resume; deleted in the transaction that commits its node.
struct PendingCandidate {
  int64_t id = -1;          // assigned by the store
  int64_t parent_id = -1;   // -1: child of the root
  core::Candidate candidate;
  std::string source_hash;  // core::ContentHash(candidate.source)
  double created_unix_s = 0;
};

}  // namespace kernelevolve::search
