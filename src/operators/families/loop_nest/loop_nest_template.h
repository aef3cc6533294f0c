// Family "loop_nest": any graph LowerCore accepts, as a program of plain loop-nest
// kernels (ir/kernel_plan.h) printed in C++ (codegen/cpp/loop_nest_cpp.h). The
// template operator's last resort after the specialized families, so that every
// captured Core ATen graph gets a correct kernel; its knobs are schedule knobs.
#pragma once

#include "operators/ir/kernel_plan.h"
#include "operators/ir/loop_ir.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class LoopNestTemplate : public templates::KernelTemplate {
 public:
  /// `plan`: the planned program; `multithread` false drops threads = "all".
  LoopNestTemplate(ir::KernelPlan plan, bool multithread);

  std::string Name() const override { return "loop_nest"; }
  const templates::KnobSpace& Space() const override { return space_; }
  /// Baseline (1 thread, libm, no simd, double accumulators) first, then all threads,
  /// then all threads with the vectorized prelude and `omp simd` inner loops.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

  const ir::KernelPlan& Plan() const { return plan_; }

 private:
  ir::KernelPlan plan_;
  bool multithread_;
  templates::KnobSpace space_;
};

/// The loop-nest template of `graph`, or the reason LowerCore gives.
templates::TemplateMatch MatchLoopNest(const core::OpGraph& graph, bool multithread);

/// Knobs of "loop_nest": threads {"1", "all"}, math {"libm", "vectorized"}, simd
/// {"off", "on"} and, when the program sums or scans float32 values, accumulator
/// {"double", "float"}.
templates::KnobSpace LoopNestKnobSpace(bool multithread, bool float_accumulation);

}  // namespace kernelevolve::operators::families
