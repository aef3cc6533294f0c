#include "operators/template/rowwise_template.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "core/error.h"
#include "operators/ir/lower_graph.h"
#include "operators/template/math_prelude.h"
#include "operators/template/rowwise_loops.h"

namespace kernelevolve::operators::templates {
namespace {

bool HasSumOrProd(const ir::Region& region) {
  for (const auto& v : region.graph.values) {
    if (v.kind == ir::ValueKind::kReduce &&
        (v.reduce == ir::ReduceKind::kSum || v.reduce == ir::ReduceKind::kProd)) {
      return true;
    }
  }
  return false;
}

}  // namespace

RowwiseMatch MatchRowwise(const core::OpGraph& graph) {
  ir::LowerResult lowered = ir::Lower(graph);
  if (!lowered.graph) return {std::nullopt, lowered.unsupported};
  // The lowering treats expand as the implicit broadcast of its consumers; an output
  // that is itself broadcast (x.sum(1, keepdim=True).expand(-1, 5)) would be written
  // with the reduction's elements only, and every run would end "returned 3" (a break
  // test's finding). The loop-nest family writes every element.
  for (size_t o = 0; o < graph.outputs.size() && o < lowered.graph->outputs.size(); ++o) {
    const core::OpNode* node = graph.Find(graph.outputs[o]);
    const auto& value = lowered.graph->values[static_cast<size_t>(lowered.graph->outputs[o])];
    if (node != nullptr && ir::Numel(node->shape) != ir::Numel(value.shape)) {
      return {std::nullopt, fmt::format("unsupported_graph: output {} ({}) broadcasts a value of shape {}", o,
                                        ir::ShapeText(node->shape), ir::ShapeText(value.shape))};
    }
  }
  ir::RegionResult region = ir::AnalyzeRegion(*lowered.graph);
  if (!region.region) return {std::nullopt, region.unsupported};
  return {std::move(region.region), ""};
}

KnobSpace RowwiseKnobSpace(const ir::Region& region, bool multithread) {
  std::vector<KnobDim> dims;
  dims.push_back({"math", {"libm", "vectorized"}, "libm", "libm", "vectorized", "", nullptr,
                  "{} math"});
  std::vector<nlohmann::json> threads = {"1"};
  if (multithread) threads.push_back("all");
  dims.push_back({"threads", threads, "1", "1", multithread ? nlohmann::json("all") : nullptr, "",
                  nullptr, "{} threads"});
  if (HasSumOrProd(region)) {
    dims.push_back({"accumulator", {"float64", "float32"}, "float64", "float64", "float32", "", nullptr,
                    "{} accumulators"});
  }
  if (region.SplitR()) {
    dims.push_back({"split_block", {4096, 16384, 65536}, 16384, nullptr, nullptr, "", nullptr,
                    "{}-element partials"});
  } else if (multithread) {
    dims.push_back({"block_rows", {1, 4, 16}, 4, nullptr, nullptr, "threads", "all",
                    "{} rows per chunk"});
  }
  if (!region.SplitR() && region.inner > 1) {
    dims.push_back({"loop_order", {"r_outer", "i_outer"}, "r_outer", "i_outer", "r_outer", "",
                    nullptr, "{} loop order"});
    dims.push_back({"block_i", {16, 32, 64, 256}, 64, nullptr, nullptr, "loop_order", "r_outer",
                    "{}-wide i blocks"});
  }
  if (!RowBufferValues(region).empty()) {
    dims.push_back({"row_buffer", {"off", "on"}, "off", "off", "on", "", nullptr, "row buffer {}"});
  }
  return KnobSpace(std::move(dims));
}

RowwiseTemplate::RowwiseTemplate(ir::Region region, bool multithread)
    : SpecTemplate(region, RowwiseKnobSpace(region, multithread)) {}

std::vector<nlohmann::json> RowwiseTemplate::Drafts() const {
  const std::vector<nlohmann::json> curated = {
      {{"math", "libm"}, {"threads", "1"}, {"accumulator", "float64"}, {"loop_order", "r_outer"}},
      {{"math", "vectorized"}, {"threads", "all"}, {"accumulator", "float32"}, {"block_rows", 4},
       {"loop_order", "r_outer"}, {"block_i", 64}, {"row_buffer", "on"}},
      {{"math", "vectorized"}, {"threads", "all"}, {"accumulator", "float64"}, {"block_rows", 1},
       {"block_i", 256}, {"split_block", 65536}},
      {{"math", "vectorized"}, {"threads", "all"}, {"accumulator", "float32"}, {"block_rows", 16},
       {"block_i", 16}, {"split_block", 4096}, {"row_buffer", "on"}},
      {{"math", "vectorized"}, {"threads", "1"}, {"accumulator", "float32"}},
      {{"math", "vectorized"}, {"threads", "all"}, {"accumulator", "float32"}, {"loop_order", "i_outer"}},
  };
  std::vector<nlohmann::json> out;
  std::set<std::string> seen;
  for (const auto& knobs : curated) {
    nlohmann::json fit = space_.Fit(knobs);
    if (seen.insert(fit.dump()).second) out.push_back(fit);
  }
  return out;
}

std::string RowwiseTemplate::Summary(const nlohmann::json& knobs) const {
  return space_.Describe(space_.Canonical(knobs)) +
         fmt::format(" over [{}, {}, {}] (outer, reduced, inner)", spec_.outer, spec_.reduce,
                     spec_.inner);
}

std::string RowwiseTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  LoopSettings s;
  s.flavor = knobs.at("math") == "vectorized" ? MathFlavor::kPrelude : MathFlavor::kLibm;
  s.threaded = knobs.at("threads") == "all";
  s.acc_double = !knobs.contains("accumulator") || knobs.at("accumulator") == "float64";
  if (knobs.contains("block_rows")) s.rows_per_chunk = knobs.at("block_rows").get<int64_t>();
  if (knobs.contains("split_block")) s.r_chunk = knobs.at("split_block").get<int64_t>();
  if (knobs.contains("loop_order")) s.r_outer = knobs.at("loop_order") == "r_outer";
  if (knobs.contains("block_i")) s.i_block = knobs.at("block_i").get<int64_t>();
  if (knobs.contains("row_buffer")) s.row_buffer = knobs.at("row_buffer") == "on";

