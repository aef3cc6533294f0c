// Turns a model's answer into a candidate source: a fenced code block holding the whole
// translation unit, or SEARCH/REPLACE edits of the parent's source.
#pragma once

#include <string>

#include "operators/llm/target_protocol.h"

namespace kernelevolve::operators::llm {

/// What the parser made of a response.
struct ParsedResponse {
  bool ok = false;
  std::string source;     // the full translation unit when ok
  std::string form;       // "fenced" | "edit" when ok
  std::string reason;     // why it was rejected (stored with the call) when !ok
  std::string rationale;  // the first sentence of prose outside code, <= 200 chars
};

/// Parses `text` for `protocol`'s target. Edits (one or more blocks
///     <<<<<<< SEARCH
///     lines of the parent
///     =======
///     replacement lines
///     >>>>>>> REPLACE
/// ) are applied in order to `parent_source`; each SEARCH text must occur exactly once
/// in the text it applies to. Otherwise the fenced block with one of the protocol's
/// fence tags (``` or ```cpp for cpu, ```python for triton, ```cuda / ```cu / ```cpp for
/// cuda) that defines kernelevolve_entry is taken (the longest when several do).
/// Rejected, with a reason: no code; an unterminated fence (output cut at max_tokens);
/// the entry only in a block of another language; an edit without a parent or whose
/// SEARCH text is missing or ambiguous; a result the protocol's `validate` refuses
/// (cpu: no `extern "C"` entry, PyTorch headers, unbalanced brackets; triton: no
/// top-level `def kernelevolve_entry(`, no `@triton.jit`, no `import triton`; cuda: no
/// `extern "C"` entry or `__global__`, PyTorch or vendor-library headers).
ParsedResponse ParseResponse(const std::string& text, const std::string& parent_source,
                             const TargetProtocol& protocol = CpuProtocol());

}  // namespace kernelevolve::operators::llm
