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

std::string SecondsAtLeastError(const std::string& text, double minimum, const std::string& why) {
  if (std::string error = PositiveSecondsError(text); !error.empty()) return error;
  const double value = std::strtod(text.c_str(), nullptr);
  if (value < minimum) return fmt::format("{} s is below the {:g} s minimum: {}", text, minimum, why);
  return "";
}

CLI::Validator SecondsAtLeast(double minimum, std::string why) {
  return CLI::Validator(
      [minimum, why](std::string& text) { return SecondsAtLeastError(text, minimum, why); },
      fmt::format("SECONDS >= {:g}", minimum));
}

CLI::Validator LoadTimeoutSeconds() {
  return SecondsAtLeast(1.0, "a load imports the problem and runs its reference");
}

CLI::Validator PositiveSeconds() {
  return CLI::Validator([](std::string& text) { return PositiveSecondsError(text); }, "SECONDS > 0");
}

}  // namespace kernelevolve::cli
