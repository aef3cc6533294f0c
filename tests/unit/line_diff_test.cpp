// The report's line diff (report/line_diff.h): shortest edit scripts (Myers 1986),
// checked against an LCS table on seeded random texts, and the unified hunks.
#include "report/line_diff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace kernelevolve::report {
namespace {

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

/// Rebuilds the old (keep != kInsert) or new (keep != kDelete) side from a script.
std::string Side(const LineDiff& diff, DiffOp drop) {
  std::string text;
  for (const auto& line : diff.lines) {
    if (line.op != drop) text += line.text + "\n";
  }
  return text;
}

int LcsLength(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::vector<int>> t(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

TEST(LineDiff, EqualTextsGiveNoChangesAndNoHunks) {
  const LineDiff diff = DiffLines("a\nb\nc\n", "a\nb\nc\n");
  EXPECT_EQ(diff.deleted, 0);
  EXPECT_EQ(diff.inserted, 0);
  ASSERT_EQ(diff.lines.size(), 3u);
  EXPECT_EQ(diff.lines[2].old_line, 3);
  EXPECT_EQ(diff.lines[2].new_line, 3);
  EXPECT_TRUE(UnifiedHunks(diff).empty());
}

TEST(LineDiff, MyersPaperExampleHasFiveEdits) {
  // Myers 1986, figure 1: A = abcabba, B = cbabac, D = 5.
  const LineDiff diff = DiffLines(Join({"a", "b", "c", "a", "b", "b", "a"}), Join({"c", "b", "a", "b", "a", "c"}));
  EXPECT_EQ(diff.deleted + diff.inserted, 5);
  EXPECT_TRUE(diff.shortest);
  EXPECT_EQ(Side(diff, DiffOp::kInsert), Join({"a", "b", "c", "a", "b", "b", "a"}));
  EXPECT_EQ(Side(diff, DiffOp::kDelete), Join({"c", "b", "a", "b", "a", "c"}));
}

TEST(LineDiff, EmptySidesAndMissingFinalNewline) {
  const LineDiff added = DiffLines("", "x\ny");
  EXPECT_EQ(added.inserted, 2);
  EXPECT_EQ(added.deleted, 0);
  EXPECT_EQ(added.lines[1].new_line, 2);
  const LineDiff removed = DiffLines("x\ny\n", "");
  EXPECT_EQ(removed.deleted, 2);
  const auto hunks = UnifiedHunks(removed);
  ASSERT_EQ(hunks.size(), 1u);
  EXPECT_EQ(hunks[0].old_start, 1);
  EXPECT_EQ(hunks[0].old_count, 2);
  EXPECT_EQ(hunks[0].new_start, 0);
  EXPECT_EQ(hunks[0].new_count, 0);
}

TEST(LineDiff, RandomTextsGetAShortestScriptThatRebuildsBothSides) {
  std::mt19937 rng(20);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> a(rng() % 30), b(rng() % 30);
    for (auto& line : a) line = std::string(1, static_cast<char>('a' + rng() % 4));
    for (auto& line : b) line = std::string(1, static_cast<char>('a' + rng() % 4));
    const LineDiff diff = DiffLines(Join(a), Join(b));
    ASSERT_EQ(Side(diff, DiffOp::kInsert), Join(a)) << trial;
    ASSERT_EQ(Side(diff, DiffOp::kDelete), Join(b)) << trial;
    const int lcs = LcsLength(a, b);
    ASSERT_EQ(diff.deleted + diff.inserted, static_cast<int>(a.size() + b.size()) - 2 * lcs) << trial;
  }
}

TEST(LineDiff, PastMaxEditsReplacesEverything) {
  const LineDiff diff = DiffLines("a\nb\nc\n", "x\ny\nz\n", 4);  // needs 6 edits
  EXPECT_FALSE(diff.shortest);
  EXPECT_EQ(diff.deleted, 3);
  EXPECT_EQ(diff.inserted, 3);
  EXPECT_EQ(Side(diff, DiffOp::kDelete), "x\ny\nz\n");
}

TEST(LineDiff, HunksSplitOnlyWhenChangesAreFarApart) {
  std::vector<std::string> a;
  for (int i = 0; i < 30; ++i) a.push_back("line " + std::to_string(i));
  std::vector<std::string> near = a, far = a;
  near[10] = "changed";
  near[14] = "changed";  // 3 equal lines between: one hunk
  far[5] = "changed";
  far[20] = "changed";   // 14 equal lines between: two hunks
  const auto one = UnifiedHunks(DiffLines(Join(a), Join(near)));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].old_start, 8);   // 3 lines of context before line 11
  EXPECT_EQ(one[0].old_count, 11);  // lines 8..18
  EXPECT_EQ(one[0].new_count, 11);
  const auto two = UnifiedHunks(DiffLines(Join(a), Join(far)));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].old_start, 3);
  EXPECT_EQ(two[1].old_start, 18);
  EXPECT_EQ(two[1].new_start, 18);
}

}  // namespace
}  // namespace kernelevolve::report
