#include "operators/template/triton_softmax.h"

#include <fmt/format.h>

#include "operators/families/attention/triton_attention_template.h"
#include "operators/families/embedding_bag/embedding_bag_template.h"
#include "operators/families/embedding_bag/triton_embedding_bag_template.h"
#include "operators/families/index_add/triton_index_add_template.h"
#include "operators/families/loop_nest/triton_loop_nest_template.h"
#include "operators/families/masked_select/triton_masked_select_template.h"
#include "operators/families/sort/triton_sort_template.h"
#include "operators/families/unique/triton_unique_template.h"
#include "operators/template/triton_matmul.h"
#include "operators/template/cuda_reduction.h"
#include "operators/template/triton_pointwise.h"
#include "operators/template/triton_rowwise.h"
#include "operators/template/triton_scan.h"

namespace kernelevolve::operators::templates {
namespace {

// One program per row (or a persistent grid looping over rows); the whole row is one
// block of BLOCK >= cols lanes, masked lanes read -inf so they add exp(-inf) = 0. The
// persistent loop runs ITERS = cdiv(rows, grid) times with a constexpr bound and masks
// rows past the end: Triton's interpreter cannot run tl.range over a runtime bound
// or from program_id, so this form runs under TRITON_INTERPRET=1 too.
constexpr const char* kRowKernel = R"(
@triton.jit
def _softmax_row(x_ptr, y_ptr, row, n_rows, n_cols: tl.constexpr, BLOCK: tl.constexpr, LOG: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = (offs < n_cols) & (row < n_rows)
    base = row.to(tl.int64) * n_cols
    x = tl.load(x_ptr + base + offs, mask=mask, other=float('-inf'))
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    s = tl.sum(e, axis=0)
    if LOG:
        y = z - tl.log(s)
    else:
        y = e / s
    tl.store(y_ptr + base + offs, y, mask=mask)


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_rows, n_cols: tl.constexpr, BLOCK: tl.constexpr, LOG: tl.constexpr,
                  PERSISTENT: tl.constexpr, ITERS: tl.constexpr, NUM_STAGES: tl.constexpr):
    if PERSISTENT:
        for i in tl.range(0, ITERS, num_stages=NUM_STAGES):
            _softmax_row(x_ptr, y_ptr, tl.program_id(0) + i * tl.num_programs(0), n_rows, n_cols, BLOCK, LOG)
    else:
        _softmax_row(x_ptr, y_ptr, tl.program_id(0), n_rows, n_cols, BLOCK, LOG)
)";

// Rows wider than one block: pass 1 keeps a running max m and a sum s rescaled
// whenever m grows, per lane (Milakov & Gimelshein 2018, "Online normalizer
// calculation for softmax"); lanes are merged at the end; pass 2 normalizes.
constexpr const char* kOnlineKernel = R"(
@triton.jit
def _softmax_online(x_ptr, y_ptr, n_cols: tl.constexpr, BLOCK: tl.constexpr, LOG: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    m = tl.full([BLOCK], float('-inf'), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in tl.range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + base + offs, mask=mask, other=float('-inf'))
        m_new = tl.maximum(m, x)
        alpha = tl.where(m == m_new, 1.0, tl.exp(m - m_new))
        s = s * alpha + tl.where(mask, tl.exp(x - m_new), 0.0)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    log_total = tl.log(total)
    for start in tl.range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        if LOG:
            y = x - row_max - log_total
        else:
            y = tl.exp(x - row_max) / total
        tl.store(y_ptr + base + offs, y, mask=mask)
)";

// Programs per SM of the persistent grid: half of the 64 resident warps an SM of
// compute capability 8.x/9.x holds (CUDA C Programming Guide, "Compute
// Capabilities" table), leaving room for register pressure.
constexpr const char* kSmCount = R"(
_SM_COUNT = {}


def _sm_count(device):
    if device.type != 'cuda':
        return 4
    if device.index not in _SM_COUNT:
        import torch
        _SM_COUNT[device.index] = torch.cuda.get_device_properties(device).multi_processor_count
    return _SM_COUNT[device.index]
)";

int64_t NextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

