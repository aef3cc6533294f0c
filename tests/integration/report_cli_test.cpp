// End to end: `kernelevolve report` on a real small run and bench (the real worker,
// compiler and search), checked in the written HTML and, when a Chromium binary exists,
// in the DOM headless Chromium shows after the page's script ran.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "report/html_text.h"
#include "store/store.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;
using testing_util::FreshTestDir;
using testing_util::ReadFile;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// Runs a shell command, stdout and stderr into `log`; returns the exit code (-1: no exit).
int Shell(const std::string& command, const fs::path& log) {
  const int status = std::system(fmt::format("{} >'{}' 2>&1", command, log.string()).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void WriteProblem(const fs::path& path, const std::string& forward) {
  std::ofstream(path) << "import torch\nimport torch.nn as nn\n\n"
                         "class Model(nn.Module):\n"
                         "    def __init__(self):\n        super().__init__()\n\n"
                         "    def forward(self, x):\n        return " << forward << "\n\n"
                         "def get_inputs():\n    return [torch.randn(16, 512)]\n\n"
                         "def get_init_inputs():\n    return []\n";
}

/// What a real run holds, read through the store API.
struct RunFacts {
  size_t nodes = 0;
  size_t correct = 0;
  int64_t best_id = -1;
  std::string best_source;
};

RunFacts ReadRunFacts(const fs::path& run_dir) {
  RunFacts facts;
  const store::Store store = store::Store::OpenExisting(run_dir / "kernelevolve.db");
  const auto runs = store.ListRuns();
  EXPECT_EQ(runs.size(), 1u);
  if (runs.empty()) return facts;
  for (const auto& node : store.LoadNodes(runs.back().id)) {
    ++facts.nodes;
    if (node.evaluation.correct) ++facts.correct;
  }
  const auto result = nlohmann::json::parse(ReadFile(run_dir / "result.json"));
  facts.best_id = result["best"]["node_id"].get<int64_t>();
  facts.best_source = ReadFile(run_dir / "best_kernel.cpp");
  return facts;
}

/// A bench of two problems (relu: a real search of 4 evaluations; histc: unsupported,
/// recorded without a search) in `dir`/bench; relu's run directory is a real
/// `optimize --out` folder. Returns the bench folder.
fs::path MakeTinyBench(const fs::path& dir) {
  const fs::path suite = dir / "suite";
  fs::create_directories(suite);
  WriteProblem(suite / "a_relu.py", "torch.relu(x)");
  WriteProblem(suite / "b_histc.py", "torch.histc(x)");
  const fs::path out = dir / "bench";
  const int code = Shell(fmt::format("cd '{}' && '{}' bench '{}' --budget 4 --threads 1 --seeds 2 --min-time 0.03 "
                                     "--confirm-rounds 2 --out '{}' --cache-dir '{}'",
                                     KE_SOURCE_DIR, KE_BINARY_PATH, suite.string(), out.string(), (dir / "cache").string()),
                         dir / "bench_log.txt");
  EXPECT_EQ(code, 0) << ReadFile(dir / "bench_log.txt");
  return out;
}

/// `text` as the DOM serializer writes a text node (HTML 5 "escaping a string": only &, <,
/// > and U+00A0 are replaced; quotes stay as they are).
std::string DomText(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

/// The first line of the best source that is missing from the page's numbered source
/// listing ("" when every line is there, escaped). `dom`: the page as Chromium serializes it.
std::string MissingSourceLine(const std::string& html, const std::string& source, bool dom) {
  std::istringstream lines(source);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string escaped = dom ? DomText(line) : report::EscapeHtml(line);
    if (html.find(fmt::format("<span class=\"ln\">{}</span>{}\n", number, escaped)) == std::string::npos) {
      return fmt::format("line {}: {}", number, line);
    }
  }
  return "";
}

/// What is wrong with a run page (the written file, or the DOM Chromium dumps after the
/// script ran): one line per problem, none when the tree, the details and the table are there.
std::vector<std::string> RunPageProblems(const std::string& html, const RunFacts& facts, bool dom) {
  std::vector<std::string> problems;
  if (html.find("id=\"search-tree\"") == std::string::npos) problems.push_back("no #search-tree");
  if (Count(html, "<li class=\"tree-node\"") != facts.nodes) {
    problems.push_back(fmt::format("{} tree nodes, the store has {}", Count(html, "<li class=\"tree-node\""), facts.nodes));
  }
  if (Count(html, "<section class=\"node-detail\"") != facts.nodes) problems.push_back("not one detail section per node");
  if (Count(html, "<tr class=\"correct-row") != facts.correct) problems.push_back("not one table row per correct node");
  if (const std::string missing = MissingSourceLine(html, facts.best_source, dom); !missing.empty()) {
    problems.push_back("the best node's source (escaped) lacks " + missing);
  }
  return problems;
}

std::vector<std::string> BenchPageProblems(const std::string& html, size_t rows) {
  std::vector<std::string> problems;
  if (html.find("id=\"problems-table\"") == std::string::npos) problems.push_back("no #problems-table");
  if (Count(html, "<tr class=\"problem-row\"") != rows) problems.push_back("not one row per problem");
  if (html.find("id=\"bench-totals\"") == std::string::npos) problems.push_back("no totals");
  return problems;
}

TEST(ReportCli, RunAndBenchReportsHoldTheTreeTheSourcesAndTheTable) {
  const fs::path dir = FreshTestDir("ke_report");
  const fs::path bench = MakeTinyBench(dir);
  const fs::path run = bench / "a_relu";
  const RunFacts facts = ReadRunFacts(run);
  ASSERT_EQ(facts.nodes, 4u);
  ASSERT_GE(facts.correct, 1u);

  ASSERT_EQ(Shell(fmt::format("'{}' report '{}'", KE_BINARY_PATH, run.string()), dir / "log.txt"), 0) << ReadFile(dir / "log.txt");
  const std::string page = ReadFile(run / "report.html");
  for (const auto& problem : RunPageProblems(page, facts, false)) ADD_FAILURE() << problem;
  // Every line of the best kernel is in the page, escaped (the sources hold '<' and
  // '&'), and the raw text is not.
  ASSERT_NE(facts.best_source.find_first_of("<&"), std::string::npos) << "the fixture has nothing to escape";
  EXPECT_EQ(page.find("#include <"), std::string::npos);
  EXPECT_NE(page.find(fmt::format("data-best-node=\"{}\"", facts.best_id)), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);

  ASSERT_EQ(Shell(fmt::format("'{}' report '{}' --out '{}'", KE_BINARY_PATH, bench.string(), (dir / "b.html").string()),
                  dir / "log.txt"), 0) << ReadFile(dir / "log.txt");
  const std::string bench_page = ReadFile(dir / "b.html");
  for (const auto& problem : BenchPageProblems(bench_page, 2)) ADD_FAILURE() << problem;
  EXPECT_NE(bench_page.find("<a href=\"bench/a_relu/report.html\">"), std::string::npos);
  EXPECT_NE(bench_page.find("unsupported"), std::string::npos);

  // Bad input: exit 2 with one line naming the path.
  fs::create_directories(dir / "empty");
  EXPECT_EQ(Shell(fmt::format("'{}' report '{}'", KE_BINARY_PATH, (dir / "empty").string()), dir / "log.txt"), 2);
  std::string err = ReadFile(dir / "log.txt");
  EXPECT_NE(err.find((dir / "empty").string()), std::string::npos) << err;
  EXPECT_EQ(Count(err, "\n"), 1u) << err;
  fs::create_directories(dir / "garbage");
  std::ofstream(dir / "garbage" / "kernelevolve.db") << std::string(200, 'x');
  EXPECT_EQ(Shell(fmt::format("'{}' report '{}'", KE_BINARY_PATH, (dir / "garbage").string()), dir / "log.txt"), 2);
  err = ReadFile(dir / "log.txt");
  EXPECT_NE(err.find((dir / "garbage" / "kernelevolve.db").string()), std::string::npos) << err;
  EXPECT_EQ(Count(err, "\n"), 1u) << err;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

/// The first Chromium binary on PATH ($KE_CHROMIUM first), or "".
std::string FindChromium() {
  std::vector<std::string> names = {"chromium", "chromium-browser", "google-chrome"};
  if (const char* env = std::getenv("KE_CHROMIUM"); env != nullptr && *env != '\0') names.insert(names.begin(), env);
  for (const auto& name : names) {
    if (std::system(fmt::format("command -v '{}' >/dev/null 2>&1", name).c_str()) == 0) return name;
  }
  return "";
}

/// The DOM of `page` after its scripts ran, as headless Chromium serializes it (its
/// stderr, dbus noise mostly, goes to DIR/chromium_log.txt).
std::string DumpDom(const std::string& chromium, const fs::path& page, const fs::path& dir) {
  const fs::path dom = dir / "dom.html";
  const fs::path log = dir / "chromium_log.txt";
  const int status = std::system(fmt::format("timeout 120 '{}' --headless --disable-gpu --no-sandbox --user-data-dir='{}' "
                                             "--dump-dom 'file://{}' >'{}' 2>'{}'",
                                             chromium, (dir / "chromium-profile").string(), fs::absolute(page).string(),
                                             dom.string(), log.string())
                                     .c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(log);
  return ReadFile(dom);
}

/// `page` without the text from `from` up to (not including) `to`.
fs::path WithoutPart(const fs::path& page, const std::string& from, const std::string& to, const fs::path& out) {
  std::string html = ReadFile(page);
  const size_t a = html.find(from), b = html.find(to, a);
  EXPECT_TRUE(a != std::string::npos && b != std::string::npos) << from << " ... " << to;
  if (a != std::string::npos && b != std::string::npos) html.erase(a, b - a);
  std::ofstream(out) << html;
  return out;
}

TEST(ReportCli, ChromiumShowsTheTreeTheSelectedNodeAndTheTable) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium binary on PATH (Debian package chromium; scripts/setup.sh installs it)";
  const fs::path dir = FreshTestDir("ke_report_chromium");
  const fs::path bench = MakeTinyBench(dir);
  const fs::path run = bench / "a_relu";
  const RunFacts facts = ReadRunFacts(run);
  ASSERT_GE(facts.correct, 1u);
  ASSERT_EQ(Shell(fmt::format("'{}' report '{}'", KE_BINARY_PATH, bench.string()), dir / "log.txt"), 0) << ReadFile(dir / "log.txt");

  const std::string run_dom = DumpDom(chromium, run / "report.html", dir);
  for (const auto& problem : RunPageProblems(run_dom, facts, true)) ADD_FAILURE() << "run page: " << problem;
  EXPECT_NE(run_dom.find("data-ke-ready=\"1\""), std::string::npos) << "the page's script did not finish";
  // The script shows the best node's details and hides the others.
  EXPECT_NE(run_dom.find(fmt::format("<section class=\"node-detail\" id=\"node-{0}\" data-node=\"{0}\">", facts.best_id)),
            std::string::npos);
  EXPECT_EQ(Count(run_dom, "<section class=\"node-detail\"") - Count(run_dom, "hidden=\"\">"), 1u);
  EXPECT_NE(run_dom.find("class=\"node-label st-ok best selected\""), std::string::npos);

  const std::string bench_dom = DumpDom(chromium, bench / "report.html", dir);
  for (const auto& problem : BenchPageProblems(bench_dom, 2)) ADD_FAILURE() << "bench page: " << problem;
  EXPECT_NE(bench_dom.find("data-ke-ready=\"1\""), std::string::npos);

  // The checks fail on a page without the tree, and on one without the table.
  const fs::path no_tree = WithoutPart(run / "report.html", "<ul class=\"tree\"", "</div><div class=\"detail-pane\"",
                                       dir / "no_tree.html");
  EXPECT_FALSE(RunPageProblems(DumpDom(chromium, no_tree, dir), facts, true).empty());
  const fs::path no_table = WithoutPart(bench / "report.html", "<table class=\"data sortable\" id=\"problems-table\"",
                                        "<footer>", dir / "no_table.html");
  EXPECT_FALSE(BenchPageProblems(DumpDom(chromium, no_table, dir), 2).empty());
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
