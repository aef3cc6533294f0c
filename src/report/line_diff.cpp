#include "report/line_diff.h"

#include <algorithm>
#include <cstddef>

namespace kernelevolve::report {
namespace {

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

LineDiff ReplaceAll(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  LineDiff diff;
  diff.shortest = false;
  for (size_t i = 0; i < a.size(); ++i) diff.lines.push_back({DiffOp::kDelete, a[i], static_cast<int>(i + 1), 0});
  for (size_t j = 0; j < b.size(); ++j) diff.lines.push_back({DiffOp::kInsert, b[j], 0, static_cast<int>(j + 1)});
  diff.deleted = static_cast<int>(a.size());
  diff.inserted = static_cast<int>(b.size());
  return diff;
}

/// Whether the furthest-reaching path on diagonal k at step d comes down from k+1 (an
/// insertion) rather than right from k-1 (a deletion). `v` is indexed by k + offset.
bool FromAbove(const std::vector<int>& v, int offset, int k, int d) {
  return k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]);
}

}  // namespace

LineDiff DiffLines(const std::string& before, const std::string& after, int max_edits) {
  const std::vector<std::string> a = SplitLines(before);
  const std::vector<std::string> b = SplitLines(after);
  const int n = static_cast<int>(a.size());
  const int m = static_cast<int>(b.size());
  const int max_d = std::min(n + m, std::max(0, max_edits));
  const int offset = max_d + 1;
  std::vector<int> v(2 * static_cast<size_t>(offset) + 1, 0);
  std::vector<std::vector<int>> trace;  // v as it was before step d (the d-1 paths)
  int found_d = -1;
  for (int d = 0; d <= max_d && found_d < 0; ++d) {
    trace.push_back(v);
    for (int k = -d; k <= d; k += 2) {
      int x = FromAbove(v, offset, k, d) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;  // follow the snake
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found_d = d;
        break;
      }
    }
  }
  if (found_d < 0) return ReplaceAll(a, b);

  // Walk back from (n, m): each step d undoes one edit and the snake after it.
  std::vector<DiffLine> reversed;
  int x = n, y = m;
  for (int d = found_d; d >= 0; --d) {
    const std::vector<int>& prev = trace[d];
    const int k = x - y;
    int prev_x = 0, prev_y = 0;
    if (d > 0) {
      const int prev_k = FromAbove(prev, offset, k, d) ? k + 1 : k - 1;
      prev_x = prev[offset + prev_k];
      prev_y = prev_x - prev_k;
    }
    // Equal lines (the snake) down to where the edit of step d landed.
    const bool inserted = d > 0 && FromAbove(prev, offset, k, d);
    const int edit_x = d == 0 ? 0 : (inserted ? prev_x : prev_x + 1);
    while (x > edit_x) {
      reversed.push_back({DiffOp::kEqual, a[x - 1], x, y});
      --x, --y;
    }
    if (d == 0) break;
    if (inserted) {
      reversed.push_back({DiffOp::kInsert, b[y - 1], 0, y});
    } else {
      reversed.push_back({DiffOp::kDelete, a[x - 1], x, 0});
    }
    x = prev_x;
    y = prev_y;
  }
  LineDiff diff;
  diff.lines.assign(reversed.rbegin(), reversed.rend());
  for (const auto& line : diff.lines) {
    if (line.op == DiffOp::kDelete) ++diff.deleted;
    if (line.op == DiffOp::kInsert) ++diff.inserted;
  }
  return diff;
}

std::vector<DiffHunk> UnifiedHunks(const LineDiff& diff, int context) {
  std::vector<DiffHunk> hunks;
  const auto& lines = diff.lines;
  const int total = static_cast<int>(lines.size());
  int i = 0;
  while (i < total) {
    if (lines[i].op == DiffOp::kEqual) {
      ++i;
      continue;
    }
    // A change at i: the hunk starts `context` equal lines before it and ends when more
    // than 2 x context equal lines follow the last change.
    const int start = std::max(0, i - context);
    int last_change = i;
    int j = i + 1;
    while (j < total) {
      if (lines[j].op != DiffOp::kEqual) {
        last_change = j;
      } else if (j - last_change > 2 * context) {
        break;
      }
      ++j;
    }
    const int end = std::min(total, last_change + context + 1);
    DiffHunk hunk;
    hunk.lines.assign(lines.begin() + start, lines.begin() + end);
    int old_before = 0, new_before = 0;  // lines of each side before the hunk
    for (int p = 0; p < start; ++p) {
      if (lines[p].op != DiffOp::kInsert) ++old_before;
      if (lines[p].op != DiffOp::kDelete) ++new_before;
    }
    for (const auto& line : hunk.lines) {
      if (line.op != DiffOp::kInsert) ++hunk.old_count;
      if (line.op != DiffOp::kDelete) ++hunk.new_count;
    }
    hunk.old_start = hunk.old_count > 0 ? old_before + 1 : old_before;
    hunk.new_start = hunk.new_count > 0 ? new_before + 1 : new_before;
    hunks.push_back(std::move(hunk));
    i = end;
  }
  return hunks;
}

}  // namespace kernelevolve::report