std::optional<TemplateMatch> MatchTritonSoftmax(const core::OpGraph& graph) {
  const auto calls = graph.Calls();
  if (calls.size() != 1 || !IsSoftmaxTarget(calls[0]->target)) return std::nullopt;
  SoftmaxMatch softmax = MatchSoftmax(graph);
  if (!softmax.spec) return TemplateMatch{nullptr, softmax.unsupported};
  return TemplateMatch{std::make_unique<TritonSoftmaxTemplate>(*softmax.spec), ""};
}

}  // namespace

KnobSpace TritonSoftmaxKnobSpace(bool row_fits) {
  std::vector<nlohmann::json> variants = {"online"};
  if (row_fits) variants.insert(variants.begin(), "row");
  const nlohmann::json first = variants.front();
  return KnobSpace({
      {"algorithm", variants, first, first, nullptr, "", nullptr, "{} softmax"},
      {"num_warps", {4, 8, 16}, 8, 4, nullptr, "", nullptr, "{} warps"},
      {"persistent", {"no", "yes"}, "no", "no", "yes", "algorithm", "row", "persistent grid {}"},
      {"num_stages", {1, 2, 3}, 2, 1, nullptr, "persistent", "yes", "{} pipeline stages"},
      {"block_r", {1024, 2048, 4096}, 4096, nullptr, nullptr, "algorithm", "online", "{}-lane chunks"},
  });
}

TritonSoftmaxTemplate::TritonSoftmaxTemplate(SoftmaxSpec spec)
    : spec_(std::move(spec)), space_(TritonSoftmaxKnobSpace(spec_.cols <= kTritonMaxRowBlock)) {}

std::vector<nlohmann::json> TritonSoftmaxTemplate::Drafts() const {
  if (spec_.cols > kTritonMaxRowBlock) {
    return {{{"algorithm", "online"}, {"num_warps", 8}, {"block_r", 4096}}};
  }
  return {{{"algorithm", "row"}, {"num_warps", 8}, {"persistent", "no"}},
          {{"algorithm", "row"}, {"num_warps", 8}, {"persistent", "yes"}, {"num_stages", 2}},
          {{"algorithm", "row"}, {"num_warps", 16}, {"persistent", "no"}}};
}

std::string TritonSoftmaxTemplate::Summary(const nlohmann::json& knobs) const {
  return fmt::format("Triton {} over {} rows of {}, {}", spec_.log ? "log_softmax" : "softmax", spec_.rows,
                     spec_.cols, space_.Describe(space_.Canonical(knobs)));
}

std::string TritonSoftmaxTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  const bool row = knobs.at("algorithm") == "row";
  const int warps = knobs.at("num_warps").get<int>();
  std::string out = fmt::format(
      "# Generated by kernelevolve, template triton_softmax_lastdim (--target triton).\n"
      "# {} over the last dim of float32[{}] ({} rows of {}). Knobs: {}.\n"
      "# ABI: kernelevolve_entry(inputs, outputs) with contiguous device tensors (docs/gpu.md).\n"
      "import triton\nimport triton.language as tl\n",
      spec_.log ? "log_softmax" : "softmax", fmt::join(spec_.shape, ", "), spec_.rows, spec_.cols, knobs.dump());
  const std::string log = spec_.log ? "True" : "False";
  if (row) {
    const bool persistent = knobs.at("persistent") == "yes";
    const int stages = persistent ? knobs.at("num_stages").get<int>() : 1;
    out += kRowKernel;
    if (persistent) out += kSmCount;
    out += fmt::format(
        "\n\ndef kernelevolve_entry(inputs, outputs):\n"
        "    x, y = inputs[0], outputs[0]\n"
        "    n_cols = {cols}\n"
        "    n_rows = x.numel() // n_cols if n_cols else 0\n"
        "    if n_rows == 0:\n"
        "        return\n"
        "    grid = ({grid},)\n"
        "    iters = triton.cdiv(n_rows, grid[0])\n"
        "    _softmax_rows[grid](x, y, n_rows, n_cols, BLOCK={block}, LOG={log}, PERSISTENT={persistent},\n"
        "                        ITERS=iters, NUM_STAGES={stages}, num_warps={warps})\n",
        fmt::arg("cols", spec_.cols),
        fmt::arg("grid", persistent ? fmt::format("min(n_rows, _sm_count(x.device) * {})", std::max(1, 32 / warps))
                                    : std::string("n_rows")),
        fmt::arg("block", std::max<int64_t>(1, NextPowerOfTwo(spec_.cols))), fmt::arg("log", log),
        fmt::arg("persistent", persistent ? "True" : "False"), fmt::arg("stages", stages), fmt::arg("warps", warps));
    return out;
  }
  out += kOnlineKernel;
  out += fmt::format(
      "\n\ndef kernelevolve_entry(inputs, outputs):\n"
      "    x, y = inputs[0], outputs[0]\n"
      "    n_cols = {cols}\n"
      "    n_rows = x.numel() // n_cols if n_cols else 0\n"
      "    if n_rows == 0:\n"
      "        return\n"
      "    _softmax_online[(n_rows,)](x, y, n_cols, BLOCK={block}, LOG={log}, num_warps={warps})\n",
      fmt::arg("cols", spec_.cols), fmt::arg("block", knobs.at("block_r").get<int>()), fmt::arg("log", log),
      fmt::arg("warps", warps));
  return out;
}