  const ir::Graph& g = spec_.graph;
  std::map<int, const ir::Value*> inputs;  // abi index -> input value
  for (const auto& v : g.values) {
    if (v.kind == ir::ValueKind::kInput) inputs[v.abi_index] = &v;
  }
  std::string what = fmt::format(
      "Fused reductions over float32 data viewed as [O, R, I] = [{}, {}, {}]\n"
      "({} reduction stages; {}). Captured ops:\n",
      spec_.outer, spec_.reduce, spec_.inner, spec_.stages.size(),
      spec_.SplitR() ? "one row, r split into chunks" : "rows in parallel");
  std::set<std::string> origins;
  for (const auto& v : g.values) {
    if (!v.origin.empty() && origins.insert(v.origin).second) {
      what += "  " + (v.origin.size() > 150 ? v.origin.substr(0, 147) + "..." : v.origin) + "\n";
    }
  }
  std::string abi;
  std::string entry =
      "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
      "                                  DLTensor* outputs, int32_t num_outputs) {\n";
  // Inputs the graph does not use (e.g. num_batches_tracked) may follow or sit between.
  const int needed = inputs.empty() ? 0 : inputs.rbegin()->first + 1;
  entry += fmt::format("  if (num_inputs < {} || num_outputs != {}) return 1;\n", needed,
                       g.outputs.size());
  for (const auto& [index, v] : inputs) {
    const bool i64 = v->dtype == core::DType::kInt64;
    abi += fmt::format("//   inputs[{}] = {} ({} {})\n", index, v->input_name,
                       i64 ? "int64" : "float32", ir::ShapeText(v->shape));
    entry += fmt::format(
        "  if (const int rc = {}(inputs[{}])) return rc;\n"
        "  if (ke_numel(inputs[{}]) != {}) return 3;\n",
        i64 ? "ke_check_int64" : "ke_check_tensor", index, index, ir::Numel(v->shape));
    entry += i64 ? fmt::format(
                       "  const int64_t* __restrict in{0} = reinterpret_cast<const int64_t*>(\n"
                       "      static_cast<const char*>(inputs[{0}].data) + inputs[{0}].byte_offset);\n",
                       index)
                 : fmt::format("  const float* __restrict in{0} = ke_float_data(inputs[{0}]);\n", index);
  }
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const auto& v = g.values[static_cast<size_t>(g.outputs[o])];
    const bool i64 = g.output_dtypes[o] == core::DType::kInt64;
    abi += fmt::format("//   outputs[{}] = ({} {})\n", o, i64 ? "int64" : "float32",
                       ir::ShapeText(v.shape));
    entry += fmt::format(
        "  if (const int rc = {}(outputs[{}])) return rc;\n"
        "  if (ke_numel(outputs[{}]) != {}) return 3;\n",
        i64 ? "ke_check_int64" : "ke_check_tensor", o, o, ir::Numel(v.shape));
    entry += i64 ? fmt::format(
                       "  int64_t* __restrict out{0} = reinterpret_cast<int64_t*>(\n"
                       "      static_cast<char*>(outputs[{0}].data) + outputs[{0}].byte_offset);\n",
                       o)
                 : fmt::format("  float* __restrict out{0} = ke_float_data(outputs[{0}]);\n", o);
  }
  entry += LoopNest(spec_, s) + "  return 0;\n}\n";
  const std::string kernel =
      "// ---- kernel --------------------------------------------------------------------\n" +
      entry;
  const std::string prelude = MathPreludeFor(kernel);
  return GeneratedHeader(Name(), what, knobs, abi) + "\n" + GeneratedIncludes() +
         "#include <vector>\n\n" + (prelude.empty() ? "" : prelude + "\n") + AbiHelpers() +
         "\n" + kernel;
}

}  // namespace kernelevolve::operators::templates
