// Text for the HTML report: escaping (every string that goes into the page passes
// through here) and the number formats the report shows.
#pragma once

#include <string>
#include <string_view>

namespace kernelevolve::report {

/// `text` with &, <, >, " and ' replaced by character references (HTML 5, section
/// 13.1.2.6): safe inside element content and inside quoted attribute values. Invalid
/// UTF-8 bytes (an LLM's source can hold them) become U+FFFD.
std::string EscapeHtml(std::string_view text);

/// "1.23x", or "-" when `speedup` <= 0 (not measured, not correct).
std::string FormatSpeedup(double speedup);

/// A latency in microseconds with 3 significant digits ("12.3 µs", "1.23 ms"); "-" when <= 0.
std::string FormatMicros(double us);

/// "41%" of a fraction (0.41); "-" when `fraction` <= 0 (unknown).
std::string FormatPercent(double fraction);

}  // namespace kernelevolve::report