TemplateMatch MatchTritonTemplate(const core::Problem& problem) {
  const core::OpGraph& graph = problem.graph;
  if (graph.nodes.empty()) return NoGraphMatch(problem);
  // A pooled embedding lookup: its own family, whose kernel reads sizes at run time.
  if (auto match = families::MatchTritonEmbeddingBag(graph)) return std::move(*match);
  // Rows accumulated by index or by segment (index_add, jagged segment sum / mean).
  if (auto match = families::MatchTritonIndexAdd(graph)) return std::move(*match);
  // A lone sort / topk (float32 rows), unique (int64) or x[mask]: their own families,
  // whose kernels read sizes at run time (masked_select and unique write data-dependent
  // lengths, docs/abi.md).
  if (auto match = families::MatchTritonSort(graph)) return std::move(*match);
  // Scaled dot-product attention: one fused kernel with an online softmax.
  if (auto match = families::MatchTritonAttention(graph)) return std::move(*match);
  if (auto match = families::MatchTritonUnique(graph)) return std::move(*match);
  if (auto match = families::MatchTritonMaskedSelect(graph, problem.shape_graphs)) return std::move(*match);
  // Inputs of other sizes on other input sets (jagged values, bags of varying length):
  // the specialized Triton families bake the first set's sizes, so the loop nest, which
  // reads the sizes that differ at run time, takes the graph.
  if (!problem.shape_graphs.empty()) {
    return families::NoteEmbeddingBagRefusal(
        graph, families::MatchTritonLoopNest(graph, problem.shape_graphs, problem.TritonTf32()));
  }
  // A softmax the last-dim template refuses (another dim) falls through to rowwise.
  std::optional<TemplateMatch> softmax = MatchTritonSoftmax(graph);
  if (softmax && softmax->tmpl) return std::move(*softmax);
  // A graph a specialized family refuses (two matmuls, say) goes on to the loop nest.
  if (auto mm = MatchTritonMatmul(graph)) {  // issue 6: matmul + elementwise epilogue
    if (mm->spec) {
      mm->spec->reference_tf32 = problem.TritonTf32().matmul;
      return {std::make_unique<TritonMatmulTemplate>(std::move(*mm->spec)), ""};
    }
  }
  std::optional<TemplateMatch> scan = MatchTritonScan(problem);  // cumsum / cumprod
  if (scan && scan->tmpl) return std::move(*scan);
  TritonPointwiseBuild pointwise = BuildTritonPointwise(graph);
  if (pointwise.body) return {std::make_unique<TritonPointwiseTemplate>(std::move(*pointwise.body)), ""};
  TemplateMatch rowwise = MatchTritonRowwiseOr(graph, pointwise.unsupported);  // reductions, norms, losses
  if (rowwise.tmpl) return rowwise;
  // Every other graph the Core ATen lowering accepts: a program of loop-nest kernels.
  // When nothing applies, the lowering's reason is the answer (it names the node).
  return families::NoteEmbeddingBagRefusal(graph, families::MatchTritonLoopNest(graph, {}, problem.TritonTf32()));
}

TemplateMatch MatchTemplateForTarget(const std::string& target, const core::Problem& problem, int threads,
                                     int vector_lanes) {
  if (target == "cpu") return MatchTemplate(problem, threads, vector_lanes);
  if (target == "triton") return MatchTritonTemplate(problem);
  if (target == "cuda") return MatchCudaTemplate(problem);  // cuda_reduction.h
  return {nullptr, "unsupported_target: " + target + " (templates exist for cpu, triton and cuda)"};
}

}  // namespace kernelevolve::operators::templates
