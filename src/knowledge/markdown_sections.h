// Splitting a markdown document into sections (by heading) and passages (the unit
// retrieval ranks and returns).
#pragma once

#include <string>
#include <vector>

namespace kernelevolve::knowledge {

/// One section: the text under a heading, up to the next heading of any level.
/// Text before the first heading is a section with level 0 and the document title as
/// heading.
struct Section {
  std::string heading;  // without the leading #'s
  int level = 0;        // 1 for "#", 2 for "##", ...; 0 for the preamble
  std::string text;     // the lines under the heading, trimmed of blank lines at both ends
};

/// Splits `body` at ATX headings ("# ", "## ", ...) outside fenced code blocks (```).
/// Sections whose text is empty are dropped, and so are "Sources" / "References" /
/// "See also" sections (citations are for people, not for retrieval).
std::vector<Section> SplitSections(const std::string& body, const std::string& title);

/// Groups the paragraphs of a section (blank-line separated; a fenced code block is
/// one paragraph) into passages of at most `max_chars` characters. A paragraph longer
/// than `max_chars` is cut at line boundaries (a single longer line stays whole).
std::vector<std::string> SplitPassages(const std::string& text, size_t max_chars);

/// Approximate token count of `text`: ceil(chars / 4), the usual rule of thumb for
/// English text with BPE tokenizers (OpenAI tokenizer documentation).
int ApproxTokens(const std::string& text);

}  // namespace kernelevolve::knowledge
