#include "operators/families/loop_nest/loop_nest_template.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "operators/codegen/cpp/loop_nest_cpp.h"
#include "operators/ir/contraction.h"
#include "operators/ir/convolution.h"
#include "operators/ir/generalize.h"

namespace kernelevolve::operators::families {
namespace {

using templates::KnobDim;
using templates::KnobSpace;


/// Whether the plan's kernels sum or multiply float32 values; with `outside_main_loops`,
/// only reductions that are not matrix products or convolutions count (the GEMM
/// accumulates in float32 whatever the accumulator knob says).
bool HasFloatAccumulation(const ir::KernelPlan& plan, bool outside_main_loops) {
  for (int id : plan.kernels) {
    const ir::TensorDef& d = plan.program.defs[static_cast<size_t>(id)];
    if (ir::AccumulatesFloat32(d) && !(outside_main_loops && ir::HasMainLoop(plan.program, d))) return true;
  }
  return false;
}

/// A reduction the reduce_loop knob acts on that no tiled main loop takes.
bool HasRowBlockableReduction(const ir::KernelPlan& plan) {
  for (int id : plan.kernels) {
    const ir::TensorDef& d = plan.program.defs[static_cast<size_t>(id)];
    if (codegen::ReduceLoopApplies(d) && !ir::HasMainLoop(plan.program, d)) return true;
  }
  return false;
}

bool HasContraction(const ir::KernelPlan& plan) {
  for (int id : plan.kernels) {
    if (ir::HasMainLoop(plan.program, plan.program.defs[static_cast<size_t>(id)])) return true;
  }
  return false;
}

double TotalIterations(const ir::KernelPlan& plan) {
  double total = 0;
  for (int id : plan.kernels) total += ir::Iterations(plan.program.defs[static_cast<size_t>(id)]);
  return total;
}

const char* KindName(ir::DefKind k) {
  switch (k) {
    case ir::DefKind::kReduce: return "reduce";
    case ir::DefKind::kScan: return "scan";
    default: return "element";
  }
}

}  // namespace

KnobSpace LoopNestKnobSpace(bool multithread, bool float_accumulation, bool contraction, int vector_lanes,
                            bool accumulation_only_in_main_loops, bool row_blockable) {
  std::vector<KnobDim> dims;
  dims.push_back(templates::ThreadsKnob(multithread));
  dims.push_back({"math", {"libm", "vectorized"}, "libm", "libm", "vectorized", "", nullptr, "{} math"});
  dims.push_back({"simd", {"off", "on"}, "off", "off", "on", "", nullptr, "omp simd {}"});
  const bool accumulator_under_loops = float_accumulation && contraction && accumulation_only_in_main_loops;
  if (float_accumulation && !accumulator_under_loops) {
    dims.push_back({"accumulator", {"float64", "float32"}, "float64", "float64", nullptr, "", nullptr, "{} accumulators"});
  }
  if (contraction) {
    dims.push_back({"main_loop", {"loops", "tiled"}, "loops", "loops", "tiled", "", nullptr, "{} main loop"});
    // With 16-lane vectors (AVX-512: 32 registers) the 8 x 3 tile's 24 accumulators are
    // the default: `kernelevolve eval` of the same kernels at 6x2 and 8x3 on an AVX-512
    // VM (2026-12-06) gave mm_square_512 0.91x -> 1.01x of eager, conv2d_bias_relu
    // 0.66x -> 0.81x, conv2d_swish_residual 0.55x -> 1.16x, conv2d_3x3_resnet 0.79x ->
    // 0.82x, mlp 0.97x -> 0.96x. AVX2's 16 registers fit 6 x 2 (12 accumulators).
    std::vector<nlohmann::json> tiles = {"6x2", "4x3"};
    if (vector_lanes >= 16) tiles.push_back("8x3");
    dims.push_back({"tile", tiles, vector_lanes >= 16 ? "8x3" : "6x2", nullptr, nullptr, "main_loop", "tiled",
                    "{} register tile"});
    // K panels of 192 with 16 lanes: an 8 x 3 tile's B sliver (KC x 48 floats) is 36 KiB,
    // in a 48 KiB L1 beside the A sliver; at 256 it is 48 KiB and is read from L2. The
    // micro-kernel alone on the AVX-512 VM (2026-12-07): 152 GFLOP/s at KC 256, 170 at
    // 192, 167 at 128 (205 peak, one thread). AVX2's 6 x 2 sliver is 16 KiB at 256.
    dims.push_back({"block_k", {192, 256, 512}, vector_lanes >= 16 ? 192 : 256, nullptr, nullptr, "main_loop",
                    "tiled", "K panels of {}"});
  }
  if (row_blockable) {
    dims.push_back({"reduce_loop", {"inner", "outer"}, "inner", "inner", "outer", "", nullptr, "reduced loops {}"});
  }
  if (accumulator_under_loops) {  // no effect on the tiled main loops (float32, as BLAS)
    dims.push_back(
        {"accumulator", {"float64", "float32"}, "float64", "float64", nullptr, "main_loop", "loops", "{} accumulators"});
  }
  return KnobSpace(std::move(dims));
}

LoopNestTemplate::LoopNestTemplate(ir::KernelPlan plan, bool multithread, int vector_lanes)
    : plan_(std::move(plan)),
      multithread_(multithread),
      vector_lanes_(vector_lanes),
      // Sizes read at run time: plain loops only (loop_nest_cpp.h).
      has_contraction_(plan_.program.symbols.empty() && HasContraction(plan_)),
      has_row_blockable_(plan_.program.symbols.empty() && HasRowBlockableReduction(plan_)),
      iterations_(TotalIterations(plan_)),
      space_(LoopNestKnobSpace(multithread, HasFloatAccumulation(plan_, false), has_contraction_, vector_lanes,
                               !HasFloatAccumulation(plan_, true), has_row_blockable_)) {}

std::vector<nlohmann::json> LoopNestTemplate::Drafts() const {
  std::vector<nlohmann::json> drafts = {space_.Canonical(nlohmann::json::object())};
  nlohmann::json fast = {{"math", "vectorized"}, {"simd", "on"}};
  if (multithread_) fast["threads"] = "all";
  // A matrix product's tiled main loop is the likeliest best: second, right after the
  // baseline, so that a small budget (the search may take only the first drafts) has it.
  // Likewise the row-blocked reductions of pooling and similar windows (with the
  // tiled main loop when there is one).
  if (has_contraction_ || has_row_blockable_) {
    nlohmann::json heavy = fast;
    if (has_contraction_) heavy["main_loop"] = "tiled";
    if (has_row_blockable_) heavy["reduce_loop"] = "outer";
    if (multithread_ && HeavyDraftOnOneThreadFirst(plan_.kernels.size(), iterations_)) {
      nlohmann::json one_thread = heavy;
      one_thread["threads"] = "1";
      drafts.push_back(space_.Canonical(one_thread));
    }
    drafts.push_back(space_.Canonical(heavy));
  }
  if (multithread_) drafts.push_back(space_.Canonical({{"threads", "all"}}));
  drafts.push_back(space_.Canonical(fast));
  return drafts;
}

std::string LoopNestTemplate::Summary(const nlohmann::json& knobs) const {
  return fmt::format("loop nest of {} kernel{}, {}", plan_.kernels.size(), plan_.kernels.size() == 1 ? "" : "s",
                     space_.Describe(space_.Canonical(knobs)));
}

std::string LoopNestTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::LoopNestSchedule s;
  s.parallel = k.at("threads") == "all";
  s.vector_math = k.at("math") == "vectorized";
  s.simd = k.at("simd") == "on";
  s.double_accumulator = !k.contains("accumulator") || k.at("accumulator") == "float64";
  s.reduce_outer = k.contains("reduce_loop") && k.at("reduce_loop") == "outer";
  if (k.contains("main_loop") && k.at("main_loop") == "tiled") {
    codegen::GemmTile tile;
    const std::string shape = k.at("tile").get<std::string>();
    tile.mr = std::stoi(shape.substr(0, shape.find('x')));
    tile.nr_vectors = std::stoi(shape.substr(shape.find('x') + 1));
    tile.lanes = vector_lanes_;
    tile.kc = k.at("block_k").get<int>();
    s.gemm = tile;
  }
  std::string what = fmt::format("A program of {} loop-nest kernel(s), run in order:", plan_.kernels.size());
  // An epilogue fused into a main loop's store runs inside that kernel.
  const auto epilogues = codegen::PlanCppMainLoopEpilogues(plan_, s);
  for (int id : plan_.kernels) {
    const ir::TensorDef& d = plan_.program.defs[static_cast<size_t>(id)];
    what += fmt::format("\n  t{}: {} {}{}{}", id, KindName(d.kind), ir::SizesText(d), d.origin.empty() ? "" : " <- " + d.origin,
                        ir::FusedIntoNote(epilogues, id));
  }
  for (size_t k = 0; k < plan_.program.symbols.size(); ++k) {
    const ir::SizeSymbol& sym = plan_.program.symbols[k];
    what += fmt::format("\n  s{} = size {} of input {}, read at run time (the first input set: {})", k, sym.dim,
                        sym.abi_index, sym.value);
  }
  std::string abi = "//   inputs: ";
  // One entry per ABI input, in ABI order (a parameter read at several nodes, as an
  // unrolled LSTM's weights, is one input).
  std::map<int, std::string> inputs;
  for (const ir::TensorDef& d : plan_.program.defs) {
    if (d.kind != ir::DefKind::kInput) continue;
    inputs.emplace(d.abi_index, fmt::format("{}{}", core::DTypeName(d.dtype), ir::SizesText(d)));
  }
  std::vector<std::string> parts;
  for (int k = 0; !inputs.empty() && k <= inputs.rbegin()->first; ++k) {
    auto it = inputs.find(k);
    parts.push_back(it != inputs.end() ? it->second : "(unread)");
  }
  abi += fmt::format("{}\n//   outputs: ", fmt::join(parts, ", "));
  parts.clear();
  for (int o : plan_.program.outputs) {
    const ir::TensorDef& d = plan_.program.defs[static_cast<size_t>(o)];
    parts.push_back(fmt::format("{}{}", core::DTypeName(d.dtype), ir::SizesText(d)));
  }
  abi += fmt::format("{} (dense row-major)\n", fmt::join(parts, ", "));
  return templates::GeneratedHeader(Name(), what, k, abi) + "\n" + codegen::PrintLoopNestCpp(plan_, s);
}

templates::TemplateMatch MatchLoopNest(const core::OpGraph& graph, bool multithread, int vector_lanes,
                                       const std::vector<core::OpGraph>& shape_graphs) {
  // Inputs of other sizes on other input sets: the same graph lowered from their shapes
  // tells which sizes the program reads at run time (ir/generalize.h).
  ir::GeneralizeResult general = ir::LowerGeneralized(graph, shape_graphs);
  if (!general.program) return {nullptr, general.unsupported};
  auto tmpl = std::make_unique<LoopNestTemplate>(ir::PlanKernels(std::move(*general.program)), multithread,
                                                 vector_lanes);
  try {
    (void)tmpl->Generate(tmpl->Drafts().front());
  } catch (const std::exception& e) {
    return {nullptr, std::string("unsupported_graph: the loop-nest printer cannot spell it (") + e.what() + ")"};
  }
  return {std::move(tmpl), ""};
}

}  // namespace kernelevolve::operators::families
