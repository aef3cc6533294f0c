#include "report/timing_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "eval/roofline.h"
#include "report/html_text.h"
#include "report/report_page.h"
#include "report/report_svg.h"

namespace kernelevolve::report {
namespace {

using json = nlohmann::json;

double EagerMedianUs(const RunReportData& d) {
  if (!d.result.is_object() || !d.result.contains("baseline_eager_us")) return 0;
  const json& b = d.result["baseline_eager_us"];
  return b.is_object() && b.contains("median") && b["median"].is_number() ? b["median"].get<double>() : 0;
}

}  // namespace

std::string CorrectNodesSection(const RunReportData& d) {
  std::vector<const search::Node*> correct;
  for (const auto& node : d.nodes) {
    if (node.evaluation.correct) correct.push_back(&node);
  }
  std::string html = "<h2>Correct nodes: timing intervals and roofline</h2>";
  if (correct.empty()) return html + "<p class=\"muted\" id=\"correct-nodes\">no correct node</p>";
  const double eager = EagerMedianUs(d);
  double low = eager > 0 ? eager : 1e300, high = eager;
  double max_fraction = 1.0;
  for (const auto* node : correct) {
    const auto& t = node->evaluation.latency;
    low = std::min(low, t.ci_low_us > 0 ? t.ci_low_us : t.median_us);
    high = std::max({high, t.ci_high_us, t.median_us});
    max_fraction = std::max(max_fraction, node->evaluation.roofline.fraction);
  }
  const IntervalAxis axis = MakeIntervalAxis(low, high, eager);
  html += fmt::format("<p class=\"legend\">drop-in latency per call: dot = median, bar = its 95% confidence interval, "
                      "dashed = eager PyTorch's median ({}); axis {} to {}. Roofline: fraction of the copy bandwidth "
                      "(memory-bound) or the compute peak (compute-bound); the red tick is 100%.</p>",
                      EscapeHtml(FormatMicros(eager)), EscapeHtml(FormatMicros(axis.min)), EscapeHtml(FormatMicros(axis.max)));
  html += "<table class=\"data sortable\" id=\"correct-nodes\"><thead><tr><th data-sort>node</th><th data-sort>template</th>"
          "<th class=\"num\" data-sort>median</th><th class=\"num\">95% CI</th><th>interval</th>"
          "<th class=\"num\" data-sort>kernel-only</th><th class=\"num\" data-sort>speedup</th><th data-sort>bound</th>"
          "<th class=\"num\" data-sort>roofline</th><th></th><th class=\"num\" data-sort>GB/s</th>"
          "<th class=\"num\" data-sort>GFLOP/s</th></tr></thead><tbody>";
  for (const auto* node : correct) {
    const auto& e = node->evaluation;
    const auto& t = e.latency;
    html += fmt::format(
        "<tr class=\"correct-row{}\"><td data-value=\"{}\"><a href=\"#node-{}\" data-select=\"{}\" class=\"jump\">#{}</a>{}</td>"
        "<td>{}</td><td class=\"num\" data-value=\"{}\">{}</td><td class=\"num\">[{}, {}]</td><td>{}</td>"
        "<td class=\"num\" data-value=\"{}\">{}</td><td class=\"num\" data-value=\"{}\">{}</td><td>{}</td>"
        "<td class=\"num\" data-value=\"{}\">{}</td><td>{}</td><td class=\"num\">{:.1f}</td><td class=\"num\">{:.2f}</td></tr>",
        node->id == d.best_node_id ? " best" : "", node->id, node->id, node->id, node->id,
        node->id == d.best_node_id ? " &#9733;" : "", EscapeHtml(node->candidate.template_name), t.median_us,
        EscapeHtml(FormatMicros(t.median_us)), EscapeHtml(FormatMicros(t.ci_low_us)), EscapeHtml(FormatMicros(t.ci_high_us)),
        IntervalSvg(t.ci_low_us, t.median_us, t.ci_high_us, axis,
                    fmt::format("#{}: median {} [{}, {}], n = {}", node->id, FormatMicros(t.median_us),
                                FormatMicros(t.ci_low_us), FormatMicros(t.ci_high_us), t.n)),
        e.kernel_only.median_us, EscapeHtml(FormatMicros(e.kernel_only.median_us)), e.fitness,
        FormatSpeedup(e.fitness), EscapeHtml(e.roofline.bound), e.roofline.fraction, FormatPercent(e.roofline.fraction),
        e.roofline.Known() ? FractionBarSvg(e.roofline.fraction, max_fraction) : "", e.roofline.achieved_gbps,
        e.roofline.achieved_gflops);
  }
  return html + "</tbody></table>";
}

std::string ConfirmationSection(const RunReportData& d) {
  const json& best = d.result.is_object() ? d.result.value("best", json()) : json();
  const json& c = best.is_object() ? best.value("confirmed", json()) : json();
  if (!c.is_object()) return "";
  std::string html = "<h2>Confirmation of the best kernel</h2><div id=\"confirmation\">";
  if (!c.value("done", false)) {
    return html + "<p>not run: " + EscapeHtml(c.value("message", std::string("-"))) + "</p></div>";
  }
  std::vector<double> ratios;
  if (c.contains("ratios") && c["ratios"].is_array()) {
    for (const auto& r : c["ratios"]) {
      if (r.is_number()) ratios.push_back(r.get<double>());
    }
  }
  const double low = c.contains("ci95") && c["ci95"].size() == 2 ? c["ci95"][0].get<double>() : 0;
  const double high = c.contains("ci95") && c["ci95"].size() == 2 ? c["ci95"][1].get<double>() : 0;
  const double median = c.value("speedup_vs_eager", 0.0);
  double lo = std::min({1.0, low, median}), hi = std::max({1.0, high, median});
  for (const double r : ratios) lo = std::min(lo, r), hi = std::max(hi, r);
  const bool faster = c.value("clearly_faster", false);
  html += fmt::format("<p><b>{}</b> vs eager, 95% interval [{:.3f}, {:.3f}] over {} interleaved rounds (eager, "
                      "candidate, ...): {}</p>",
                      FormatSpeedup(median), low, high, ratios.size(),
                      faster ? "<span class=\"badge ok\">verified faster: the interval lies above 1.0</span>"
                      : !c.value("from_clean_rounds", true)
                          ? "<span class=\"badge warn\">not verified: the machine probe flagged " +
                                EscapeHtml(JsonScalarText(c, "disturbed_rounds")) + " round(s): " +
                                EscapeHtml(JsonScalarText(c, "disturbed_reason")) + "</span>"
                          : "<span class=\"badge warn\">not clearly faster: the interval reaches 1.0</span>");
  html += PointsSvg(ratios, low, high, MakeIntervalAxis(lo, hi, 1.0));
  html += "<p class=\"legend\">dots: each round's ratio (its fastest eager call / its fastest kernel call); band: the "
          "95% interval of their median; dashed: 1.0</p>";
  return html + "</div>";
}

}  // namespace kernelevolve::report
