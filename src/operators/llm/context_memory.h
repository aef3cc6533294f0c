// The context-memory sub-agent: turns the raw feedback of an evaluated node (status,
// compiler log, per-output checks, timings) into a structured bottleneck diagnosis for
// the next prompt and for knowledge retrieval.
#pragma once

#include <string>

#include "core/problem.h"
#include "search/node.h"

namespace kernelevolve::operators::llm {

/// What the next candidate should know about a node.
struct Diagnosis {
  /// Retrieval facet (knowledge::RetrievalQuery::bottleneck): compile_error | incorrect |
  /// crash | timeout | memory_bound | compute_bound | latency | "" (unknown).
  std::string bottleneck;
  std::string phase;     // "repair" (the node failed) | "optimize" (it is correct)
  std::string headline;  // one line: what happened and what limits the kernel
  std::string details;   // a few lines: error excerpt, mismatches, timing figures
};

/// Rule-based, no model call (so it costs nothing): failures keep the compiler's or the
/// harness's key lines (lines with "error", at most 12, else the log's tail; 1,500
/// characters at most) and the failing output checks; correct nodes get the speedup, the
/// median latency and the effective bandwidth (bytes of all inputs and outputs / median
/// latency), classified as latency bound (median < 20 us: call overhead and thread
/// start-up dominate), compute bound (the graph holds a matmul or convolution), else
/// memory bound (elementwise and reduction ops do a few FLOPs per byte). A correct node
/// with an ok hardware-counter profile (node.profile, issue 6) also gets, in details,
/// "Hardware counters (Nsight Compute): " + ProfileLine and "Counter-based diagnosis: "
/// + DiagnoseWithProfile's text (operators/template/profile_diagnosis.h).
Diagnosis Diagnose(const search::Node& node, const core::Problem& problem);

/// The key lines of a log (as above); "" for an empty log.
std::string ErrorExcerpt(const std::string& log, size_t max_chars = 1500);

}  // namespace kernelevolve::operators::llm
