#include "report/report_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/status.h"
#include "report/html_text.h"

namespace kernelevolve::report {
namespace {

/// A "nice" tick step (1, 2 or 5 x 10^k) giving about `ticks` ticks over `range`.
double NiceStep(double range, int ticks) {
  const double raw = range / std::max(1, ticks);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (raw <= factor * magnitude) return factor * magnitude;
  }
  return 10 * magnitude;
}

double Clamp01(double x) { return std::clamp(x, 0.0, 1.0); }

}  // namespace

std::string BestSpeedupChart(const std::vector<search::Node>& nodes, int width, int height) {
  const double left = 48, right = 12, top = 12, bottom = 34;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const int n = static_cast<int>(nodes.size());
  double y_max = 1.0;
  for (const auto& node : nodes) {
    if (node.evaluation.correct) y_max = std::max(y_max, node.evaluation.fitness);
  }
  const double y_step = NiceStep(y_max * 1.1, 5);
  y_max = std::ceil(y_max * 1.1 / y_step) * y_step;
  const auto px = [&](double i) { return left + (n <= 1 ? plot_w / 2 : plot_w * (i - 1) / (n - 1)); };
  const auto py = [&](double y) { return top + plot_h * (1 - y / y_max); };

  std::string svg = fmt::format(
      "<svg class=\"chart\" id=\"best-speedup-chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" "
      "role=\"img\" aria-label=\"best speedup over evaluations\">",
      width, height);
  for (double y = 0; y <= y_max + 1e-9; y += y_step) {  // horizontal grid and y labels
    svg += fmt::format("<line class=\"grid\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\"/>"
                       "<text class=\"axis\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}x</text>",
                       left, left + plot_w, py(y), left - 6, py(y) + 4, y);
  }
  const int x_step = std::max(1, static_cast<int>(NiceStep(std::max(1, n - 1), 8)));
  for (int i = 1; i <= n; i += (i == 1 && x_step > 1 ? x_step - 1 : x_step)) {
    svg += fmt::format("<text class=\"axis\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>", px(i),
                       top + plot_h + 16, i);
  }
  svg += fmt::format("<text class=\"axis\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">evaluation</text>",
                     left + plot_w / 2, height - 2);
  svg += fmt::format("<line class=\"eager\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\"><title>eager "
                     "PyTorch (1.0x)</title></line>",
                     left, left + plot_w, py(1.0));
  std::string step;  // best-so-far as a step line, starting at the first correct node
  double best = 0;
  for (int i = 0; i < n; ++i) {
    const auto& e = nodes[i].evaluation;
    if (!e.correct || e.fitness <= best) continue;
    step += step.empty() ? fmt::format("M{:.1f},{:.1f}", px(i + 1), py(e.fitness))
                         : fmt::format(" H{:.1f} V{:.1f}", px(i + 1), py(e.fitness));
    best = e.fitness;
  }
  if (!step.empty()) svg += fmt::format("<path class=\"best-line\" d=\"{} H{:.1f}\"/>", step, px(n));
  for (int i = 0; i < n; ++i) {
    const auto& node = nodes[i];
    const auto& e = node.evaluation;
    const std::string title = EscapeHtml(fmt::format(
        "#{} {}: {}", node.id, node.candidate.template_name.empty() ? node.candidate.operator_name : node.candidate.template_name,
        e.correct ? FormatSpeedup(e.fitness) : std::string(core::StatusName(e.status))));
    if (e.correct) {
      svg += fmt::format("<circle class=\"pt-ok\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\"><title>{}</title></circle>",
                         px(i + 1), py(e.fitness), title);
    } else {
      const double x = px(i + 1), y = py(0);
      svg += fmt::format("<path class=\"pt-fail\" d=\"M{0:.1f},{1:.1f} l6,6 m0,-6 l-6,6\"><title>{2}</title></path>",
                         x - 3, y - 3, title);
    }
  }
  return svg + "</svg>";
}

