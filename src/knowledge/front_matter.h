// Front matter of a knowledge document: the facets the first retrieval stage filters on.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kernelevolve::knowledge {

/// What a document says about itself, from its front matter block:
///
///     ---
///     title: One line
///     platforms: [cpu, cuda]              cpu | cuda | triton | any
///     phases: [repair]                    draft | repair | optimize   (empty: every phase)
///     bottlenecks: [compile_error]        memory_bound | compute_bound | latency |
///                                         compile_error | incorrect | crash | timeout
///                                         (empty: any bottleneck)
///     tags: [free, words]
///     ---
///
/// A list is written `[a, b]`, `a, b` or a single word. Unknown keys are ignored.
struct DocumentMeta {
  std::string title;
  std::vector<std::string> platforms;    // never empty after parsing: default {"any"}
  std::vector<std::string> phases;       // empty: every phase
  std::vector<std::string> bottlenecks;  // empty: any bottleneck
  std::vector<std::string> tags;
};

/// A document split into its front matter and the markdown after it.
struct ParsedDocument {
  DocumentMeta meta;
  std::string body;  // the text after the closing `---` (the whole text without front matter)
};

/// The allowed values of each facet (the vocabularies above).
const std::vector<std::string>& KnownPlatforms();
const std::vector<std::string>& KnownPhases();
const std::vector<std::string>& KnownBottlenecks();

/// Throws InvalidInputError "<what> 'VALUE' is not one of: a, b, c" unless `value` is in
/// `allowed`. `what` names the field (and file), e.g. "--platform" or "x.md: platforms".
void CheckFacetValue(std::string_view what, const std::string& value,
                     const std::vector<std::string>& allowed);

/// Parses `text` (the file's contents). Without a front matter block the document gets
/// platforms {"any"}, no phases/bottlenecks/tags, and the title of its first `# ` heading
/// (else the file stem of `path`). Throws InvalidInputError naming `path`, the line and
/// the field for an unterminated block, a line that is not `key: value`, or a facet
/// value outside its vocabulary.
ParsedDocument ParseDocument(const std::string& text, const std::filesystem::path& path);

}  // namespace kernelevolve::knowledge
