#include "operators/template/triton_scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "operators/template/triton_expr.h"
#include "operators/template/triton_rowwise_kernels.h"

namespace kernelevolve::operators::templates {
namespace {

std::string Resolve(const std::map<std::string, std::string>& aliases, std::string name) {
  for (int hops = 0; hops < 1000 && aliases.count(name) > 0; ++hops) name = aliases.at(name);
  return name;
}

/// Spells the calls `result` needs (stopping at `leaves`) in graph order; "" and
/// `error` set on a call without a Triton spelling.
std::string SpellSubgraph(const core::OpGraph& graph,
                          const std::map<std::string, std::string>& leaves,
                          const std::map<std::string, std::string>& aliases,
                          const std::string& result, const std::string& prefix,
                          std::vector<std::string>& lines, std::string& error) {
  std::set<std::string> needed;
  std::vector<std::string> todo = {Resolve(aliases, result)};
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (leaves.count(name) > 0 || !needed.insert(name).second) continue;
    const core::OpNode* node = graph.Find(name);
    if (node == nullptr || node->kind != core::OpNodeKind::kCall) {
      error = "unsupported_graph: '" + name + "' is not an elementwise value of the scan's inputs";
      return "";
    }
    for (const auto& arg : node->args) {
      if (arg.IsRef()) todo.push_back(Resolve(aliases, arg.ref));
    }
  }
  std::map<std::string, std::string> vars = leaves;
  auto add_aliases = [&] {
    for (const auto& [alias, source] : aliases) {
      if (const auto it = vars.find(Resolve(aliases, source)); it != vars.end())
        vars[alias] = it->second;
    }
  };
  add_aliases();
  int next = 0;
  for (const auto& node : graph.nodes) {
    if (needed.count(node.name) == 0) continue;
    std::string rhs, why;
    if (node.target == "aten._to_copy.default") {
      const core::OpArg* self = node.Arg("self");
      const core::OpNode* src =
          self && self->IsRef() ? graph.Find(Resolve(aliases, self->ref)) : nullptr;
      if (src == nullptr || vars.count(self->ref) == 0) {
        why = "its 'self' is not an elementwise value";
      } else {
        const std::string& a = vars.at(self->ref);
        const bool from_bool = src->dtype == core::DType::kBool;
        if (node.dtype == core::DType::kFloat32)
          rhs = from_bool ? a + ".to(tl.float32)" : a;
        else
          rhs = from_bool ? a : "(" + a + " != 0.0)";
      }
    } else {
      rhs = TritonElementwiseExpr(node, vars, why);
    }
    if (!why.empty()) {
      error = fmt::format("unsupported_op: {} ({})", node.target, why);
      return "";
    }
    const std::string var = fmt::format("{}{}", prefix, next++);
    lines.push_back(fmt::format("{} = {}  # {}", var, rhs, node.target));
    vars[node.name] = var;
    add_aliases();
  }
  const auto it = vars.find(Resolve(aliases, result));
  if (it == vars.end()) error = "unsupported_graph: '" + result + "' is not computed by the graph";
  return it == vars.end() ? "" : it->second;
}

bool Rows(const ScanSpec& spec) { return spec.inner == 1; }

}  // namespace

std::optional<TritonScanBody> BuildTritonScanBody(const core::OpGraph& graph, const ScanSpec& spec,
                                                  std::string& unsupported) {
  std::map<std::string, std::string> aliases;
  for (const auto& node : graph.nodes) {
    const core::OpArg* self = node.Arg("self");
    if (node.target == "aten.flip.default" && self != nullptr && self->IsRef())
      aliases[node.name] = self->ref;
  }
  std::map<std::string, std::string> leaves;
  for (size_t k = 0; k < spec.inputs.size(); ++k)
    leaves[spec.inputs[k].node] = fmt::format("x{}", k);
  const core::OpNode* scan = graph.Find(spec.scan_node);
  TritonScanBody body;
  body.prologue_result = SpellSubgraph(graph, leaves, aliases, scan->Arg("self")->ref, "p",
                                       body.prologue, unsupported);
  if (!unsupported.empty()) return std::nullopt;
  leaves[spec.scan_node] = "s";
  body.epilogue_result =
      SpellSubgraph(graph, leaves, aliases, graph.outputs.at(0), "e", body.epilogue, unsupported);
  if (!unsupported.empty()) return std::nullopt;
  return body;
}

