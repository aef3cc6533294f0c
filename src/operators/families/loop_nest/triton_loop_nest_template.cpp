#include "operators/families/loop_nest/triton_loop_nest_template.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "operators/codegen/triton/loop_nest_triton.h"
#include "operators/codegen/triton/main_loop_triton.h"
#include "operators/ir/generalize.h"
#include "operators/ir/loop_ir.h"
#include "operators/ir/lower_core.h"

namespace kernelevolve::operators::families {

templates::KnobSpace TritonLoopNestKnobSpace(bool float_accumulation, bool main_loop, bool element,
                                             bool rowwise, bool tf32, bool cuda_graph, bool short_reduction) {
  std::vector<templates::KnobDim> dims;
  if (element) dims.push_back({"block", {256, 1024}, 1024, 1024, nullptr, "", nullptr, "{}-element blocks"});
  if (rowwise) dims.push_back({"block_r", {32, 128}, 32, 32, 128, "", nullptr, "{}-element reduction steps"});
  if (short_reduction) {
    dims.push_back({"short_reduction", {"tile", "unrolled"}, "tile", "tile", nullptr, "", nullptr,
                    "short reductions as {}"});
  }
  dims.push_back({"num_warps", {4, 8}, 4, 4, 8, "", nullptr, "{} warps"});
  // The same knob, values and default as the C++ loop nest's (docs/templates.md).
  if (float_accumulation) {
    dims.push_back({"accumulator", {"float64", "float32"}, "float64", "float64", nullptr, "", nullptr, "{} accumulators"});
  }
  if (main_loop) {
    dims.push_back({"block_m", {32, 64, 128}, 64, 64, nullptr, "", nullptr, "BLOCK_M {}"});
    dims.push_back({"block_n", {32, 64, 128}, 64, 64, nullptr, "", nullptr, "BLOCK_N {}"});
    dims.push_back({"block_k", {16, 32, 64}, 32, 32, nullptr, "", nullptr, "BLOCK_K {}"});
    dims.push_back({"num_stages", {2, 3, 4}, 3, 2, nullptr, "", nullptr, "{} stages"});
    dims.push_back(templates::InputPrecisionKnob(tf32));
  }
  // Graph replay first: the programs offered it are bound by launching from Python.
  if (cuda_graph) dims.push_back({"cuda_graph", {"yes", "no"}, "yes", "no", "yes", "", nullptr, "CUDA graph: {}"});
  return templates::KnobSpace(std::move(dims));
}

namespace {
/// Launches from which a program is offered a CUDA graph: at roughly 10-30 us of host
/// time per Triton launch, 8 launches are the cost of a small kernel's whole run.
constexpr int kCudaGraphLaunches = 8;
/// Intermediate bytes up to which a program is offered a CUDA graph (8 GiB): each graph
/// the entry keeps holds its own, two at this size (codegen::CudaGraphsKept).
constexpr int64_t kCudaGraphIntermediateBytes = int64_t{8} << 30;

/// The knob space of the kernels a plan launches: main loops, and outside them element
/// kernels, reductions and scans (a fused epilogue launches nothing of its own, and a
/// main loop accumulates in float32 whatever the accumulator knob says).
templates::KnobSpace PlanKnobSpace(const ir::KernelPlan& plan, const codegen::TritonFusion& fusion,
                                   core::ReferenceTf32 tf32) {
  const std::set<int>& fused = fusion.fused;
  bool accumulate = false, main_loop = false, element = false, rowwise = false, reference_tf32 = false,
       short_reduction = false;
  int launches = 0;
  for (int id : plan.kernels) {
    const ir::TensorDef& d = plan.program.defs[static_cast<size_t>(id)];
    if (fused.count(id) != 0) continue;
    ++launches;
    if (codegen::TritonRunsMainLoop(plan.program, d)) {
      main_loop = true;
      reference_tf32 = reference_tf32 || codegen::ReferenceRunsInTf32(plan.program, d, tf32.conv, tf32.matmul, tf32.rnn);
      continue;
    }
    // A reduction that may run unrolled takes "block" outputs per program then, as an
    // element kernel.
    const bool unrolled = codegen::TritonUnrollsReduction(d);
    short_reduction = short_reduction || unrolled;
    element = element || d.kind == ir::DefKind::kCompute || unrolled;
    rowwise = rowwise || d.kind == ir::DefKind::kReduce || d.kind == ir::DefKind::kScan;
    accumulate = accumulate || ir::AccumulatesFloat32(d);
  }
  // A CUDA graph where launching from Python is what the call waits on: many kernels
  // (kCudaGraphLaunches), sizes fixed when generated (a graph cannot follow sizes read at
  // run time), and intermediates small enough that the graphs' own copies of them
  // (codegen/triton/cuda_graph_entry.h keeps a few) fit beside the caller's.
  const bool graph = launches >= kCudaGraphLaunches && plan.program.symbols.empty() &&
                     codegen::TritonIntermediateBytes(plan, fusion, true) <= kCudaGraphIntermediateBytes;
  return TritonLoopNestKnobSpace(accumulate, main_loop, element, rowwise, reference_tf32, graph, short_reduction);
}

/// Whether most of the plan's matrix-product main loops (counted per launch) have fewer
/// 128 x 128 output tiles than the GPU has SMs: the per-step products of a recurrence
/// (256 x 4096 gates: 64 tiles). There a 128 x 128 draft leaves half the SMs idle; in an
/// H100 run of lstm_classifier (2026-12-06, docs/gpu.md) its TF32 draft was slower than
/// the 64 x 64 3xTF32 one, which does three times the tensor-core work.
bool MostlySmallProducts(const ir::KernelPlan& plan) {
  int small = 0, large = 0;
  for (int id : plan.kernels) {
    const ir::TensorDef& d = plan.program.defs[static_cast<size_t>(id)];
    if (!codegen::TritonRunsMainLoop(plan.program, d)) continue;
    const auto c = ir::MatchContraction(plan.program, d);
    if (!c) {
      ++large;  // a convolution: the 128 x 128 drafts were measured on ResNet shapes
      continue;
    }
    int64_t tiles = ((c->m + 127) / 128) * ((c->n + 127) / 128);
    for (int64_t e : c->batch) tiles *= e;
    (tiles < codegen::kDraftGpuSms ? small : large) += 1;
  }
  return small > large;
}

/// `knobs` less those the space does not have.
nlohmann::json Only(const templates::KnobSpace& space, nlohmann::json knobs) {
  for (auto it = knobs.begin(); it != knobs.end();) {
    it = space.Find(it.key()) == nullptr ? knobs.erase(it) : std::next(it);
  }
  return knobs;
}
}  // namespace

TritonLoopNestTemplate::TritonLoopNestTemplate(ir::KernelPlan plan, core::ReferenceTf32 tf32)
    : plan_(std::move(plan)),
      tf32_(tf32),
      fusion_(codegen::PlanTritonFusion(plan_)),
      space_(PlanKnobSpace(plan_, fusion_, tf32)) {}

std::vector<nlohmann::json> TritonLoopNestTemplate::Drafts() const {
  std::vector<nlohmann::json> drafts = {space_.Canonical(nlohmann::json::object()),
                                        space_.Canonical(Only(space_, {{"block_r", 128}, {"num_warps", 8}})),
                                        space_.Canonical(Only(space_, {{"block", 256}}))};
  // float32 partial sums: faster where float64 arithmetic is slow, less exact.
  if (space_.Find("accumulator") != nullptr) drafts[2]["accumulator"] = "float32";
  // Without element kernels or float32 sums the third draft would be the first again.
  if (drafts[2] == drafts[0] && space_.Find("block_r") != nullptr) drafts[2]["block_r"] = 128;
  if (space_.Find("short_reduction") != nullptr) {
    // Short reductions: the tile first, one lane per output second, so that a search of
    // two candidates measures both forms (on an H100, 2026-12-07, docs/gpu.md: unrolled
    // 1.57x vs the tile's 1.35x for a 3 x 3 depthwise convolution, the tile 2.23x vs
    // 1.49x for the ResNet stem's 3 x 3 max pooling). For a window of 9 the tile's block_r is 16
    // whatever the knob, so the second draft's tile (8 warps instead of 4) moves after.
    nlohmann::json tiled = drafts[1];
    drafts[1]["short_reduction"] = "unrolled";
    drafts.push_back(tiled);
  }
  if (space_.Find("input_precision") != nullptr) {
    // tl.dot main loops: 3xTF32 on tensor cores first, 128 x 128 x 32 tiles with 8 warps
    // (the Triton matmul's draft), then 64 x 64 x 32 with 4 warps, IEEE FMA last. On the
    // H200 (docs/gpu.md) the 64 x 64 3xTF32 draft ran past the 60 s candidate timeout at
    // depths of 2560-4096 where the 128 x 128 one finished.
    // A main loop the reference itself runs in TF32 (cuDNN's convolutions and recurrent
    // layers by default): plain TF32 first, one tensor-core product a step where 3xTF32
    // does three. Mostly small products (MostlySmallProducts) get 64 x 64 tiles with 4
    // warps first.
    const auto& values = space_.Find("input_precision")->values;
    const bool tf32 = std::find(values.begin(), values.end(), nlohmann::json("tf32")) != values.end();
    drafts[0]["input_precision"] = tf32 ? "tf32" : "tf32x3";
    const bool small = MostlySmallProducts(plan_);
    drafts[0]["block_m"] = small ? 64 : 128;
    drafts[0]["block_n"] = small ? 64 : 128;
    drafts[0]["num_warps"] = small ? 4 : 8;
    drafts[1]["input_precision"] = "tf32x3";
    drafts[1]["num_warps"] = 4;
  }
  return drafts;
}

std::string TritonLoopNestTemplate::Summary(const nlohmann::json& knobs) const {
  return fmt::format("Triton loop nest of {} kernel{}, {}", plan_.kernels.size(),
                     plan_.kernels.size() == 1 ? "" : "s", space_.Describe(space_.Canonical(knobs)));
}

std::string TritonLoopNestTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::TritonLoopNestSchedule s;
  s.block = k.value("block", s.block);
  s.rblock = k.value("block_r", s.rblock);
  s.num_warps = k.at("num_warps").get<int>();
  s.double_accumulator = !k.contains("accumulator") || k.at("accumulator") == "float64";
  if (k.contains("input_precision")) {
    s.main_loop.block_m = k.at("block_m").get<int>();
    s.main_loop.block_n = k.at("block_n").get<int>();
    s.main_loop.block_k = k.at("block_k").get<int>();
    s.main_loop.num_stages = k.at("num_stages").get<int>();
    s.main_loop.num_warps = s.num_warps;
    s.main_loop.tf32_conv = tf32_.conv;
    s.main_loop.tf32_matmul = tf32_.matmul;
    s.main_loop.tf32_rnn = tf32_.rnn;
    s.main_loop.input_precision = k.at("input_precision").get<std::string>();
  }
  s.cuda_graph = k.value("cuda_graph", "no") == "yes";
  s.unroll_short_reductions = k.value("short_reduction", "tile") == "unrolled";
  std::string header = fmt::format(
      "# Generated by kernelevolve, template triton_loop_nest (--target triton).\n"
      "# Knobs: {}. A program of {} kernel(s), in order:\n",
      k.dump(), plan_.kernels.size());
  // An epilogue fused into a main loop or a reduction is no launch of its own
  // (ir/epilogue_fusion.h).
  for (int id : plan_.kernels) {
    const ir::TensorDef& d = plan_.program.defs[static_cast<size_t>(id)];
    header += fmt::format("#   t{}: {}{}{}\n", id, ir::SizesText(d), d.origin.empty() ? "" : " <- " + d.origin,
                          fusion_.Note(id));
  }
  for (size_t k = 0; k < plan_.program.symbols.size(); ++k) {
    const ir::SizeSymbol& sym = plan_.program.symbols[k];
    header += fmt::format("#   s{} = size {} of input {}, read at run time ({} to {}, the sizes the input sets showed)\n",
                          k, sym.dim, sym.abi_index, sym.min_value, sym.max_value);
  }
  header += "# ABI: kernelevolve_entry(inputs, outputs) with contiguous device tensors (docs/gpu.md).\n";
  return header + codegen::PrintLoopNestTriton(plan_, s);
}

templates::TemplateMatch MatchTritonLoopNest(const core::OpGraph& graph,
                                             const std::vector<core::OpGraph>& shape_graphs,
                                             core::ReferenceTf32 tf32) {
  ir::GeneralizeResult lowered = ir::LowerGeneralized(graph, shape_graphs);
  if (!lowered.program) return {nullptr, lowered.unsupported};
  auto tmpl = std::make_unique<TritonLoopNestTemplate>(ir::PlanKernels(std::move(*lowered.program)), tf32);
  try {
    (void)tmpl->Generate(tmpl->Drafts().front());
  } catch (const std::exception& e) {
    return {nullptr, std::string("unsupported_graph: the Triton loop-nest printer cannot spell it (") + e.what() + ")"};
  }
  return {std::move(tmpl), ""};
}

}  // namespace kernelevolve::operators::families
