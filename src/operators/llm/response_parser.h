// Turns a model's answer into a candidate source: a fenced code block holding the whole
// translation unit, or SEARCH/REPLACE edits of the parent's source.
#pragma once

#include <string>

namespace kernelevolve::operators::llm {

/// What the parser made of a response.
struct ParsedResponse {
  bool ok = false;
  std::string source;     // the full translation unit when ok
  std::string form;       // "fenced" | "edit" when ok
  std::string reason;     // why it was rejected (stored with the call) when !ok
  std::string rationale;  // the first sentence of prose outside code, <= 200 chars
};

/// Parses `text`. Edits (one or more blocks
///     <<<<<<< SEARCH
///     lines of the parent
///     =======
///     replacement lines
///     >>>>>>> REPLACE
/// ) are applied in order to `parent_source`; each SEARCH text must occur exactly once
/// in the text it applies to. Otherwise the fenced block (``` or ```cpp / c++ / c) that
/// defines kernelevolve_entry is taken (the longest when several do). Rejected, with a
/// reason: no code; an unterminated fence (output cut at max_tokens); an edit without a
/// parent or whose SEARCH text is missing or ambiguous; a result without
/// `extern "C"` ... `kernelevolve_entry`; unbalanced braces, brackets or parentheses
/// (outside comments and literals); PyTorch includes (the ABI forbids them).
ParsedResponse ParseResponse(const std::string& text, const std::string& parent_source);

}  // namespace kernelevolve::operators::llm
