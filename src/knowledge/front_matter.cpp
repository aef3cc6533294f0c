#include "knowledge/front_matter.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace kernelevolve::knowledge {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

std::string Unquote(std::string s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

/// "[a, b]", "a, b" or "a" -> {"a", "b"}; "[]" -> {}.
std::vector<std::string> ParseList(const std::string& value) {
  std::string inner = Trim(value);
  if (!inner.empty() && inner.front() == '[') {
    inner = inner.substr(1, inner.back() == ']' ? inner.size() - 2 : inner.size() - 1);
  }
  std::vector<std::string> out;
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = Unquote(Trim(item));
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string FirstHeading(const std::string& body) {
  std::stringstream ss(body);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.rfind("# ", 0) == 0) return Trim(line.substr(2));
  }
  return "";
}

void CheckFacet(const std::filesystem::path& path, const char* field,
                const std::vector<std::string>& values, const std::vector<std::string>& allowed) {
  for (const auto& v : values) CheckFacetValue(fmt::format("{}: {}", path.string(), field), v, allowed);
}

}  // namespace

const std::vector<std::string>& KnownPlatforms() {
  static const std::vector<std::string> kValues = {"cpu", "cuda", "triton", "any"};
  return kValues;
}

const std::vector<std::string>& KnownPhases() {
  static const std::vector<std::string> kValues = {"draft", "repair", "optimize"};
  return kValues;
}

const std::vector<std::string>& KnownBottlenecks() {
  static const std::vector<std::string> kValues = {"memory_bound", "compute_bound", "latency",
                                                   "compile_error", "incorrect", "crash",
                                                   "timeout"};
  return kValues;
}

void CheckFacetValue(std::string_view what, const std::string& value,
                     const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  throw core::InvalidInputError(
      fmt::format("{} '{}' is not one of: {}", what, value, fmt::join(allowed, ", ")));
}

ParsedDocument ParseDocument(const std::string& text, const std::filesystem::path& path) {
  ParsedDocument doc;
  std::stringstream ss(text);
  std::string line;
  bool has_block = std::getline(ss, line) && Trim(line) == "---";
  if (has_block) {
    int line_no = 1;
    bool closed = false;
    while (std::getline(ss, line)) {
      ++line_no;
      const std::string t = Trim(line);
      if (t == "---") {
        closed = true;
        break;
      }
      if (t.empty() || t[0] == '#') continue;
      const size_t colon = t.find(':');
      if (colon == std::string::npos) {
        throw core::InvalidInputError(fmt::format(
            "{}:{}: front matter line '{}' is not 'key: value' (fix the line or close the "
            "block with '---')",
            path.string(), line_no, t));
      }
      const std::string key = Trim(t.substr(0, colon));
      const std::string value = Trim(t.substr(colon + 1));
      if (key == "title") doc.meta.title = Unquote(value);
      else if (key == "platforms") doc.meta.platforms = ParseList(value);
      else if (key == "phases") doc.meta.phases = ParseList(value);
      else if (key == "bottlenecks") doc.meta.bottlenecks = ParseList(value);
      else if (key == "tags") doc.meta.tags = ParseList(value);
    }
    if (!closed) {
      throw core::InvalidInputError(fmt::format(
          "{}: front matter starts with '---' on line 1 but is never closed (add a '---' line "
          "after the last key)",
          path.string()));
    }
    std::stringstream rest;
    rest << ss.rdbuf();
    doc.body = rest.str();
  } else {
    doc.body = text;
  }
  if (doc.meta.platforms.empty()) doc.meta.platforms = {"any"};
  CheckFacet(path, "platforms", doc.meta.platforms, KnownPlatforms());
  CheckFacet(path, "phases", doc.meta.phases, KnownPhases());
  CheckFacet(path, "bottlenecks", doc.meta.bottlenecks, KnownBottlenecks());
  if (doc.meta.title.empty()) doc.meta.title = FirstHeading(doc.body);
  if (doc.meta.title.empty()) doc.meta.title = path.stem().string();
  return doc;
}

}  // namespace kernelevolve::knowledge
