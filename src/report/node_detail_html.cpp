#include "report/node_detail_html.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "core/status.h"
#include "eval/roofline.h"
#include "report/html_text.h"
#include "report/report_page.h"

namespace kernelevolve::report {
namespace {

std::string TimingText(const core::TimingStats& t) {
  if (!t.Measured()) return "-";
  return fmt::format("median {} [95% CI {}, {}], min {}, n = {}{}", FormatMicros(t.median_us),
                     FormatMicros(t.ci_low_us), FormatMicros(t.ci_high_us), FormatMicros(t.min_us), t.n,
                     t.converged ? "" : " (not converged)");
}

std::string StatusBadge(const core::Evaluation& e) {
  const std::string name(core::StatusName(e.status));
  const char* css = e.correct ? "ok" : (e.status == core::Status::kIncorrect ? "warn" : "bad");
  return fmt::format("<span class=\"badge {}\">{}</span>", css, EscapeHtml(e.correct ? "correct" : name));
}

std::string FailedChecksHtml(const core::Evaluation& e) {
  std::string rows;
  int shown = 0;
  for (const auto& c : e.checks) {
    if (c.passed || shown >= 12) continue;
    ++shown;
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"num\">{:.3g}</td><td class=\"num\">{:.3g}</td>"
                        "<td class=\"num\">{}</td><td>{}</td></tr>",
                        EscapeHtml(c.edge_case.empty() ? fmt::format("seed {}", c.seed_index) : c.edge_case),
                        EscapeHtml(c.output), c.max_abs_error, c.max_rel_error, c.mismatches, EscapeHtml(c.note));
  }
  if (rows.empty()) return "";
  return "<details open><summary>failed checks</summary><table class=\"data\"><thead><tr><th>input set</th>"
         "<th>output</th><th class=\"num\">max abs err</th><th class=\"num\">max rel err</th>"
         "<th class=\"num\">mismatches</th><th>note</th></tr></thead><tbody>" +
         rows + "</tbody></table></details>";
}

}  // namespace

std::string SourceHtml(const std::string& source) {
  std::string html = "<pre class=\"source\"><code>";
  int number = 0;
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    html += fmt::format("<span class=\"ln\">{}</span>{}\n", ++number, EscapeHtml(std::string_view(source).substr(start, end - start)));
    start = end + 1;
  }
  return html + "</code></pre>";
}

std::string DiffHtml(const LineDiff& diff) {
  const std::vector<DiffHunk> hunks = UnifiedHunks(diff);
  if (hunks.empty()) return "<p class=\"muted\">same source as its parent</p>";
  std::string html = fmt::format("<p class=\"muted\">{} lines removed, {} added{}</p><pre class=\"diff\"><code>",
                                 diff.deleted, diff.inserted,
                                 diff.shortest ? "" : " (too different for a line-by-line diff: whole file replaced)");
  for (const auto& hunk : hunks) {
    html += fmt::format("<span class=\"hunk\">@@ -{},{} +{},{} @@</span>", hunk.old_start, hunk.old_count,
                        hunk.new_start, hunk.new_count);
    for (const auto& line : hunk.lines) {
      const char* css = line.op == DiffOp::kEqual ? "eq" : (line.op == DiffOp::kDelete ? "del" : "ins");
      const char* mark = line.op == DiffOp::kEqual ? " " : (line.op == DiffOp::kDelete ? "-" : "+");
      html += fmt::format("<span class=\"{}\">{}{}</span>", css, mark, EscapeHtml(line.text));
    }
  }
  return html + "</code></pre>";
}

std::string NodeDetailHtml(const search::Node& node, const search::Node* parent, bool is_best) {
  const core::Evaluation& e = node.evaluation;
  const core::Candidate& c = node.candidate;
  std::vector<std::pair<std::string, std::string>> info;
  info.emplace_back("status", StatusBadge(e) + (e.message.empty() ? "" : " " + EscapeHtml(e.message)));
  if (e.correct) {
    info.emplace_back("speedup vs eager",
                      fmt::format("<b>{}</b> (fitness {:.3f}; interval [{:.2f}, {:.2f}])", FormatSpeedup(e.fitness),
                                  e.fitness, e.speedup_vs_eager.ci_low, e.speedup_vs_eager.ci_high));
  }
  info.emplace_back("parent", parent == nullptr ? std::string("root (a draft)")
                                                : fmt::format("<a class=\"jump\" href=\"#node-{0}\" data-select=\"{0}\">#{0}</a> ({1})",
                                                              parent->id, EscapeHtml(parent->evaluation.correct
                                                                                         ? FormatSpeedup(parent->evaluation.fitness)
                                                                                         : std::string(core::StatusName(parent->evaluation.status)))));
  info.emplace_back("depth", std::to_string(node.depth));
  info.emplace_back("operator", EscapeHtml(c.operator_name));
  if (!c.template_name.empty()) info.emplace_back("template", EscapeHtml(c.template_name));
  if (c.knobs.is_object() && !c.knobs.empty()) {
    std::string knobs;
    for (const auto& [name, value] : c.knobs.items()) {
      knobs += fmt::format("{}{}={}", knobs.empty() ? "" : ", ", name, value.is_string() ? value.get<std::string>() : value.dump());
    }
    info.emplace_back("knobs", "<code>" + EscapeHtml(knobs) + "</code>");
  }
  info.emplace_back("drop-in latency", EscapeHtml(TimingText(e.latency)));
  info.emplace_back("kernel-only", EscapeHtml(TimingText(e.kernel_only)));
  if (e.paired_baseline.Measured()) info.emplace_back("eager (paired)", EscapeHtml(TimingText(e.paired_baseline)));
  if (e.roofline.Known()) {
    info.emplace_back("roofline", EscapeHtml(fmt::format("{} ({}-bound; {:.1f} GB/s, {:.2f} GFLOP/s)",
                                                         eval::RooflineShort(e.roofline), e.roofline.bound,
                                                         e.roofline.achieved_gbps, e.roofline.achieved_gflops)));
  }
  info.emplace_back("build / run", EscapeHtml(fmt::format("{:.2f} s{} / {:.2f} s", e.build_seconds,
                                                          e.build_cache_hit ? " (cache hit)" : "", e.run_seconds)));
  info.emplace_back("source hash", "<code>" + EscapeHtml(node.source_hash) + "</code>");

  std::string html = fmt::format("<section class=\"node-detail\" id=\"node-{0}\" data-node=\"{0}\">"
                                 "<h3>node #{0}{1}</h3>",
                                 node.id, is_best ? " &#9733; best" : "");
  html += KeyValueTableHtml(info);
  html += "<details open class=\"rationale\"><summary>rationale</summary><p class=\"msg\">" +
          (c.rationale.empty() ? std::string("<span class=\"muted\">none recorded</span>") : EscapeHtml(c.rationale)) +
          "</p></details>";
  html += FailedChecksHtml(e);
  if (!e.log_excerpt.empty()) {
    html += "<details" + std::string(e.correct ? "" : " open") + " class=\"log\"><summary>error / log excerpt</summary><pre>" +
            EscapeHtml(e.log_excerpt) + "</pre></details>";
  }
  html += "<details open class=\"diff-section\"><summary>diff against the parent</summary>";
  html += parent == nullptr ? "<p class=\"muted\">a draft: no parent to compare with</p>"
                            : DiffHtml(DiffLines(parent->candidate.source, c.source));
  html += "</details>";
  html += fmt::format("<details open class=\"source-section\"><summary>source ({} bytes)</summary>{}</details>",
                      c.source.size(), SourceHtml(c.source));
  return html + "</section>";
}

}  // namespace kernelevolve::report
