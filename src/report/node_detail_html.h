// The detail panel of one search-tree node in the HTML report: status, timing, roofline,
// rationale, knobs, the failing checks, the message and log excerpt, the source, and the
// diff against the parent's source.
#pragma once

#include <string>

#include "report/line_diff.h"
#include "search/node.h"

namespace kernelevolve::report {

/// `source` as <pre class="source"> with line numbers; every line escaped.
std::string SourceHtml(const std::string& source);

/// The unified hunks of `diff` as <pre class="diff">, escaped; a note instead when the
/// texts are equal, and a note above when the diff is not a shortest one.
std::string DiffHtml(const LineDiff& diff);

/// <section class="node-detail" id="node-ID" data-node="ID"> for `node`; `parent` is
/// null for a draft (its diff section then says so). `is_best` marks the best node.
std::string NodeDetailHtml(const search::Node& node, const search::Node* parent, bool is_best);

}  // namespace kernelevolve::report
