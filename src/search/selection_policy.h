// Which node the search grows next (design.md: SelectionPolicy).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "search/tree.h"

namespace kernelevolve::search {

class SelectionPolicy {
 public:
  virtual ~SelectionPolicy() = default;
  virtual std::string Name() const = 0;
  /// Up to k parent ids to expand next, best first; kRootId asks for more drafts.
  /// Never returns exhausted nodes. Empty: nothing left to expand.
  virtual std::vector<int64_t> Select(const Tree& tree, int k) = 0;
  /// Called after each node is evaluated and added to the tree.
  virtual void Notify(const Node& node) { (void)node; }
};

/// Greedy best-first: the correct, non-exhausted nodes by descending fitness; when
/// there is none, the newest failed node that can still be repaired, else the root.
class GreedyPolicy : public SelectionPolicy {
 public:
  std::string Name() const override { return "greedy"; }
  std::vector<int64_t> Select(const Tree& tree, int k) override;
};

/// Makes a policy by name ("greedy"). Throws InvalidInputError for an unknown name.
std::unique_ptr<SelectionPolicy> MakePolicy(const std::string& name);

}  // namespace kernelevolve::search
