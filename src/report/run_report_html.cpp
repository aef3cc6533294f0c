#include "report/run_report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <set>
#include <utility>
#include <vector>

#include "core/status.h"
#include "eval/roofline.h"
#include "report/html_text.h"
#include "report/node_detail_html.h"
#include "report/report_page.h"
#include "report/report_svg.h"
#include "report/timing_html.h"

namespace kernelevolve::report {
namespace {

using json = nlohmann::json;
using Rows = std::vector<std::pair<std::string, std::string>>;

std::string UtcTime(double unix_s) {
  if (unix_s <= 0) return "-";
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

std::string JsonText(const json& doc, const char* key) { return JsonScalarText(doc, key); }

double JsonNumber(const json& doc, const char* key) {
  return doc.is_object() && doc.contains(key) && doc[key].is_number() ? doc[key].get<double>() : 0.0;
}

std::string RunCard(const RunReportData& d) {
  const json& r = d.result;
  Rows rows = {{"problem", d.run.problem}, {"problem file", d.run.problem_path}, {"target", d.run.target},
               {"status", d.run.status}, {"stop reason", d.run.stop_reason.empty() ? "-" : d.run.stop_reason},
               {"evaluations", std::to_string(d.nodes.size())}};
  if (r.is_object()) rows.emplace_back("search time", fmt::format("{:.1f} s", JsonNumber(r, "elapsed_seconds")));
  rows.emplace_back("started", UtcTime(d.run.started_unix_s));
  rows.emplace_back("finished", UtcTime(d.run.finished_unix_s));
  for (const char* flag : {"policy", "budget", "seeds", "jobs", "seed"}) {
    const std::string value = JsonText(d.run.config, flag);
    if (!value.empty()) rows.emplace_back(flag, value);
  }
  if (r.is_object() && r.contains("overrides") && r["overrides"].is_object() && !r["overrides"].empty()) {
    rows.emplace_back("overrides (--set)", r["overrides"].dump());
  }
  if (d.runs_in_store > 1) rows.emplace_back("note", fmt::format("the store holds {} runs; this is the last", d.runs_in_store));
  if (!r.is_object()) rows.emplace_back("result.json", "absent (run still going, or killed before its end)");
  return "<div class=\"card\"><h3>run</h3>" + KeyValueTable(rows) + "</div>";
}

std::string BestCard(const RunReportData& d) {
  const search::Node* best = d.Find(d.best_node_id);
  if (best == nullptr) return "<div class=\"card\"><h3>best kernel</h3><p>no correct kernel</p></div>";
  Rows rows;
  rows.emplace_back("node", fmt::format("<a class=\"jump\" href=\"#node-{0}\" data-select=\"{0}\">#{0}</a> {1}",
                                        best->id, EscapeHtml(best->candidate.template_name)));
  rows.emplace_back("speedup (search)", "<b>" + FormatSpeedup(best->evaluation.fitness) + "</b>");
  const json& b = d.result.is_object() ? d.result.value("best", json()) : json();
  const json& c = b.is_object() ? b.value("confirmed", json()) : json();
  if (c.is_object() && c.value("done", false) && c.contains("ci95") && c["ci95"].size() == 2) {
    rows.emplace_back("confirmed", fmt::format("<b>{}</b> [95% CI {:.2f}, {:.2f}] over {} rounds: {}",
                                               FormatSpeedup(JsonNumber(c, "speedup_vs_eager")), c["ci95"][0].get<double>(),
                                               c["ci95"][1].get<double>(), JsonText(c, "rounds"),
                                               c.value("clearly_faster", false) ? "<span class=\"badge ok\">verified faster</span>"
                                               : !c.value("from_clean_rounds", true)
                                                   ? "<span class=\"badge warn\">not verified: machine disturbed</span>"
                                                   : "<span class=\"badge warn\">not clearly faster</span>"));
  } else if (c.is_object()) {
    rows.emplace_back("confirmed", EscapeHtml("not run: " + JsonText(c, "message")));
  }
  rows.emplace_back("drop-in median", EscapeHtml(FormatMicros(best->evaluation.latency.median_us)));
  rows.emplace_back("roofline", EscapeHtml(eval::RooflineShort(best->evaluation.roofline)));
  if (b.is_object()) rows.emplace_back("source file", EscapeHtml(JsonText(b, "source_path")));
  return "<div class=\"card\"><h3>best kernel</h3>" + KeyValueTableHtml(rows) + "</div>";
}

std::string MachineCard(const RunReportData& d) {
  const json& m = d.result.is_object() && d.result.contains("machine") ? d.result["machine"] : d.run.machine;
  std::vector<std::pair<std::string, std::string>> gpu;
  if (d.result.is_object() && d.result.contains("gpu") && d.result["gpu"].is_object()) {
    const std::string device = JsonText(d.result["gpu"], "device");
    if (!device.empty()) gpu.emplace_back("gpu", device);
  }
  return MachineCardHtml(m, gpu);
}

std::string ProblemCard(const RunReportData& d) {
  Rows rows;
  const json& r = d.result;
  if (r.is_object() && r.contains("baseline_eager_us") && r["baseline_eager_us"].is_object()) {
    const json& b = r["baseline_eager_us"];
    rows.emplace_back("eager PyTorch", fmt::format("median {} [95% CI {}, {}]", FormatMicros(JsonNumber(b, "median")),
                                                   FormatMicros(JsonNumber(b, "ci_low")), FormatMicros(JsonNumber(b, "ci_high"))));
  }
  const json& roof = r.is_object() ? r.value("roofline", json()) : json();
  if (roof.is_object()) {
    rows.emplace_back("bytes per call", fmt::format("{:.0f}", JsonNumber(roof, "bytes_per_call")));
    rows.emplace_back("FLOPs per call", fmt::format("{:.0f}", JsonNumber(roof, "flops_per_call")));
    rows.emplace_back("arithmetic intensity", fmt::format("{:.3g} FLOP/byte", JsonNumber(roof, "arithmetic_intensity")));
    rows.emplace_back("machine balance", fmt::format("{:.3g} FLOP/byte", JsonNumber(roof, "machine_balance")));
    rows.emplace_back("bound", JsonText(roof, "bound"));
    rows.emplace_back("roofline time", FormatMicros(JsonNumber(roof, "roofline_time_us")));
  }
  if (rows.empty()) rows.emplace_back("", "no result.json: the problem's figures are unknown");
  return "<div class=\"card\"><h3>problem</h3>" + KeyValueTable(rows) + "</div>";
}

void AppendTree(const RunReportData& d, int64_t parent, std::set<int64_t>& seen, std::string& html) {
  const auto it = d.children.find(parent);
  if (it == d.children.end()) return;
  html += "<ul>";
  for (const int64_t id : it->second) {
    if (!seen.insert(id).second) continue;
    const search::Node& node = *d.Find(id);
    const auto& e = node.evaluation;
    const std::string status(core::StatusName(e.status));
    const std::string tmpl = node.candidate.template_name.empty() ? node.candidate.operator_name : node.candidate.template_name;
    html += fmt::format("<li class=\"tree-node\" data-node=\"{0}\"><a class=\"node-label st-{1}{2}\" href=\"#node-{0}\" "
                        "data-select=\"{0}\" title=\"{3}\"><span class=\"dot\"></span>#{0} <b>{4}</b> <span class=\"tmpl\">"
                        "{5}</span>{6}</a>",
                        id, EscapeHtml(e.correct ? "ok" : status), id == d.best_node_id ? " best" : "",
                        EscapeHtml(e.message), EscapeHtml(e.correct ? FormatSpeedup(e.fitness) : status), EscapeHtml(tmpl),
                        id == d.best_node_id ? " &#9733;" : "");
    AppendTree(d, id, seen, html);
    html += "</li>";
  }
  html += "</ul>";
}

std::string TreeSection(const RunReportData& d) {
  std::string tree = "<ul class=\"tree\" id=\"search-tree\"><li class=\"tree-root\">eager PyTorch (root)";
  std::set<int64_t> seen;
  AppendTree(d, -1, seen, tree);
  tree += "</li></ul>";
  std::string details = "<div class=\"detail-pane\" id=\"node-details\">";
  for (const auto& node : d.nodes) {
    details += NodeDetailHtml(node, node.parent_id >= 0 ? d.Find(node.parent_id) : nullptr, node.id == d.best_node_id);
  }
  if (d.nodes.empty()) details += "<p class=\"muted\">no node was evaluated</p>";
  details += "</div>";
  return "<h2>Search tree</h2><p class=\"legend\">every evaluated node under its parent: green correct (speedup vs eager), "
         "orange incorrect, red failed; click one for its source, the diff against its parent, its log and rationale</p>"
         "<div class=\"search\"><div class=\"tree-pane\">" + tree + "</div>" + details + "</div>";
}

}  // namespace

std::string RunReportHtml(const RunReportData& d) {
  const search::Node* best = d.Find(d.best_node_id);
  std::string body = fmt::format("<h1>{}</h1><div class=\"sub\">{} &middot; {} &middot; stop: {} &middot; {} evaluations"
                                 " &middot; best {}</div>",
                                 EscapeHtml("kernelevolve report: " + d.run.problem), EscapeHtml(d.run.target),
                                 EscapeHtml(d.run.status), EscapeHtml(d.run.stop_reason.empty() ? "-" : d.run.stop_reason),
                                 d.nodes.size(), best == nullptr ? "none correct" : FormatSpeedup(best->evaluation.fitness));
  body += "<div class=\"cards\" id=\"run-summary\">" + RunCard(d) + BestCard(d) + ProblemCard(d) + MachineCard(d) + "</div>";
  body += "<h2>Best speedup over evaluations</h2>" + BestSpeedupChart(d.nodes) +
          "<p class=\"legend\">line: best so far; dots: correct nodes; crosses: failed ones; dashed: eager PyTorch (1.0x)</p>";
  body += TreeSection(d);
  body += CorrectNodesSection(d);
  body += ConfirmationSection(d);
  body += fmt::format("<footer>written by kernelevolve report from {}</footer>", EscapeHtml(d.run_dir.string()));
  const std::string attributes = best == nullptr ? "" : fmt::format("data-best-node=\"{}\"", best->id);
  return HtmlPage("kernelevolve: " + d.run.problem, body, attributes);
}

}  // namespace kernelevolve::report
