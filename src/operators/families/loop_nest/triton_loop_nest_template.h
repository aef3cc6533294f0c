// Family "loop_nest" on --target triton: the same kernel plan as the C++ loop nest
// (ir/kernel_plan.h), printed as Triton kernels (codegen/triton/loop_nest_triton.h).
// Last resort of the Triton matcher, after the specialized Triton families.
#pragma once

#include "core/problem.h"
#include "operators/codegen/triton/loop_nest_triton.h"
#include "operators/ir/kernel_plan.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class TritonLoopNestTemplate : public templates::KernelTemplate {
 public:
  /// `tf32`: which float32 products the reference runs in TF32 (input_precision "tf32"
  /// is offered when a main loop is one of them).
  explicit TritonLoopNestTemplate(ir::KernelPlan plan, core::ReferenceTf32 tf32 = {});

  std::string Name() const override { return "triton_loop_nest"; }
  const templates::KnobSpace& Space() const override { return space_; }
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  ir::KernelPlan plan_;
  core::ReferenceTf32 tf32_;
  codegen::TritonFusion fusion_;  // planned once: the knob space, the header and the printer read it
  templates::KnobSpace space_;
};

/// The Triton loop-nest template of `graph`, or the reason LowerCore gives. With
/// `shape_graphs` (the same reference captured from input sets of other sizes), the
/// sizes that differ are read from the inputs at run time (ir/generalize.h). `tf32` as
/// for the template.
templates::TemplateMatch MatchTritonLoopNest(const core::OpGraph& graph,
                                             const std::vector<core::OpGraph>& shape_graphs = {},
                                             core::ReferenceTf32 tf32 = {});

/// Knobs of "triton_loop_nest": num_warps {4, 8}; with `element` (an element kernel of
/// its own), block {256, 1024} output elements per program; with `rowwise` (a reduction
/// or scan outside a main loop), block_r {32, 128} reduced elements per tile step; with
/// `float_accumulation` (such a kernel sums or multiplies float32), accumulator
/// {float64, float32}: the partial results' type. With `main_loop` (a kernel is a
/// tl.dot matrix product or convolution, codegen/triton/main_loop_triton.h): its tile
/// block_m, block_n {32, 64, 128}, block_k {16, 32, 64}, num_stages {2, 3, 4} and
/// input_precision {ieee, tf32x3}, plus tf32 with `tf32` (some main loop is a product the
/// reference runs in TF32; templates::InputPrecisionKnob). With `cuda_graph` (a program
/// of many launches and sizes fixed when generated), cuda_graph {yes, no}: the entry
/// replays its launches as a CUDA graph (codegen/triton/cuda_graph_entry.h). With
/// `short_reduction` (a reduction codegen::TritonUnrollsReduction accepts),
/// short_reduction {tile, unrolled}: such reductions as tiles or one lane per output. A
/// knob no kernel of the program reads is left out, so the search does not spend
/// candidates on it.
templates::KnobSpace TritonLoopNestKnobSpace(bool float_accumulation, bool main_loop = false,
                                             bool element = true, bool rowwise = true, bool tf32 = false,
                                             bool cuda_graph = false, bool short_reduction = false);

}  // namespace kernelevolve::operators::families
