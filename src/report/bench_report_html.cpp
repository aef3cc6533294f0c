#include "report/bench_report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "report/html_text.h"
#include "report/report_page.h"
#include "report/report_svg.h"

namespace kernelevolve::report {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

double Number(const json& doc, const char* key) {
  return doc.is_object() && doc.contains(key) && doc[key].is_number() ? doc[key].get<double>() : 0.0;
}

std::string Text(const json& doc, const char* key) { return JsonScalarText(doc, key); }

std::pair<double, double> Interval(const json& entry) {
  const json ci = entry.value("ci", json::array());
  if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number()) return {0, 0};
  return {ci[0].get<double>(), ci[1].get<double>()};
}

std::string TotalsCard(const json& t) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"problems", Text(t, "problems")},
      {"correct", fmt::format("{} ({:.1f}%)", Text(t, "correct"), 100 * Number(t, "correct_rate"))},
      {"fast_0 / fast_1 / fast_1.5 / fast_2", fmt::format("{:.3f} / {:.3f} / {:.3f} / {:.3f}", Number(t, "fast_0"),
                                                          Number(t, "fast_1"), Number(t, "fast_1.5"), Number(t, "fast_2"))},
      {"geomean speedup (correct)", FormatSpeedup(Number(t, "geomean_speedup_correct"))},
      {"geomean speedup (all, incorrect as 1.0)", FormatSpeedup(Number(t, "geomean_speedup_all_incorrect_as_1"))},
      {"median roofline (memory-bound)", fmt::format("{} of copy bandwidth over {} problems",
                                                     FormatPercent(Number(t, "median_memory_roofline_fraction")),
                                                     Text(t, "memory_bound_problems"))}};
  if (t.contains("vs_torch_compile") && t["vs_torch_compile"].is_object()) {
    const json& c = t["vs_torch_compile"];
    rows.emplace_back("vs torch.compile", fmt::format("faster on {}; geomean {} (correct), {} (all)",
                                                      FormatPercent(Number(c, "share_faster")),
                                                      FormatSpeedup(Number(c, "geomean_speedup_correct")),
                                                      FormatSpeedup(Number(c, "geomean_speedup_all_incorrect_as_1"))));
  }
  if (t.contains("wide_interval_problems") && t["wide_interval_problems"].is_array() && !t["wide_interval_problems"].empty()) {
    rows.emplace_back("wide intervals (noisy)", t["wide_interval_problems"].dump());
  }
  return "<div class=\"card\" id=\"bench-totals\"><h3>totals</h3>" + KeyValueTable(rows) + "</div>";
}

std::string SuiteCard(const json& b) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const char* key : {"suite_dir", "target", "budget", "policy", "jobs", "seed", "confirm_rounds", "sizes_file",
                          "suite_problems", "interrupted"}) {
    const std::string value = Text(b, key);
    if (!value.empty()) rows.emplace_back(key, value);
  }
  if (b.contains("sets") && b["sets"].is_array() && !b["sets"].empty()) rows.emplace_back("sets", b["sets"].dump());
  return "<div class=\"card\"><h3>suite</h3>" + KeyValueTable(rows) + "</div>";
}


std::string OutcomeBadge(const std::string& outcome) {
  const char* css = outcome == "correct" ? "ok" : (outcome == "no_correct_candidate" || outcome == "unsupported" ? "warn" : "bad");
  return fmt::format("<span class=\"badge {}\">{}</span>", css, EscapeHtml(outcome));
}

