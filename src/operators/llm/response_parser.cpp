#include "operators/llm/response_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace kernelevolve::operators::llm {
namespace {

struct Edit {
  std::string search;
  std::string replace;
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string TrimRight(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

/// Edit blocks; `error` set when a block is malformed.
std::vector<Edit> FindEdits(const std::vector<std::string>& lines, std::string& error) {
  std::vector<Edit> edits;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (TrimRight(lines[i]) != "<<<<<<< SEARCH") continue;
    Edit e;
    size_t j = i + 1;
    for (; j < lines.size() && TrimRight(lines[j]) != "======="; ++j) e.search += lines[j] + "\n";
    size_t k = j + 1;
    for (; k < lines.size() && TrimRight(lines[k]) != ">>>>>>> REPLACE"; ++k) e.replace += lines[k] + "\n";
    if (j >= lines.size() || k >= lines.size()) {
      error = fmt::format("edit {} is not closed (needs ======= and >>>>>>> REPLACE)", edits.size() + 1);
      return edits;
    }
    edits.push_back(std::move(e));
    i = k;
  }
  return edits;
}

struct Fence {
  std::string language;
  std::string body;
  bool closed = false;
};

std::vector<Fence> FindFences(const std::vector<std::string>& lines) {
  std::vector<Fence> fences;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string opener = TrimRight(lines[i]);
    size_t indent = opener.find_first_not_of(' ');
    if (indent == std::string::npos || !StartsWith(opener.substr(indent), "```")) continue;
    Fence f;
    f.language = opener.substr(indent + 3);
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      std::string t = TrimRight(lines[j]);
      size_t ind = t.find_first_not_of(' ');
      if (ind != std::string::npos && t.substr(ind) == "```") break;
      f.body += lines[j] + "\n";
    }
    f.closed = j < lines.size();
    fences.push_back(std::move(f));
    i = j;
  }
  return fences;
}

std::string Rationale(const std::vector<std::string>& lines) {
  bool in_fence = false;
  for (const std::string& raw : lines) {
    std::string line = TrimRight(raw);
    const size_t first = line.find_first_not_of(' ');
    const size_t ind = line.find_first_not_of(" #*-");
    if (first != std::string::npos && StartsWith(line.substr(first), "```")) {
      in_fence = !in_fence;
      continue;
    }
    if (in_fence || ind == std::string::npos || StartsWith(line, "<<<<<<<") || StartsWith(line, "=======") ||
        StartsWith(line, ">>>>>>>")) {
      continue;
    }
    std::string text = line.substr(ind);
    if (size_t dot = text.find(". "); dot != std::string::npos) text = text.substr(0, dot + 1);
    return text.size() > 200 ? text.substr(0, 197) + "..." : text;
  }
  return "";
}

ParsedResponse Reject(std::string reason) {
  ParsedResponse r;
  r.reason = std::move(reason);
  return r;
}

std::optional<ParsedResponse> ParseEdits(const std::vector<std::string>& lines, const std::string& parent) {
  std::string error;
  std::vector<Edit> edits = FindEdits(lines, error);
  if (!error.empty()) return Reject(error);
  if (edits.empty()) return std::nullopt;
  if (parent.empty()) return Reject("an edit (SEARCH/REPLACE) needs a parent kernel, and there is none");
  std::string source = parent;
  for (size_t i = 0; i < edits.size(); ++i) {
    const Edit& e = edits[i];
    if (e.search.empty()) return Reject(fmt::format("edit {}: empty SEARCH text", i + 1));
    const size_t at = source.find(e.search);
    if (at == std::string::npos) return Reject(fmt::format("edit {}: SEARCH text not found in the parent", i + 1));
    if (source.find(e.search, at + 1) != std::string::npos) {
      return Reject(fmt::format("edit {}: SEARCH text occurs more than once in the parent", i + 1));
    }
    source.replace(at, e.search.size(), e.replace);
  }
  ParsedResponse r;
  r.ok = true;
  r.source = std::move(source);
  r.form = "edit";
  return r;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

bool TagAccepted(const std::string& tag, const TargetProtocol& protocol) {
  const std::string t = Lower(tag);
  return std::find(protocol.fence_tags.begin(), protocol.fence_tags.end(), t) != protocol.fence_tags.end();
}

/// The longest closed fence of an accepted language defining kernelevolve_entry, or the
/// rejection.
std::optional<ParsedResponse> PickFence(const std::vector<std::string>& lines, const TargetProtocol& protocol) {
  const Fence* best = nullptr;
  const Fence* other_language = nullptr;
  bool unterminated = false;
  std::vector<Fence> fences = FindFences(lines);
  for (const Fence& f : fences) {
    if (!f.closed) unterminated = true;
    if (!f.closed || f.body.find("kernelevolve_entry") == std::string::npos) continue;
    if (!TagAccepted(f.language, protocol)) {
      other_language = &f;
      continue;
    }
    if (!best || f.body.size() > best->body.size()) best = &f;
  }
  if (!best) {
    if (unterminated) return Reject("unterminated code fence: the response was cut off (max tokens?)");
    if (fences.empty()) return Reject("no fenced code block and no SEARCH/REPLACE edit in the response");
    if (other_language) {
      return Reject(fmt::format("the block defining kernelevolve_entry is ```{}, but --target {} takes ```{} ({})",
                                Lower(other_language->language), protocol.target, protocol.fence, protocol.language));
    }
    return Reject("no fenced code block defines kernelevolve_entry");
  }
  ParsedResponse r;
  r.ok = true;
  r.source = best->body;
  r.form = "fenced";
  return r;
}

}  // namespace

ParsedResponse ParseResponse(const std::string& text, const std::string& parent_source,
                             const TargetProtocol& protocol) {
  const std::vector<std::string> lines = Lines(text);
  std::optional<ParsedResponse> result = ParseEdits(lines, parent_source);
  if (!result) result = PickFence(lines, protocol);
  if (!result->ok) return *result;
  if (std::string problem = protocol.validate(result->source); !problem.empty()) {
    return Reject(fmt::format("{} code rejected: {}", result->form, problem));
  }
  result->rationale = Rationale(lines);
  return *result;
}

}  // namespace kernelevolve::operators::llm
