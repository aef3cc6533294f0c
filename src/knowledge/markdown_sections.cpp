#include "knowledge/markdown_sections.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kernelevolve::knowledge {
namespace {

bool IsFence(const std::string& line) {
  size_t i = line.find_first_not_of(' ');
  return i != std::string::npos && line.compare(i, 3, "```") == 0;
}

/// Heading level of an ATX heading line ("## Title" -> 2), 0 when not a heading.
int HeadingLevel(const std::string& line) {
  size_t n = 0;
  while (n < line.size() && line[n] == '#') ++n;
  if (n == 0 || n > 6 || n >= line.size() || line[n] != ' ') return 0;
  return static_cast<int>(n);
}

std::string TrimBlankLines(const std::string& text) {
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  b = text.rfind('\n', b);
  b = b == std::string::npos ? 0 : b + 1;
  size_t e = text.find_last_not_of(" \t\r\n");
  return text.substr(b, e + 1 - b);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsCitationHeading(const std::string& heading) {
  const std::string h = Lower(heading);
  return h == "sources" || h == "references" || h == "see also" || h == "bibliography";
}

void Flush(std::vector<Section>& out, Section& current) {
  current.text = TrimBlankLines(current.text);
  if (!current.text.empty() && !IsCitationHeading(current.heading)) out.push_back(current);
}

/// Paragraphs: blank-line separated blocks; a fenced code block stays one paragraph.
std::vector<std::string> Paragraphs(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  bool in_fence = false;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    if (IsFence(line)) in_fence = !in_fence;
    const bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (blank && !in_fence) {
      if (!current.empty()) out.push_back(current);
      current.clear();
      continue;
    }
    current += current.empty() ? line : "\n" + line;
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

/// Cuts one paragraph longer than max_chars at line boundaries.
std::vector<std::string> CutLongParagraph(const std::string& paragraph, size_t max_chars) {
  std::vector<std::string> out;
  std::string current;
  std::stringstream ss(paragraph);
  std::string line;
  while (std::getline(ss, line)) {
    if (!current.empty() && current.size() + 1 + line.size() > max_chars) {
      out.push_back(current);
      current.clear();
    }
    current += current.empty() ? line : "\n" + line;
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

}  // namespace

std::vector<Section> SplitSections(const std::string& body, const std::string& title) {
  std::vector<Section> out;
  Section current{title, 0, ""};
  bool in_fence = false;
  std::stringstream ss(body);
  std::string line;
  while (std::getline(ss, line)) {
    if (IsFence(line)) in_fence = !in_fence;
    const int level = in_fence ? 0 : HeadingLevel(line);
    if (level > 0) {
      Flush(out, current);
      size_t start = line.find_first_not_of(" #");
      current = Section{start == std::string::npos ? "" : line.substr(start), level, ""};
      continue;
    }
    current.text += line + "\n";
  }
  Flush(out, current);
  return out;
}

std::vector<std::string> SplitPassages(const std::string& text, size_t max_chars) {
  std::vector<std::string> out;
  std::string current;
  for (const std::string& paragraph : Paragraphs(text)) {
    std::vector<std::string> pieces = paragraph.size() > max_chars
                                          ? CutLongParagraph(paragraph, max_chars)
                                          : std::vector<std::string>{paragraph};
    for (const std::string& piece : pieces) {
      if (!current.empty() && current.size() + 2 + piece.size() > max_chars) {
        out.push_back(current);
        current.clear();
      }
      current += current.empty() ? piece : "\n\n" + piece;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

int ApproxTokens(const std::string& text) { return static_cast<int>((text.size() + 3) / 4); }

}  // namespace kernelevolve::knowledge
