#include "report/report_page.h"

#include <fmt/format.h>

#include "report/html_text.h"

namespace kernelevolve::report {
namespace {

constexpr const char* kStyle = R"css(
:root { --ok:#1a7f37; --bad:#cf222e; --warn:#bc4c00; --muted:#57606a; --line:#d0d7de; --bg:#f6f8fa; --accent:#0969da; }
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 24px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 26px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 0 0 6px; }
.sub { color: var(--muted); margin-bottom: 12px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; background: #fff; min-width: 260px; flex: 1; }
table { border-collapse: collapse; }
table.kv td { padding: 2px 10px 2px 0; vertical-align: top; overflow-wrap: anywhere; } table.kv td:first-child { color: var(--muted); white-space: nowrap; }
table.data { width: 100%; font-variant-numeric: tabular-nums; }
table.data th, table.data td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: middle; }
table.data th { background: var(--bg); position: sticky; top: 0; }
table.sortable th[data-sort] { cursor: pointer; } table.sortable th[data-sort]:hover { color: var(--accent); }
td.num, th.num { text-align: right; white-space: nowrap; }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 12px; color: #fff; background: var(--muted); }
.badge.ok { background: var(--ok); } .badge.bad { background: var(--bad); } .badge.warn { background: var(--warn); }
.search { display: grid; grid-template-columns: minmax(280px, 32%) 1fr; gap: 16px; align-items: start; }
.tree-pane { border: 1px solid var(--line); border-radius: 6px; padding: 8px; max-height: 760px; overflow: auto; background: #fff; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 16px; }
ul.tree { padding-left: 0; } ul.tree ul { border-left: 1px dotted #8c959f; margin-left: 6px; }
.tree-root { font-weight: 600; color: var(--muted); }
a.node-label { display: inline-block; padding: 1px 6px; margin: 1px 0; border-radius: 4px; color: inherit; text-decoration: none; white-space: nowrap; }
a.node-label:hover { background: var(--bg); } a.node-label.selected { background: #ddf4ff; outline: 1px solid var(--accent); }
.dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; margin-right: 5px; background: var(--bad); }
.st-ok .dot { background: var(--ok); } .st-incorrect .dot, .st-rejected_by_check .dot { background: var(--warn); }
.node-label .tmpl { color: var(--muted); font-size: 12px; } .node-label.best { font-weight: 700; }
.detail-pane { min-width: 0; }
.node-detail table.kv { width: 100%; table-layout: fixed; } .node-detail table.kv td:first-child { width: 150px; }
.node-detail { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; margin-bottom: 12px; background: #fff; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: 8px; overflow: auto; max-height: 520px; font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; margin: 4px 0 8px; }
pre .ln { color: #8c959f; user-select: none; display: inline-block; width: 3.5em; text-align: right; padding-right: 8px; }
pre.diff .del { background: #ffebe9; display: block; } pre.diff .ins { background: #dafbe1; display: block; }
pre.diff .hunk { color: var(--accent); display: block; } pre.diff .eq { display: block; }
details > summary { cursor: pointer; font-weight: 600; margin: 6px 0 2px; }
.msg { white-space: pre-wrap; } .muted { color: var(--muted); }
svg.chart { max-width: 100%; height: auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
svg text.axis { font-size: 11px; fill: var(--muted); } svg .grid { stroke: #eaeef2; }
svg .eager, svg .ref { stroke: #8c959f; stroke-dasharray: 4 3; } svg .best-line { fill: none; stroke: var(--accent); stroke-width: 2; }
svg .pt-ok { fill: var(--ok); opacity: .8; } svg .pt-fail { stroke: var(--bad); stroke-width: 1.5; }
svg .ci { stroke: var(--accent); stroke-width: 3; stroke-linecap: round; } svg .mid { fill: #1f2328; }
svg .ci-band { fill: #ddf4ff; stroke: var(--accent); } svg .track { fill: #eaeef2; } svg .fill { fill: var(--accent); } svg .roof { stroke: var(--bad); }
.legend { color: var(--muted); font-size: 12px; margin: 4px 0; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
)css";

constexpr const char* kScript = R"js(
(function () {
  'use strict';
  var details = Array.prototype.slice.call(document.querySelectorAll('.node-detail'));
  var labels = Array.prototype.slice.call(document.querySelectorAll('a.node-label'));
  function select(id) {
    var shown = null;
    details.forEach(function (d) { var on = d.getAttribute('data-node') === String(id); d.hidden = !on; if (on) shown = d; });
    labels.forEach(function (a) { a.classList.toggle('selected', a.getAttribute('data-select') === String(id)); });
    return shown;
  }
  document.addEventListener('click', function (event) {
    var link = event.target.closest ? event.target.closest('a[data-select]') : null;
    if (!link) return;
    event.preventDefault();
    var shown = select(link.getAttribute('data-select'));
    if (history.replaceState) history.replaceState(null, '', '#node-' + link.getAttribute('data-select'));
    if (shown && link.classList.contains('jump')) shown.scrollIntoView({ block: 'start' });
  });
  if (details.length) {
    var match = /^#node-(\d+)$/.exec(location.hash);
    var initial = match ? match[1] : document.body.getAttribute('data-best-node');
    if (!initial || !select(initial)) select(details[0].getAttribute('data-node'));
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.querySelectorAll('th[data-sort]'), function (th, column) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0];
        var index = Array.prototype.indexOf.call(th.parentNode.children, th);
        var descending = th.getAttribute('data-dir') !== 'desc';
        th.setAttribute('data-dir', descending ? 'desc' : 'asc');
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[index].getAttribute('data-value') || a.cells[index].textContent;
          var y = b.cells[index].getAttribute('data-value') || b.cells[index].textContent;
          var nx = parseFloat(x), ny = parseFloat(y);
          var cmp = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
          return descending ? -cmp : cmp;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.body.setAttribute('data-ke-ready', '1');
})();
)js";

}  // namespace

std::string HtmlPage(const std::string& title, const std::string& body_html, const std::string& body_attributes) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"kernelevolve report\">\n<title>{}</title>\n<style>{}</style>\n</head>\n"
      "<body{}{}>\n{}\n<script>{}</script>\n</body>\n</html>\n",
      EscapeHtml(title), kStyle, body_attributes.empty() ? "" : " ", body_attributes, body_html, kScript);
}

std::string KeyValueTableHtml(const std::vector<std::pair<std::string, std::string>>& rows, const std::string& css_class) {
  std::string html = fmt::format("<table class=\"{}\">", EscapeHtml(css_class));
  for (const auto& [key, value] : rows) html += fmt::format("<tr><td>{}</td><td>{}</td></tr>", EscapeHtml(key), value);
  return html + "</table>";
}

std::string KeyValueTable(const std::vector<std::pair<std::string, std::string>>& rows, const std::string& css_class) {
  std::vector<std::pair<std::string, std::string>> escaped;
  escaped.reserve(rows.size());
  for (const auto& [key, value] : rows) escaped.emplace_back(key, EscapeHtml(value));
  return KeyValueTableHtml(escaped, css_class);
}

std::string JsonScalarText(const nlohmann::json& doc, const char* key) {
  if (!doc.is_object() || !doc.contains(key)) return "";
  const nlohmann::json& v = doc[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump();
}

std::string MachineCardHtml(const nlohmann::json& m, const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::pair<std::string, std::string>> rows;
  auto add = [&](const char* key) {
    const std::string value = JsonScalarText(m, key);
    if (!value.empty()) rows.emplace_back(key, value);
  };
  add("cpu_model");
  // Issue 16: the instruction set the kernels were compiled for and timed on.
  if (m.is_object() && m.contains("isa") && m["isa"].is_object()) {
    const nlohmann::json& isa = m["isa"];
    std::string features;
    for (const auto& f : isa.value("features", nlohmann::json::array())) {
      if (f.is_string()) features += (features.empty() ? "" : " ") + f.get<std::string>();
    }
    rows.emplace_back("isa", fmt::format("{} ({}-bit vectors){}", isa.value("level", "?"), isa.value("vector_bits", 0),
                                         features.empty() ? "" : ": " + features));
  }
  for (const char* key : {"logical_cores", "threads", "governor", "compiler", "torch_version", "hostname",
                          "copy_bandwidth_gbps", "peak_gflops", "peaks_measured_utc"}) {
    add(key);
  }
  rows.insert(rows.end(), extra.begin(), extra.end());
  return "<div class=\"card\"><h3>machine</h3>" + KeyValueTable(rows) + "</div>";
}

}  // namespace kernelevolve::report
