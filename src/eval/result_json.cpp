#include "eval/result_json.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace kernelevolve::eval {
namespace {

using nlohmann::json;

void RequireObject(const json& doc, const char* what) {
  if (!doc.is_object()) {
    throw core::InvalidInputError(std::string(what) + ": expected a JSON object, got " + doc.dump());
  }
}

double NumberField(const json& doc, const char* key, double fallback) {
  return doc.contains(key) ? DoubleFromJson(doc.at(key)) : fallback;
}

template <typename T>
T Field(const json& doc, const char* key, T fallback, const char* what) {
  if (!doc.contains(key)) return fallback;
  try {
    return doc.at(key).get<T>();
  } catch (const json::exception& e) {
    throw core::InvalidInputError(std::string(what) + ": field '" + key + "' has the wrong type: " + e.what());
  }
}

// Length of the valid UTF-8 sequence starting at text[i], or 0 when invalid
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(const std::string& text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  unsigned char c1 = byte(i + 1);
  if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong
  if (c == 0xED && c1 > 0x9F) return 0;  // surrogate
  if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
  if (c == 0xF4 && c1 > 0x8F) return 0;  // above U+10FFFF
  return n;
}

std::string CleanUtf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += '?';
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

json DoubleToJson(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

double DoubleFromJson(const json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  throw core::InvalidInputError("expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", got " +
                                value.dump());
}

json TimingStatsToJson(const core::TimingStats& s) {
  return {{"n", s.n},
          {"median", DoubleToJson(s.median_us)},
          {"mean", DoubleToJson(s.mean_us)},
          {"stdev", DoubleToJson(s.stdev_us)},
          {"min", DoubleToJson(s.min_us)},
          {"max", DoubleToJson(s.max_us)},
          {"p10", DoubleToJson(s.p10_us)},
          {"p90", DoubleToJson(s.p90_us)},
          {"ci_low", DoubleToJson(s.ci_low_us)},
          {"ci_high", DoubleToJson(s.ci_high_us)},
          {"converged", s.converged}};
}

core::TimingStats TimingStatsFromJson(const json& doc) {
  RequireObject(doc, "timing stats");
  // Keys as written by TimingStatsToJson; the struct's own names ("median_us") are
  // accepted too.
  auto get = [&](const char* key, double fallback) {
    if (doc.contains(key)) return DoubleFromJson(doc.at(key));
    return NumberField(doc, (std::string(key) + "_us").c_str(), fallback);
  };
  core::TimingStats s;
  s.n = Field<int64_t>(doc, "n", 0, "timing stats");
  s.median_us = get("median", 0);
  s.mean_us = get("mean", 0);
  s.stdev_us = get("stdev", 0);
  s.min_us = get("min", 0);
  s.max_us = get("max", 0);
  s.p10_us = get("p10", 0);
  s.p90_us = get("p90", 0);
  s.ci_low_us = get("ci_low", 0);
  s.ci_high_us = get("ci_high", 0);
  s.converged = doc.contains("converged") && doc.at("converged").is_boolean() && doc.at("converged").get<bool>();
  return s;
}

json OutputCheckToJson(const core::OutputCheck& c) {
  return {{"seed_index", c.seed_index},
          {"output", c.output},
          {"passed", c.passed},
          {"max_abs_error", DoubleToJson(c.max_abs_error)},
          {"max_rel_error", DoubleToJson(c.max_rel_error)},
          {"mismatches", c.mismatches},
          {"first_mismatch", c.first_mismatch},
          {"atol", DoubleToJson(c.atol)},
          {"rtol", DoubleToJson(c.rtol)},
          {"note", c.note},
          {"edge_case", c.edge_case}};
}

core::OutputCheck OutputCheckFromJson(const json& doc) {
  RequireObject(doc, "output check");
  core::OutputCheck c;
  c.seed_index = Field<int>(doc, "seed_index", 0, "output check");
  c.output = Field<std::string>(doc, "output", "", "output check");
  c.edge_case = Field<std::string>(doc, "edge_case", "", "output check");
  c.passed = Field<bool>(doc, "passed", false, "output check");
  c.max_abs_error = NumberField(doc, "max_abs_error", 0);
  c.max_rel_error = NumberField(doc, "max_rel_error", 0);
  c.mismatches = Field<int64_t>(doc, "mismatches", 0, "output check");
  c.first_mismatch = Field<int64_t>(doc, "first_mismatch", -1, "output check");
  c.atol = NumberField(doc, "atol", 0);
  c.rtol = NumberField(doc, "rtol", 0);
  c.note = Field<std::string>(doc, "note", "", "output check");
  return c;
}

std::string Utf8Tail(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return CleanUtf8(text);
  size_t start = text.size() - max_bytes;
  while (start < text.size() && IsContinuation(text[start])) ++start;
  return CleanUtf8(text.substr(start));
}

std::string Utf8Head(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return CleanUtf8(text);
  size_t end = max_bytes;
  while (end > 0 && IsContinuation(text[end])) --end;
  return CleanUtf8(text.substr(0, end));
}

}  // namespace kernelevolve::eval