std::string ProblemRow(const BenchProblemData& p, const fs::path& page_dir, const IntervalAxis& axis, double max_fraction) {
  const json& e = p.entry;
  const bool correct = e.value("correct", false);
  const double speedup = Number(e, "speedup");
  const auto [low, high] = Interval(e);
  const json roof = e.value("roofline", json::object());
  const double fraction = Number(roof, "fraction");
  const std::string bound = Text(roof, "bound");
  std::string link = "<span class=\"muted\">-</span>";
  if (!p.report_path.empty()) {
    link = fmt::format("<a href=\"{}\">report</a>", EscapeHtml(fs::weakly_canonical(p.report_path).lexically_relative(page_dir).generic_string()));
  } else if (!p.report_error.empty()) {
    link = fmt::format("<span class=\"muted\" title=\"{}\">none</span>", EscapeHtml(p.report_error));
  }
  const std::string name = Text(e, "problem");
  const std::string name_cell =
      p.report_path.empty() ? EscapeHtml(name)
                            : fmt::format("<a href=\"{}\">{}</a>",
                                          EscapeHtml(fs::weakly_canonical(p.report_path).lexically_relative(page_dir).generic_string()),
                                          EscapeHtml(name));
  const std::string note = correct ? Text(e, "stop_reason") : Text(e, "message");
  return fmt::format(
      "<tr class=\"problem-row\" data-problem=\"{0}\"><td>{1}</td><td>{2}</td><td class=\"num\" data-value=\"{3}\">{4}</td>"
      "<td class=\"num\">{5}</td><td>{6}</td><td>{7}</td><td class=\"num\" data-value=\"{8}\">{9}</td><td>{10}</td>"
      "<td class=\"num\">{11}</td><td class=\"num\" data-value=\"{12}\">{12:.0f}</td><td>{13}</td><td class=\"msg\">{14}</td></tr>",
      EscapeHtml(name), name_cell,
      OutcomeBadge(Text(e, "outcome")), correct ? speedup : 0, correct ? FormatSpeedup(speedup) : "-",
      correct ? fmt::format("[{:.2f}, {:.2f}]", low, high) : "",
      correct ? IntervalSvg(low, speedup, high, axis, fmt::format("{}: {} [{:.2f}, {:.2f}] ({})", name, FormatSpeedup(speedup),
                                                                  low, high, Text(e, "speedup_source")))
              : "",
      EscapeHtml(correct ? Text(e, "speedup_source") : ""), correct ? fraction : 0,
      correct && fraction > 0 ? EscapeHtml(FormatPercent(fraction) + " (" + bound + ")") : "-",
      correct && fraction > 0 ? FractionBarSvg(fraction, max_fraction) : "", Text(e, "evaluations"),
      Number(e, "elapsed_seconds"), link, EscapeHtml(note));
}

}  // namespace

std::string BenchReportHtml(const BenchReportData& d, const fs::path& page_dir) {
  const json& b = d.bench;
  const json totals = b.value("totals", json::object());
  double lo = 1.0, hi = 1.0, max_fraction = 1.0;
  for (const auto& p : d.problems) {
    if (!p.entry.value("correct", false)) continue;
    const auto [low, high] = Interval(p.entry);
    const double speedup = Number(p.entry, "speedup");
    lo = std::min({lo, low > 0 ? low : speedup, speedup});
    hi = std::max({hi, high, speedup});
    max_fraction = std::max(max_fraction, Number(p.entry.value("roofline", json::object()), "fraction"));
  }
  const IntervalAxis axis = MakeIntervalAxis(lo, hi, 1.0);
  std::string body = fmt::format("<h1>{}</h1><div class=\"sub\">{} problems &middot; {} correct &middot; geomean {} (correct)"
                                 " &middot; target {}</div>",
                                 EscapeHtml("kernelevolve bench report: " + fs::path(Text(b, "suite_dir")).filename().string()),
                                 d.problems.size(), EscapeHtml(Text(totals, "correct")),
                                 FormatSpeedup(Number(totals, "geomean_speedup_correct")), EscapeHtml(Text(b, "target")));
  body += "<div class=\"cards\" id=\"bench-summary\">" + TotalsCard(totals) + SuiteCard(b) +
          MachineCardHtml(b.value("machine", json::object())) + "</div>";
  body += "<h2>Problems</h2>";
  body += fmt::format("<p class=\"legend\">speedup vs eager PyTorch with its interval (dot and bar; dashed: 1.0; axis "
                      "{:.2f}x to {:.2f}x): the confirmed median and 95% interval, or the search-time figure and its "
                      "spread (column \"from\"). Click a column header to sort.</p>",
                      axis.min, axis.max);
  body += "<table class=\"data sortable\" id=\"problems-table\"><thead><tr><th data-sort>problem</th><th data-sort>outcome</th>"
          "<th class=\"num\" data-sort>speedup</th><th class=\"num\">interval</th><th></th><th>from</th>"
          "<th class=\"num\" data-sort>roofline</th><th></th><th class=\"num\" data-sort>evals</th>"
          "<th class=\"num\" data-sort>time s</th><th>report</th><th>stop reason / message</th></tr></thead><tbody>";
  for (const auto& p : d.problems) body += ProblemRow(p, fs::weakly_canonical(page_dir), axis, max_fraction);
  body += "</tbody></table>";
  body += fmt::format("<footer>written by kernelevolve report from {}</footer>", EscapeHtml(d.bench_dir.string()));
  return HtmlPage("kernelevolve bench: " + Text(b, "suite_dir"), body);
}

}  // namespace kernelevolve::report
