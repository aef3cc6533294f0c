// The one operator that writes the next candidate from the runtime context.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/candidate.h"
#include "core/problem.h"
#include "search/node.h"

namespace kernelevolve::operators {

/// What the operator sees when asked for candidates.
struct OperatorContext {
  const core::Problem* problem = nullptr;
  /// The node to improve; nullptr asks for drafts (independent first candidates).
  const search::Node* parent = nullptr;
  /// Other children of the same parent already evaluated (to avoid repeats). Empty
  /// when the search's context mode (--context) is inherit or clean.
  std::vector<const search::Node*> siblings;
  /// The parent's trajectory: its ancestors and itself, the draft first and the parent
  /// last (issue 3, --context inherit|both); empty for drafts and in the siblings and
  /// clean modes. Pointers valid for the Propose call only.
  std::vector<const search::Node*> lineage;
  /// True when the search asks for a fresh start without history (--context clean, or
  /// the automatic clean slate after a stall, which comes with parent == nullptr).
  bool clean_slate = false;
  /// Source hashes already in the tree: a proposal with one of these is wasted.
  const std::unordered_set<std::string>* seen_hashes = nullptr;
  int threads = 1;
  /// Knowledge base (issue 8): one-line summaries of prior experiences on matching
  /// problems (knowledge::Experience::Summary), best first; empty when none.
  std::vector<std::string> experiences;
};

class UniversalOperator {
 public:
  virtual ~UniversalOperator() = default;
  /// "template" or "llm:<model>".
  virtual std::string Name() const = 0;
  /// Why this operator cannot handle the problem ("unsupported_op: aten.NAME"), or
  /// nullopt when it can.
  virtual std::optional<std::string> Unsupported(const core::Problem& problem) const = 0;
  /// Up to n new candidates (fewer, possibly none, when the space is exhausted).
  /// Each carries a rationale. Never returns a candidate whose hash is in seen_hashes.
  virtual std::vector<core::Candidate> Propose(const OperatorContext& context, int n) = 0;
  /// Why this operator can write nothing more in this run, whatever the context (issue
  /// 7: "cost_cap" once the LLM operator's --max-cost refused a call), or nullopt. The
  /// search checks it before each launch and stops with this reason; an empty Propose
  /// while it is set does not mark the parent exhausted.
  virtual std::optional<std::string> StopReason() const { return std::nullopt; }
};

}  // namespace kernelevolve::operators
