// Inline SVG charts of the HTML report, generated here so the page needs no script
// library and no network. Every function returns one <svg> element; text in it is escaped.
#pragma once

#include <string>
#include <vector>

#include "search/node.h"

namespace kernelevolve::report {

/// Best speedup over evaluations: x = evaluation number (1-based, id order), y = fitness
/// (speedup vs eager). A step line for the best so far, a dot per correct node, a cross
/// on the x axis per failed one, a dashed line at 1.0 (eager). Nodes in `nodes` order.
std::string BestSpeedupChart(const std::vector<search::Node>& nodes, int width = 900, int height = 260);

/// A linear axis shared by the rows of a forest plot.
struct IntervalAxis {
  double min = 0;
  double max = 1;
  double reference = 0;  // dashed vertical line (e.g. eager's median, or 1.0); <= 0: none
};

/// An axis from `min` to `max` with 5% margins on each side (min == max widened).
IntervalAxis MakeIntervalAxis(double min, double max, double reference);

/// One forest-plot row: a bar from `low` to `high` with a dot at `mid` on `axis`, and
/// the axis' reference line. `title` is shown on hover.
std::string IntervalSvg(double low, double mid, double high, const IntervalAxis& axis, const std::string& title,
                        int width = 220, int height = 18);

/// Points (e.g. per-round ratios) with their interval, on `axis`: the confirmation.
std::string PointsSvg(const std::vector<double>& points, double low, double high, const IntervalAxis& axis,
                      int width = 420, int height = 40);

/// A horizontal bar of `fraction` (0..axis_max), with a tick at 1.0 (the roof).
std::string FractionBarSvg(double fraction, double axis_max, int width = 120, int height = 14);

}  // namespace kernelevolve::report
