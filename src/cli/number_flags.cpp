#include "cli/number_flags.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace kernelevolve::cli {

std::string PositiveSecondsError(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (text.empty() || end == begin || *end != '\0') return fmt::format("'{}' is not a number of seconds", text);
  if (!std::isfinite(value) || value <= 0) return fmt::format("{} is not a positive number of seconds", text);
  return "";
}

CLI::Validator PositiveSeconds() {
  return CLI::Validator([](std::string& text) { return PositiveSecondsError(text); }, "SECONDS > 0");
}

}  // namespace kernelevolve::cli