KnobSpace TritonScanKnobSpace(const ScanSpec& spec) {
  std::vector<KnobDim> dims;
  const int64_t pn = PowerOfTwoAtLeast(spec.n);
  if (Rows(spec)) {
    const auto block = KnobValuesUpTo({256, 512, 1024, 2048, 4096}, pn);
    dims.push_back(
        {"block", block, NearestKnobValue(block, 1024), nullptr, nullptr, "", nullptr, "{}-element blocks"});
  } else {
    const auto bi = KnobValuesUpTo({16, 32, 64, 128}, PowerOfTwoAtLeast(spec.inner));
    dims.push_back(
        {"block_i", bi, NearestKnobValue(bi, 64), nullptr, nullptr, "", nullptr, "{}-wide column blocks"});
    const auto bn = KnobValuesUpTo({8, 16, 32, 64}, pn);
    dims.push_back(
        {"block_n", bn, NearestKnobValue(bn, 16), nullptr, nullptr, "", nullptr, "{}-deep blocks"});
  }
  dims.push_back({"num_warps", {1, 2, 4, 8}, 4, 4, nullptr, "", nullptr, "{} warps"});
  dims.push_back({"num_stages", {1, 2, 3}, 2, 1, nullptr, "", nullptr, "{} pipeline stages"});
  // float64 first: a float32 running prefix drifts past the checker's tolerance where
  // the prefix crosses zero after large values (the runner's 'large' edge set), as
  // PyTorch's CPU reference accumulates in double.
  dims.push_back({"accumulator",
                  {"float64", "float32"},
                  "float64",
                  "float64",
                  "float32",
                  "",
                  nullptr,
                  "{} accumulators"});
  return KnobSpace(std::move(dims));
}

TritonScanTemplate::TritonScanTemplate(ScanSpec spec, TritonScanBody body)
    : spec_(std::move(spec)), body_(std::move(body)), space_(TritonScanKnobSpace(spec_)) {}

std::vector<nlohmann::json> TritonScanTemplate::Drafts() const {
  std::vector<nlohmann::json> curated;
  if (Rows(spec_)) {
    curated = {{{"block", 1024}, {"num_warps", 4}, {"num_stages", 2}, {"accumulator", "float64"}},
               {{"block", 4096}, {"num_warps", 8}, {"num_stages", 2}, {"accumulator", "float64"}},
               {{"block", 1024}, {"num_warps", 4}, {"num_stages", 2}, {"accumulator", "float32"}}};
  } else {
    curated = {
        {{"block_i", 64}, {"block_n", 16}, {"num_warps", 4}, {"num_stages", 2}, {"accumulator", "float64"}},
        {{"block_i", 128},
         {"block_n", 32},
         {"num_warps", 8},
         {"num_stages", 2},
         {"accumulator", "float64"}},
        {{"block_i", 64},
         {"block_n", 16},
         {"num_warps", 4},
         {"num_stages", 2},
         {"accumulator", "float32"}}};
  }
  std::vector<nlohmann::json> out;
  std::set<std::string> seen;
  for (const auto& knobs : curated) {
    nlohmann::json fit = nlohmann::json::object();
    for (const auto& [k, v] : knobs.items()) {
      const KnobDim* dim = space_.Find(k);
      if (dim != nullptr)
        fit[k] = std::find(dim->values.begin(), dim->values.end(), v) != dim->values.end()
                     ? v
                     : NearestKnobValue(dim->values, v.is_number() ? v.get<int64_t>() : 0);
    }
    fit = space_.Canonical(fit);
    if (seen.insert(fit.dump()).second) out.push_back(fit);
  }
  return out;
}

