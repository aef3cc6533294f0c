// The offline, rule-based universal operator: fills kernel templates chosen from
// the problem's captured op graph and walks their knob spaces.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "operators/universal_operator.h"

namespace kernelevolve::operators {

/// UniversalOperator "template". Covers graphs of elementwise ATen ops (template
/// "pointwise") and a lone softmax / log_softmax over the last dim (template
/// "softmax_lastdim"), float32 only.
///
/// Propose() with no parent returns drafts: the template's curated settings (the
/// scalar / libm single-thread baseline first), then the rest of its knob space.
/// With a parent produced by the same template it returns the parent's one-knob
/// neighbours, ordered by the parent's diagnosis (operators/template/diagnosis.h: its
/// status, error and roofline fraction): the diagnosis's preferred moves first (e.g.
/// memory-bound far below the copy bandwidth: all threads, vectorized, fused passes;
/// near it: block and chunk tuning); then, after a failure (status != ok or
/// incorrect), the moves to a safer value (scalar / libm, 1 thread, no unroll), after a
/// success the moves to a faster value (vectorized, all threads); then every other
/// one-knob move; when those are used up, the remaining settings by increasing
/// distance from the parent. Every child's rationale starts with the diagnosis text. A parent from another operator or template
/// gets drafts. Candidates whose source hash is in context.seen_hashes, or whose
/// knobs equal the parent's or a sibling's, are skipped; no source repeats within
/// a call. Multi-threaded settings exist only when max(context.threads,
/// problem->threads) > 1. Deterministic: the same context gives the same list.
class TemplateOperator : public UniversalOperator {
 public:
  /// `target`: the --target the candidates are for; "cpu" (C++ templates) or
  /// "triton" (triton_pointwise, triton_softmax_lastdim: triton_softmax.h). Any
  /// other target has no templates (Unsupported says so).
  /// `vector_lanes`: float32 lanes of the CPU's widest vector (core::CpuIsa::FloatLanes
  /// of the machine candidates run on); 16 (AVX-512) adds a vector_width knob to the
  /// pointwise template. The default 8 (AVX2) keeps the space machine-independent.
  explicit TemplateOperator(std::string target = "cpu", int vector_lanes = 8)
      : target_(std::move(target)), vector_lanes_(vector_lanes) {}
  std::string Name() const override { return "template"; }
  const std::string& Target() const { return target_; }
  /// "unsupported_op: aten.NAME" for the first call no template covers (with the
  /// reason in parentheses when the op is known but its arguments are not, e.g.
  /// "unsupported_op: aten._softmax.default (dim=0 is not the last dim)"), or
  /// "unsupported_dtype: ..." / "unsupported_graph: ..."; nullopt when supported.
  std::optional<std::string> Unsupported(const core::Problem& problem) const override;
  /// Throws InternalError when context.problem is null. Returns no candidates for
  /// an unsupported problem or n <= 0.
  std::vector<core::Candidate> Propose(const OperatorContext& context, int n) override;
  /// A prior candidate of this operator (a knowledge-base warm start) written again
  /// for `problem`: the same template and knobs, generated from this problem's graph
  /// and shapes, with `prior`'s rationale. A loop-nest kernel has its sizes and
  /// constants in its text, so a source made for another problem fails its checks.
  /// Knobs outside this problem's space (which depends on `threads`) are fitted to it
  /// (KnobSpace::Fit: the allowed ones kept, the rest defaults; the rationale says so).
  /// nullopt, with the reason in `why`, when `prior` is not a template candidate, this
  /// problem takes another template, or its knobs are no JSON object.
  /// `threads` as OperatorContext::threads. Throws what the template's Generate throws.
  std::optional<core::Candidate> Rederive(const core::Problem& problem, const core::Candidate& prior,
                                          int threads, std::string* why) const;

 private:
  std::string target_;
  int vector_lanes_;
};

}  // namespace kernelevolve::operators
