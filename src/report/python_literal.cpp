#include "report/python_literal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace kernelevolve::report {

std::string PyShortString(const std::string& text) {
  // JSON's escapes are a subset of Python's; invalid UTF-8 is replaced, never thrown.
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string PyLongString(const std::string& text) {
  std::string out = "\"\"\"\\\n";  // the backslash-newline keeps the first line in place
  int quote_run = 0;               // unescaped '"' just written
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const bool last = i + 1 == text.size();
      if (quote_run == 2 || last) {
        out += "\\\"";
        quote_run = 0;
      } else {
        out += c;
        ++quote_run;
      }
      continue;
    }
    quote_run = 0;
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 && c != '\n' && c != '\t') {
      out += fmt::format("\\x{:02x}", byte);
    } else if (byte == 0x7f) {
      out += "\\x7f";
    } else {
      out += c;
    }
  }
  return out + "\"\"\"";
}

std::string PyIntList(const std::vector<int64_t>& values) {
  return fmt::format("[{}]", fmt::join(values, ", "));
}

std::string PyFloat(double value) {
  std::string text = fmt::format("{}", value);  // shortest round-trip form
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

}  // namespace kernelevolve::report
