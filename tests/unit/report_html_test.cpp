// The HTML report (report/write_report.h) on a store built here: one tree element per
// node nested under its parent, escaped sources and messages, the diff, the correct-node
// table, the bench table with its links, and the refusals (exit-2 errors of the CLI).
#include "report/write_report.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "report/html_text.h"
#include "store_test_util.h"

namespace kernelevolve::report {
namespace {

namespace fs = std::filesystem;
using store::testing::MakeNode;
using store::testing::SampleRun;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class ReportHtmlTest : public store::testing::StoreTest {
 protected:
  /// A run of four nodes: draft #1 correct, #2 its incorrect child, #3 a child of #2
  /// that failed to compile, #4 a second correct draft (the best). Sources and messages
  /// hold characters HTML must escape.
  void MakeRun(const fs::path& run_dir) {
    fs::create_directories(run_dir);
    store::Store store = store::Store::Open(run_dir / "kernelevolve.db");
    const int64_t run = store.CreateRun(SampleRun());
    search::Node a = MakeNode(-1, 1, 1.5, true, "a");
    a.candidate.source = "// draft\nfor (int i = 0; i < n && ok; ++i) y[i] = x[i];\n";
    store.CommitNode(run, a);
    search::Node b = MakeNode(a.id, 2, 0, false, "b");
    b.candidate.source = "// draft\nfor (int i = 0; i <= n && ok; ++i) y[i] = x[i];\n";
    b.candidate.rationale = "<script>alert('x')</script> unroll";
    store.CommitNode(run, b);
    search::Node c = MakeNode(b.id, 3, 0, false, "c");
    c.evaluation.status = core::Status::kCompileError;
    c.evaluation.log_excerpt = "error: expected ';' before '<' token";
    store.CommitNode(run, c);
    search::Node d = MakeNode(-1, 1, 2.25, true, "d");
    d.candidate.source = "template <typename T> T f(T a) { return a < 0 ? -a : a; } // best & fast\n";
    store.CommitNode(run, d);
    best_id_ = d.id;
    store.FinishRun(run, "ok", "budget");
    nlohmann::json result = {{"problem", "softmax"}, {"status", "ok"}, {"stop_reason", "budget"},
                             {"baseline_eager_us", {{"median", 120.0}, {"ci_low", 118.0}, {"ci_high", 123.0}}},
                             {"best", {{"node_id", d.id},
                                       {"confirmed", {{"done", true}, {"rounds", 3}, {"ratios", {2.1, 2.2, 2.3}},
                                                      {"speedup_vs_eager", 2.2}, {"ci95", {2.1, 2.3}},
                                                      {"clearly_faster", true}, {"message", "ok"}}}}}};
    std::ofstream(run_dir / "result.json") << result.dump(2);
  }
  int64_t best_id_ = -1;
};

TEST_F(ReportHtmlTest, RunPageHasTheTreeTheDetailsAndTheCorrectNodes) {
  MakeRun(dir_);
  const WrittenReport written = WriteReport(dir_);
  EXPECT_EQ(written.kind, ReportKind::kRun);
  EXPECT_EQ(written.path, dir_ / "report.html");
  EXPECT_EQ(written.nodes, 4);
  const std::string html = ReadFile(written.path);
  EXPECT_EQ(Count(html, "<li class=\"tree-node\""), 4u);
  EXPECT_EQ(Count(html, "<section class=\"node-detail\""), 4u);
  EXPECT_EQ(Count(html, "<tr class=\"correct-row"), 2u);
  // #3 is nested inside #2, which is nested inside #1; #4 is not inside #1.
  const size_t li1 = html.find("data-node=\"1\""), li2 = html.find("<li class=\"tree-node\" data-node=\"2\"");
  const size_t li3 = html.find("<li class=\"tree-node\" data-node=\"3\""), li4 = html.find("<li class=\"tree-node\" data-node=\"4\"");
  ASSERT_NE(li3, std::string::npos);
  EXPECT_LT(li1, li2);
  EXPECT_LT(li2, li3);
  EXPECT_EQ(html.substr(li1, li2 - li1).find("</li>"), std::string::npos) << "#2 is not inside #1";
  EXPECT_EQ(html.substr(li2, li3 - li2).find("</li>"), std::string::npos) << "#3 is not inside #2";
  EXPECT_EQ(Count(html.substr(li3, li4 - li3), "</ul></li>"), 2u) << "#4 is not back at the root";
  // Escaped: the best source, the rationale, the log; nothing of it raw.
  EXPECT_NE(html.find(EscapeHtml("template <typename T> T f(T a) { return a < 0 ? -a : a; } // best & fast")),
            std::string::npos);
  EXPECT_EQ(html.find("template <typename T>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; unroll"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("expected &#39;;&#39; before &#39;&lt;&#39; token"), std::string::npos);
  // #2's diff against #1: one line out, one in.
  EXPECT_NE(html.find("<span class=\"del\">-for (int i = 0; i &lt; n &amp;&amp; ok"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"ins\">+for (int i = 0; i &lt;= n &amp;&amp; ok"), std::string::npos);
  EXPECT_NE(html.find("data-best-node=\"" + std::to_string(best_id_) + "\""), std::string::npos);
  EXPECT_NE(html.find("id=\"confirmation-chart\""), std::string::npos);
  EXPECT_NE(html.find("id=\"best-speedup-chart\""), std::string::npos);
  // Self-contained: no external resources.
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST_F(ReportHtmlTest, BenchPageHasOneRowPerProblemAndLinksTheirReports) {
  const fs::path bench = dir_ / "bench";
  MakeRun(bench / "softmax");
  fs::create_directories(bench / "broken");
  nlohmann::json doc = {{"suite_dir", "problems/x"}, {"target", "cpu"},
                        {"totals", {{"problems", 2}, {"correct", 1}, {"correct_rate", 0.5}, {"fast_1", 0.5}}},
                        {"problems", {{{"problem", "softmax"}, {"run_dir", "/nonexistent/softmax"}, {"outcome", "correct"},
                                       {"correct", true}, {"speedup", 2.2}, {"ci", {2.1, 2.3}},
                                       {"roofline", {{"bound", "memory"}, {"fraction", 0.4}}}, {"evaluations", 4}},
                                      {{"problem", "broken"}, {"outcome", "load_error"}, {"correct", false},
                                       {"message", "SyntaxError: <bad> & worse"}}}}};
  std::ofstream(bench / "bench.json") << doc.dump();
  const WrittenReport written = WriteReport(bench);
  EXPECT_EQ(written.kind, ReportKind::kBench);
  EXPECT_EQ(written.problems, 2);
  ASSERT_EQ(written.problem_reports.size(), 1u);
  EXPECT_TRUE(fs::exists(bench / "softmax" / "report.html"));
  const std::string html = ReadFile(bench / "report.html");
  EXPECT_EQ(Count(html, "<tr class=\"problem-row\""), 2u);
  EXPECT_NE(html.find("<a href=\"softmax/report.html\">"), std::string::npos);
  EXPECT_NE(html.find("SyntaxError: &lt;bad&gt; &amp; worse"), std::string::npos);
  EXPECT_NE(html.find("id=\"bench-totals\""), std::string::npos);

  // --out elsewhere: the link is relative to the page's folder.
  fs::create_directories(dir_ / "elsewhere");
  WriteReport(bench, dir_ / "elsewhere");
  EXPECT_NE(ReadFile(dir_ / "elsewhere" / "report.html").find("<a href=\"../bench/softmax/report.html\">"), std::string::npos);
}

TEST_F(ReportHtmlTest, RefusesFoldersThatAreNeitherARunNorABench) {
  try {
    WriteReport(dir_);
    FAIL() << "an empty folder was accepted";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  EXPECT_THROW(WriteReport(dir_ / "missing"), core::InvalidInputError);
  EXPECT_THROW(WriteReport(dir_, dir_ / "no" / "such" / "page.html"), core::InvalidInputError);
}

TEST_F(ReportHtmlTest, RefusesADbThatIsNotAKernelevolveStoreAndLeavesItAlone) {
  std::ofstream(db_path_) << "this is not a database, just text that is long enough to be read as a header.....";
  try {
    WriteReport(dir_);
    FAIL() << "garbage was accepted";
  } catch (const store::NotAStoreError& e) {
    EXPECT_NE(std::string(e.what()).find(db_path_.string()), std::string::npos) << e.what();
  }
  fs::remove(db_path_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE photos (id INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THROW(WriteReport(dir_), store::NotAStoreError);
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'runs'", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 0) << "the foreign database got kernelevolve's tables";
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

}  // namespace
}  // namespace kernelevolve::report
