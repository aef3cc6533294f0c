// Console progress on stderr while the search runs.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "search/search_loop.h"

namespace kernelevolve::report {

/// One status line per evaluation: evaluations done / budget, best speedup so far,
/// evaluations per second, estimated time left, the last node's outcome, and the extra
/// field when set (the LLM cost so far). On a
/// terminal the line is rewritten in place; otherwise one line is printed per node.
class ConsoleProgress : public search::SearchObserver {
 public:
  ConsoleProgress(int budget, double time_limit_seconds, std::FILE* out = stderr);
  void OnProposed(int evaluation_number, const core::Candidate& candidate) override;
  void OnEvaluated(const search::Node& node, const search::Tree& tree,
                   double elapsed_seconds) override;
  /// Ends an in-place line with a newline (call once the search is over).
  void Finish();
  /// A field appended to every status line, e.g. the LLM cost so far ("llm $0.0421, 7
  /// calls"); called at each line; an empty string adds nothing.
  void SetExtraField(std::function<std::string()> field) { extra_ = std::move(field); }

 private:
  int budget_;
  double time_limit_seconds_;
  std::FILE* out_;
  bool tty_;
  bool line_open_ = false;
  std::function<std::string()> extra_;
};

}  // namespace kernelevolve::report