IntervalAxis MakeIntervalAxis(double min, double max, double reference) {
  if (!(max > min)) {
    const double pad = std::max(std::abs(min) * 0.1, 1e-9);
    min -= pad;
    max += pad;
  }
  const double margin = 0.05 * (max - min);
  return {min - margin, max + margin, reference};
}

std::string IntervalSvg(double low, double mid, double high, const IntervalAxis& axis, const std::string& title,
                        int width, int height) {
  const auto px = [&](double v) { return 4 + (width - 8) * Clamp01((v - axis.min) / (axis.max - axis.min)); };
  const double cy = height / 2.0;
  std::string svg = fmt::format("<svg class=\"interval\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\">"
                                "<title>{2}</title>",
                                width, height, EscapeHtml(title));
  if (axis.reference > 0) {
    svg += fmt::format("<line class=\"ref\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" y2=\"{1}\"/>", px(axis.reference),
                       height);
  }
  if (high > 0) {
    svg += fmt::format("<line class=\"ci\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2}\" y2=\"{2}\"/>", px(low), px(high), cy);
  }
  if (mid > 0) svg += fmt::format("<circle class=\"mid\" cx=\"{:.1f}\" cy=\"{}\" r=\"3.5\"/>", px(mid), cy);
  return svg + "</svg>";
}

std::string PointsSvg(const std::vector<double>& points, double low, double high, const IntervalAxis& axis, int width,
                      int height) {
  const auto px = [&](double v) { return 6 + (width - 12) * Clamp01((v - axis.min) / (axis.max - axis.min)); };
  std::string svg = fmt::format("<svg class=\"interval\" id=\"confirmation-chart\" viewBox=\"0 0 {0} {1}\" "
                                "width=\"{0}\" height=\"{1}\">",
                                width, height);
  if (axis.reference > 0) {
    svg += fmt::format("<line class=\"ref\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" y2=\"{1}\"><title>{2:g}x"
                       "</title></line>",
                       px(axis.reference), height - 12, axis.reference);
  }
  svg += fmt::format("<rect class=\"ci-band\" x=\"{:.1f}\" y=\"6\" width=\"{:.1f}\" height=\"{}\"><title>95% "
                     "interval [{:.2f}, {:.2f}]</title></rect>",
                     px(low), std::max(1.0, px(high) - px(low)), height - 24, low, high);
  for (size_t i = 0; i < points.size(); ++i) {
    svg += fmt::format("<circle class=\"mid\" cx=\"{:.1f}\" cy=\"{}\" r=\"3\"><title>round {}: {:.3f}x</title>"
                       "</circle>",
                       px(points[i]), (height - 12) / 2, i + 1, points[i]);
  }
  for (const double tick : {axis.min, axis.max}) {
    svg += fmt::format("<text class=\"axis\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\">{:.2f}x</text>", px(tick),
                       height - 1, tick == axis.min ? "start" : "end", tick);
  }
  return svg + "</svg>";
}

std::string FractionBarSvg(double fraction, double axis_max, int width, int height) {
  axis_max = std::max(axis_max, 1.0);
  const double w = (width - 2) * Clamp01(fraction / axis_max);
  const double roof = 1 + (width - 2) / axis_max;
  return fmt::format("<svg class=\"fraction\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\">"
                     "<rect class=\"track\" x=\"1\" y=\"2\" width=\"{2}\" height=\"{3}\"/>"
                     "<rect class=\"fill\" x=\"1\" y=\"2\" width=\"{4:.1f}\" height=\"{3}\"/>"
                     "<line class=\"roof\" x1=\"{5:.1f}\" x2=\"{5:.1f}\" y1=\"0\" y2=\"{1}\"><title>100%: the roof"
                     "</title></line></svg>",
                     width, height, width - 2, height - 4, w, roof);
}

}  // namespace kernelevolve::report
