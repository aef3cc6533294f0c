// Python source literals for generated files (the model_new.py export).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kernelevolve::report {

/// A one-line Python str literal: "..." with JSON escapes (\", \\, \n, \uXXXX), which
/// Python reads back to the same UTF-8 text.
std::string PyShortString(const std::string& text);

/// A readable multi-line Python str literal: """\ + the text + """, with only
/// backslashes doubled, quotes escaped where three would meet (or at the end), CR and
/// other control characters but tab and newline written as \xNN. Python reads it back
/// to exactly `text`.
std::string PyLongString(const std::string& text);

/// A Python list of ints, e.g. [64, 16384] ([] for a 0-d shape).
std::string PyIntList(const std::vector<int64_t>& values);

/// A Python float literal that reads back to the same double (shortest form, e.g.
/// 0.0001, 1e-05, 2.0).
std::string PyFloat(double value);

}  // namespace kernelevolve::report
