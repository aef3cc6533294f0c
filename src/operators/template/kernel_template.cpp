#include "operators/template/kernel_template.h"

#include <algorithm>
#include <optional>

#include "operators/families/attention/attention_template.h"
#include "operators/families/embedding_bag/embedding_bag_template.h"
#include "operators/families/index_add/index_add_template.h"
#include "operators/families/loop_nest/loop_nest_template.h"
#include "operators/families/masked_select/masked_select_template.h"
#include "operators/families/sort/sort_template.h"
#include "operators/families/unique/unique_template.h"
#include "operators/template/pointwise_template.h"
#include "operators/template/rowwise_template.h"
#include "operators/template/scan_template.h"
#include "operators/template/softmax_template.h"

namespace kernelevolve::operators::templates {

namespace {

/// softmax_lastdim: a lone softmax / log_softmax over the last dim.
std::optional<TemplateMatch> MatchSoftmaxLastDim(const core::OpGraph& graph, bool multithread) {
  const auto calls = graph.Calls();
  if (calls.size() != 1 || !IsSoftmaxTarget(calls[0]->target)) return std::nullopt;
  SoftmaxMatch softmax = MatchSoftmax(graph);
  if (!softmax.spec) return std::nullopt;  // e.g. another dim: rowwise covers it
  return TemplateMatch{std::make_unique<SoftmaxTemplate>(*softmax.spec, multithread), ""};
}

/// pointwise: elementwise ops on same-shape float32 tensors.
std::optional<TemplateMatch> MatchPointwise(const core::OpGraph& graph, bool multithread, int vector_lanes) {
  PointwiseBuild libm = BuildPointwiseExpr(graph, MathFlavor::kLibm);
  if (!libm.expr) return std::nullopt;
  PointwiseBuild prelude = BuildPointwiseExpr(graph, MathFlavor::kPrelude);
  PointwiseBuild prelude_avx512 = BuildPointwiseExpr(graph, MathFlavor::kPreludeAvx512);
  return TemplateMatch{std::make_unique<PointwiseTemplate>(std::move(*libm.expr), std::move(*prelude.expr),
                                                           std::move(*prelude_avx512.expr), multithread,
                                                           vector_lanes),
                       ""};
}

/// rowwise: reductions, normalizations, losses, broadcasting (the loop IR); on
/// failure the reason says why (the last matcher's reason is the one reported).
TemplateMatch MatchRowwiseTemplate(const core::OpGraph& graph, bool multithread) {
  RowwiseMatch rowwise = MatchRowwise(graph);
  if (!rowwise.region) return {nullptr, rowwise.unsupported};
  auto tmpl = std::make_unique<RowwiseTemplate>(std::move(*rowwise.region), multithread);
  try {
    (void)tmpl->Generate(tmpl->Drafts().front());  // every value must be spellable
  } catch (const std::exception& e) {
    return {nullptr, std::string("unsupported_graph: the rowwise template cannot spell it (") +
                         e.what() + ")"};
  }
  return {std::move(tmpl), ""};
}

}  // namespace

TemplateMatch NoGraphMatch(const core::Problem& problem) {
  if (problem.graph_error.rfind("unsupported_dtype:", 0) == 0) return {nullptr, problem.graph_error};
  return {nullptr,
          "unsupported_graph: the problem has no captured op graph" +
              (problem.graph_error.empty() ? std::string() : " (" + problem.graph_error + ")")};
}

TemplateMatch MatchTemplate(const core::Problem& problem, int threads, int vector_lanes) {
  const core::OpGraph& graph = problem.graph;
  if (graph.nodes.empty()) return NoGraphMatch(problem);
  // A scan the scan template refuses (a scan beside other heavy work) may still be
  // a loop-nest program.
  std::optional<TemplateMatch> scan = MatchScanTemplate(problem, threads);
  if (scan && scan->tmpl) return std::move(*scan);
  const bool multithread = threads > 1;
  // Specialized templates first, in order; the general rowwise template last.
  // A pooled embedding lookup: its own family, whose kernel reads sizes at run time.
  if (auto match = families::MatchEmbeddingBag(graph, multithread)) return std::move(*match);
  // Scaled dot-product attention: one fused kernel with an online softmax.
  if (auto match = families::MatchAttention(graph, multithread, vector_lanes)) return std::move(*match);
  // Rows accumulated by index or by segment (index_add, jagged segment sum / mean):
  // its own family (sizes read at run time, PyTorch's order of accumulation).
  if (auto match = families::MatchIndexAdd(graph, multithread)) return std::move(*match);
  // One sort or top-k: its own family (sizes read at run time; O(n log n) per row).
  if (auto match = families::MatchSort(graph, multithread)) return std::move(*match);
  // torch.unique (sorted): its own family (bounded outputs, sizes read at run time).
  if (auto match = families::MatchUnique(graph, multithread)) return std::move(*match);
  // x[bool mask]: the mask's loop-nest program, then a compaction (a bounded output).
  if (auto match = families::MatchMaskedSelect(graph, problem.shape_graphs, multithread)) return std::move(*match);
  if (auto match = MatchSoftmaxLastDim(graph, multithread)) return std::move(*match);
  if (auto match = MatchPointwise(graph, multithread, vector_lanes)) return std::move(*match);
  // The rowwise template bakes the first input set's extents into its loops: where the
  // input sets' sizes differ (problem.shape_graphs), the loop nest reads them at run time.
  if (problem.shape_graphs.empty()) {
    TemplateMatch rowwise = MatchRowwiseTemplate(graph, multithread);
    if (rowwise.tmpl) return rowwise;
  }
  // Every other graph the Core ATen lowering accepts: a program of loop-nest kernels.
  // When nothing applies, the lowering's reason is the answer: it names the op and the
  // node against the one coverage list (docs/core_aten.md).
  return families::NoteEmbeddingBagRefusal(
      graph, families::MatchLoopNest(graph, multithread, vector_lanes, problem.shape_graphs));
}

std::string GeneratedHeader(const std::string& template_name, const std::string& what,
                            const nlohmann::json& knobs, const std::string& abi_lines) {
  std::string out = "// Generated by kernelevolve, template \"" + template_name + "\".\n//\n";
  size_t start = 0;
  while (start < what.size()) {
    size_t end = what.find('\n', start);
    if (end == std::string::npos) end = what.size();
    out += "// " + what.substr(start, end - start) + "\n";
    start = end + 1;
  }
  out += "//\n// Knobs: " + knobs.dump() + "\n//\n";
  out +=
      "// ABI (kernelevolve src/platforms/cpu/candidate_abi.h):\n"
      "//   extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
      "//                                      DLTensor* outputs, int32_t num_outputs);\n";
  out += abi_lines;
  out += ReturnCodesComment();
  out +=
      "// Threads: OpenMP; the caller sets OMP_NUM_THREADS.\n"
      "// Build: g++ -std=c++17 -O3 -march=native -fno-trapping-math -ffp-contract=fast -fopenmp\n"
      "//        -fPIC -shared (no -ffast-math)\n";
  return out;
}

std::string ReturnCodesComment() {
  return "// Returns 0 on success; 1 wrong number of tensors, 2 a tensor is not float32 on the\n"
         "// CPU (or has no data), 3 element counts differ, 4 a tensor is not dense row-major.\n";
}

std::string GeneratedIncludes() {
  return "#include <dlpack/dlpack.h>\n\n#include <algorithm>\n#include <cmath>\n"
         "#include <cstdint>\n#include <cstring>\n";
}

std::string ThreadHelpers() {
  return R"CPP(#ifdef _OPENMP
#include <omp.h>
static inline int64_t ke_thread() { return omp_get_thread_num(); }
static inline int64_t ke_threads() { return omp_get_num_threads(); }
static inline int64_t ke_max_threads() { return omp_get_max_threads(); }
#else
static inline int64_t ke_thread() { return 0; }
static inline int64_t ke_threads() { return 1; }
static inline int64_t ke_max_threads() { return 1; }
#endif
)CPP";
}

