// Line-based diff of two texts (kernel sources of a node and its parent), for the HTML
// report. Algorithm: E. W. Myers, "An O(ND) Difference Algorithm and Its Variations",
// Algorithmica 1(2), 1986: the greedy forward search for the furthest-reaching D-path,
// with the V array of every step kept to recover the edit script. O((N+M) D) time and
// O(D^2) memory, so it is bounded by `max_edits` (sources here are a few hundred lines).
#pragma once

#include <string>
#include <vector>

namespace kernelevolve::report {

enum class DiffOp { kEqual, kDelete, kInsert };

/// One line of an edit script. Line numbers are 1-based; 0 where the line does not
/// exist on that side (an insert has no old line, a delete no new line).
struct DiffLine {
  DiffOp op = DiffOp::kEqual;
  std::string text;  // without its trailing '\n'
  int old_line = 0;
  int new_line = 0;
};

/// A shortest edit script from `before` to `after`, in order.
struct LineDiff {
  std::vector<DiffLine> lines;
  int deleted = 0;
  int inserted = 0;
  /// False when the texts differ by more than `max_edits` lines: then `lines` deletes all
  /// of `before` and inserts all of `after` (still a correct, not a shortest, script).
  bool shortest = true;
};

/// Splits both texts on '\n' (a final newline does not add an empty line) and computes
/// a shortest edit script (Myers 1986). `max_edits` bounds D, the number of inserted plus
/// deleted lines, and with it the work; past it the script replaces everything.
LineDiff DiffLines(const std::string& before, const std::string& after, int max_edits = 2000);

/// A unified-diff hunk: the changed lines with up to `context` equal lines around them.
struct DiffHunk {
  int old_start = 0;  // 1-based first old line shown (0 when the old side is empty)
  int old_count = 0;
  int new_start = 0;
  int new_count = 0;
  std::vector<DiffLine> lines;
};

/// Groups the script's changes into hunks (as `diff -u` does): changes closer than
/// 2 x `context` equal lines share a hunk. No hunk when the texts are equal.
std::vector<DiffHunk> UnifiedHunks(const LineDiff& diff, int context = 3);

}  // namespace kernelevolve::report