std::string TritonScanTemplate::Summary(const nlohmann::json& knobs) const {
  return fmt::format("Triton {}{} over dim {} of [{}] ({} rows of {}{}), {}",
                     spec_.reverse ? "reverse " : "",
                     spec_.op == ScanOp::kProd ? "cumprod" : "cumsum", spec_.dim,
                     fmt::join(spec_.shape, ", "), spec_.outer * spec_.inner, spec_.n,
                     Rows(spec_) ? "" : ", strided", space_.Describe(space_.Canonical(knobs)));
}

std::string TritonScanTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  const bool rows = Rows(spec_), prod = spec_.op == ScanOp::kProd;
  const std::string acc = knobs.at("accumulator") == "float64" ? "tl.float64" : "tl.float32";
  const std::string ident = prod ? "1.0" : "0.0";
  const int64_t n = spec_.n, inner = spec_.inner, outer = spec_.outer;
  const bool big = outer * n * inner >= (int64_t{1} << 31);
  std::string params, loads, args;
  for (size_t k = 0; k < spec_.inputs.size(); ++k) {
    params += fmt::format("x{}_ptr, ", k);
    args += fmt::format("inputs[{}], ", k);
    const std::string load = fmt::format("tl.load(x{}_ptr + idx, mask=mask, other=0)", k);
    loads += fmt::format("        x{} = {}\n", k,
                         spec_.inputs[k].is_bool ? "(" + load + " != 0)" : load);
  }
  std::string pro, epi;
  for (const auto& l : body_.prologue) pro += "        " + l + "\n";
  for (const auto& l : body_.epilogue) epi += "        " + l + "\n";
  // The epilogue runs on the prefix in the accumulator dtype and rounds once at the
  // store: `cumsum(x) - x` rounded to float32 first loses the small exclusive prefix
  // next to a large x (the checker's 'large' edge references are float64).
  // Blocks are visited in scan order: from the last block backwards for a reverse scan.
  const std::string scan =
      prod ? fmt::format("tl.cumprod(v, axis=0, reverse={})", spec_.reverse ? "True" : "False")
           : fmt::format("tl.cumsum(v, axis=0, reverse={})", spec_.reverse ? "True" : "False");
  const std::string carry_op = prod ? "carry * {}" : "carry + {}";
  // A block's product is the end of its inclusive scan (index 0 for a reverse scan;
  // masked lanes hold the identity), picked by a sum of one nonzero term: exact, and
  // unlike tl.reduce with a custom combine it stays fast under the interpreter.
  const std::string total =
      prod ? fmt::format("tl.sum(tl.where(j == start + {}, s_acc, 0.0), axis=0, keep_dims=KD)",
                         spec_.reverse ? "0" : "BLOCK - 1")
           : "tl.sum(v, axis=0, keep_dims=KD)";
  std::string setup, grid;
  const std::string pid = big ? "tl.program_id(0).to(tl.int64)" : "tl.program_id(0)";
  if (rows) {
    setup = fmt::format(
        "    base = {} * N\n"
        "    carry = tl.full([], {}, ACC)\n"
        "    for t in tl.range(0, NB, num_stages=NS):\n"
        "        start = {}\n"
        "        j = start + tl.arange(0, BLOCK)\n"
        "        mask = j < N\n"
        "        idx = base + j\n",
        pid, ident, spec_.reverse ? "(NB - 1 - t) * BLOCK" : "t * BLOCK");
    grid = fmt::format("({},)", outer);
  } else {
    const int64_t nib =
        (inner + knobs.at("block_i").get<int64_t>() - 1) / knobs.at("block_i").get<int64_t>();
    setup = fmt::format(
        "    pid = {}\n"
        "    o = pid // {}\n"
        "    c = (pid % {}) * BI + tl.arange(0, BI)[None, :]\n"
        "    carry = tl.full([1, BI], {}, ACC)\n"
        "    for t in tl.range(0, NB, num_stages=NS):\n"
        "        start = {}\n"
        "        j = start + tl.arange(0, BLOCK)[:, None]\n"
        "        mask = (j < N) & (c < {})\n"
        "        idx = (o * N + j) * {} + c\n",
        pid, nib, nib, ident, spec_.reverse ? "(NB - 1 - t) * BLOCK" : "t * BLOCK", inner, inner);
    grid = fmt::format("({},)", outer * nib);
  }
  const int64_t block =
      rows ? knobs.at("block").get<int64_t>() : knobs.at("block_n").get<int64_t>();
  const int64_t bi = rows ? 1 : knobs.at("block_i").get<int64_t>();
  return fmt::format(
      R"(# Generated by kernelevolve, template triton_scan (--target triton).
# {what}. Knobs: {knobs}.
# ABI: kernelevolve_entry(inputs, outputs) with contiguous device tensors (docs/gpu.md).
import triton
import triton.language as tl


@triton.jit
def _scan({params}out_ptr, N: tl.constexpr, NB: tl.constexpr, BLOCK: tl.constexpr, BI: tl.constexpr,
          NS: tl.constexpr, ACC: tl.constexpr, KD: tl.constexpr):
{setup}{loads}{pro}        v = tl.where(mask, {pro_result}, {ident}).to(ACC)
        s_acc = {scan}
        s = {carry_scan}
        carry = {carry_next}
{epi}        tl.store(out_ptr + idx, ({epi_result}).to(out_ptr.dtype.element_ty), mask=mask)


def kernelevolve_entry(inputs, outputs):
    out = outputs[0]
    if out.numel() == 0:
        return
    _scan[{grid}]({args}out, N={n}, NB={nb}, BLOCK={block}, BI={bi}, NS={stages}, ACC={acc}, KD={kd},
                  num_warps={warps})
)",
      fmt::arg("what", Summary(knobs)), fmt::arg("knobs", knobs.dump()), fmt::arg("params", params),
      fmt::arg("setup", setup), fmt::arg("loads", loads), fmt::arg("pro", pro),
      fmt::arg("pro_result", body_.prologue_result), fmt::arg("ident", ident),
      fmt::arg("scan", scan), fmt::arg("carry_scan", fmt::format(fmt::runtime(carry_op), "s_acc")),
      fmt::arg("carry_next", fmt::format(fmt::runtime(carry_op), total)), fmt::arg("epi", epi),
      fmt::arg("epi_result", body_.epilogue_result), fmt::arg("grid", grid), fmt::arg("args", args),
      fmt::arg("n", n), fmt::arg("nb", (n + block - 1) / block), fmt::arg("block", block),
      fmt::arg("bi", bi), fmt::arg("stages", knobs.at("num_stages").get<int>()),
      fmt::arg("acc", acc), fmt::arg("kd", rows ? "False" : "True"),
      fmt::arg("warps", knobs.at("num_warps").get<int>()));
}

std::optional<TemplateMatch> MatchTritonScan(const core::Problem& problem) {
  const auto calls = problem.graph.Calls();
  if (std::none_of(calls.begin(), calls.end(),
                   [](const core::OpNode* c) { return IsScanFamilyTarget(c->target); })) {
    return std::nullopt;
  }
  ScanMatch match = MatchScan(problem.graph);
  if (!match.spec) return TemplateMatch{nullptr, match.unsupported};
  std::string why;
  auto body = BuildTritonScanBody(problem.graph, *match.spec, why);
  if (!body) return TemplateMatch{nullptr, why};
  return TemplateMatch{
      std::make_unique<TritonScanTemplate>(std::move(*match.spec), std::move(*body)), ""};
}

}  // namespace kernelevolve::operators::templates