std::string AbiHelpers() {
  return R"ABI(// ---- DLPack ABI helpers -------------------------------------------------------
static inline float* ke_float_data(const DLTensor& t) {
  return reinterpret_cast<float*>(static_cast<char*>(t.data) + t.byte_offset);
}

static inline int64_t ke_numel(const DLTensor& t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t.ndim; ++d) n *= t.shape[d];
  return n;
}

// 0 when `t` is in CPU memory (with data unless empty) and dense row-major, else 2
// (device or data) or 4 (strides).
static inline int ke_check_layout(const DLTensor& t) {
  if (t.device.device_type != kDLCPU || (t.data == nullptr && ke_numel(t) != 0)) return 2;
  if (t.strides != nullptr) {
    int64_t expected = 1;
    for (int32_t d = t.ndim - 1; d >= 0; --d) {
      if (t.shape[d] != 1 && t.strides[d] != expected) return 4;
      expected *= t.shape[d];
    }
  }
  return 0;
}

// 0 when `t` is a dense row-major float32 tensor in CPU memory, else 2 or 4.
static inline int ke_check_tensor(const DLTensor& t) {
  if (t.dtype.code != kDLFloat || t.dtype.bits != 32 || t.dtype.lanes != 1) return 2;
  return ke_check_layout(t);
}

// 0 when `t` is a dense row-major int64 tensor in CPU memory, else 2 or 4.
static inline int ke_check_int64(const DLTensor& t) {
  if (t.dtype.code != kDLInt || t.dtype.bits != 64 || t.dtype.lanes != 1) return 2;
  return ke_check_layout(t);
}
)ABI";
}

}  // namespace kernelevolve::operators::templates
