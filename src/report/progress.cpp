#include "report/progress.h"

#include <unistd.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "core/status.h"
#include "eval/roofline.h"

namespace kernelevolve::report {

ConsoleProgress::ConsoleProgress(int budget, double time_limit_seconds, std::FILE* out)
    : budget_(budget), time_limit_seconds_(time_limit_seconds), out_(out),
      tty_(::isatty(::fileno(out)) == 1) {}

void ConsoleProgress::OnProposed(int evaluation_number, const core::Candidate& candidate) {
  if (!tty_) return;
  std::string line = fmt::format("[{:>3}/{}] building and timing: {}", evaluation_number, budget_,
                                 candidate.rationale);
  if (line.size() > 110) line = line.substr(0, 107) + "...";
  fmt::print(out_, "\r\033[K{}", line);
  std::fflush(out_);
  line_open_ = true;
}

void ConsoleProgress::OnEvaluated(const search::Node& node, const search::Tree& tree,
                                  double elapsed_seconds) {
  int done = static_cast<int>(tree.Size());
  double rate = elapsed_seconds > 0 ? done / elapsed_seconds : 0;
  double left_by_budget = rate > 0 ? (budget_ - done) / rate : 0;
  double left = std::max(0.0, std::min(left_by_budget, time_limit_seconds_ - elapsed_seconds));
  std::string best = "none correct yet";
  if (const search::Node* b = tree.Best()) {
    best = fmt::format("{:.2f}x (node {})", b->evaluation.fitness, b->id);
  }
  std::string last = std::string(core::StatusName(node.evaluation.status));
  if (node.evaluation.correct && node.evaluation.fitness > 0) {
    last = fmt::format("{:.2f}x", node.evaluation.fitness);
    if (node.evaluation.roofline.Known()) last += ", " + eval::RooflineShort(node.evaluation.roofline);
  }
  std::string line = fmt::format("[{:>3}/{}] best {} | {:.2f} eval/s | ~{:.0f} s left | node {}: {}",
                                 done, budget_, best, rate, left, node.id, last);
  if (extra_) {
    if (std::string field = extra_(); !field.empty()) line += " | " + field;
  }
  if (tty_) {
    fmt::print(out_, "\r\033[K{}", line);
    line_open_ = true;
  } else {
    fmt::print(out_, "{}\n", line);
  }
  std::fflush(out_);
}

void ConsoleProgress::Finish() {
  if (line_open_) fmt::print(out_, "\n");
  line_open_ = false;
  std::fflush(out_);
}

}  // namespace kernelevolve::report
