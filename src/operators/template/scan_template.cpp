#include "operators/template/scan_template.h"

#include <fmt/format.h>

#include <regex>

#include "operators/template/math_prelude.h"
#include "operators/template/scan_kernels.h"

namespace kernelevolve::operators::templates {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

bool SameMath(const PointwiseExpr& a, const PointwiseExpr& b) {
  if (a.statements.size() != b.statements.size()) return false;
  for (size_t k = 0; k < a.statements.size(); ++k) {
    if (a.statements[k].expr != b.statements[k].expr) return false;
  }
  return true;
}

bool HasMath(const ScanSpec& spec) {
  return !SameMath(spec.prologue_libm, spec.prologue_prelude) ||
         !SameMath(spec.epilogue_libm, spec.epilogue_prelude);
}

bool Rows(const ScanSpec& spec) { return spec.inner == 1; }

/// True when every statement reading `var` is +, -, * or / (spelled as C++ operators,
/// so a double operand widens the whole expression and it rounds once at the `float`
/// declaration). Other rules spell std::min/std::max and friends, which would not
/// accept a double next to a float literal.
bool OnlyArithmeticReads(const PointwiseExpr& expr, const std::string& var) {
  const std::regex token("\\b" + var + "\\b");
  for (const auto& st : expr.statements) {
    if (!std::regex_search(st.expr, token)) continue;
    const bool arithmetic = st.origin.rfind("aten.add.", 0) == 0 ||
                            st.origin.rfind("aten.sub.", 0) == 0 ||
                            st.origin.rfind("aten.mul.", 0) == 0 ||
                            st.origin.rfind("aten.div.Tensor(", 0) == 0;
    if (!arithmetic) return false;
  }
  return true;
}

/// `static inline float name(params) { statements; return result; }`. `wide_first`:
/// the first parameter (the scan element) is `ke_acc_t`, so that
/// `cumsum(x) - x` subtracts before rounding to float32 (the float32-rounded prefix
/// next to a large x loses the small exclusive prefix; the checker's 'large' edge
/// references are float64).
std::string ElementFunction(const std::string& comment, const std::string& name,
                            const PointwiseExpr& expr, const std::vector<bool>& is_bool,
                            bool wide_first = false) {
  std::vector<std::string> params;
  for (size_t k = 0; k < expr.input_vars.size(); ++k) {
    const char* type = is_bool[k] ? "bool " : (k == 0 && wide_first ? "ke_acc_t " : "float ");
    params.push_back(type + expr.input_vars[k]);
  }
  std::string out = "// " + comment + "\n";
  out += fmt::format("static inline float {}({}) {{\n", name, fmt::join(params, ", "));
  for (const auto& st : expr.statements) {
    out += "  // " + st.origin + "\n";
    out += fmt::format("  const {} {} = {};\n", st.is_bool ? "bool" : "float", st.var, st.expr);
  }
  return out + "  return " + expr.result_var + ";\n}\n";
}

constexpr const char* kBoolHelpers = R"BOOL(// Bool tensors travel as one byte per element (DLPack uint8 here; kDLBool = 6 in
// newer DLPack versions).
static inline const uint8_t* ke_byte_data(const DLTensor& t) {
  return reinterpret_cast<const uint8_t*>(static_cast<const char*>(t.data) + t.byte_offset);
}

// 0 when `t` is a dense row-major one-byte bool tensor in CPU memory, else 2 or 4.
static inline int ke_check_bool_tensor(const DLTensor& t) {
  const bool byte = t.dtype.bits == 8 && t.dtype.lanes == 1 &&
                    (t.dtype.code == kDLUInt || static_cast<int>(t.dtype.code) == 6);
  if (!byte) return 2;
  return ke_check_layout(t);
}
)BOOL";

KnobDim Dim(std::string name, std::vector<nlohmann::json> values, nlohmann::json safe,
            nlohmann::json fast, std::string phrase, std::string requires_name = "",
            nlohmann::json requires_value = nullptr) {
  nlohmann::json def = safe.is_null() ? values[values.size() / 2] : safe;
  return {std::move(name),          std::move(values), def, std::move(safe), std::move(fast),
          std::move(requires_name), requires_value,    std::move(phrase)};
}

}  // namespace

KnobSpace ScanKnobSpace(bool multithread, bool rows, bool has_math) {
  std::vector<KnobDim> dims;
  dims.push_back(Dim("accumulator", {"float64", "float32"}, "float64", "float32", "{} accumulation"));
  if (has_math) dims.push_back(Dim("math", {"libm", "vectorized"}, "libm", "vectorized", "{} math"));
  std::vector<nlohmann::json> threads = {"1"};
  if (multithread) threads.push_back("all");
  dims.push_back(Dim("threads", threads, "1", multithread ? nlohmann::json("all") : nullptr,
                     "threads={}"));
  if (rows) {
    dims.push_back(
        Dim("algorithm", {"sequential", "simd", "blocked"}, "sequential", "simd", "{} row scan"));
    dims.push_back(Dim("block", {1024, 8192, 65536}, nullptr, nullptr, "{}-element blocks",
                       "algorithm", "blocked"));
  } else {
    dims.push_back(Dim("loop_order", {"column", "row"}, "column", "row", "{} order"));
    dims.push_back(Dim("block_i", {64, 512, 4096}, nullptr, nullptr, "{}-column tiles", "loop_order", "row"));
  }
  return KnobSpace(std::move(dims));
}

ScanTemplate::ScanTemplate(ScanSpec spec, bool multithread)
    : spec_(std::move(spec)), space_(ScanKnobSpace(multithread, Rows(spec_), HasMath(spec_))) {}

std::vector<nlohmann::json> ScanTemplate::Drafts() const {
  using J = nlohmann::json;
  const J v = "vectorized";
  const std::vector<J> rows = {
      {{"accumulator", "float64"}, {"math", "libm"}, {"threads", "1"}, {"algorithm", "sequential"}},
      {{"accumulator", "float64"}, {"math", v}, {"threads", "all"}, {"algorithm", "simd"}},
      {{"accumulator", "float32"}, {"math", v}, {"threads", "all"}, {"algorithm", "simd"}},
      {{"accumulator", "float64"}, {"math", v}, {"threads", "all"}, {"algorithm", "blocked"}, {"block", 8192}},
      {{"accumulator", "float64"}, {"math", v}, {"threads", "1"}, {"algorithm", "simd"}},
      {{"accumulator", "float32"}, {"math", v}, {"threads", "all"}, {"algorithm", "blocked"}, {"block", 8192}},
      {{"accumulator", "float64"}, {"math", v}, {"threads", "all"}, {"algorithm", "blocked"}, {"block", 65536}},
      {{"accumulator", "float64"}, {"math", "libm"}, {"threads", "all"}, {"algorithm", "sequential"}},
  };
  const std::vector<J> columns = {
      {{"accumulator", "float64"}, {"math", "libm"}, {"threads", "1"}, {"loop_order", "column"}},
      {{"accumulator", "float64"}, {"math", v}, {"threads", "all"}, {"loop_order", "row"}, {"block_i", 512}},
      {{"accumulator", "float32"}, {"math", v}, {"threads", "all"}, {"loop_order", "row"}, {"block_i", 512}},
      {{"accumulator", "float64"}, {"math", v}, {"threads", "all"}, {"loop_order", "row"}, {"block_i", 4096}},
      {{"accumulator", "float64"}, {"math", v}, {"threads", "1"}, {"loop_order", "row"}, {"block_i", 512}},
      {{"accumulator", "float64"}, {"math", v}, {"threads", "all"}, {"loop_order", "row"}, {"block_i", 64}},
      {{"accumulator", "float64"}, {"math", "libm"}, {"threads", "all"}, {"loop_order", "column"}},
  };
  const bool multithread = space_.Find("threads")->values.size() > 1;
  std::vector<J> out;
  for (J knobs : Rows(spec_) ? rows : columns) {
    if (!multithread) knobs["threads"] = "1";
    if (space_.Find("math") == nullptr) knobs.erase("math");
    out.push_back(space_.Canonical(knobs));
  }
  return out;
}

std::string ScanTemplate::Summary(const nlohmann::json& knobs) const {
  return space_.Describe(space_.Canonical(knobs));
}

std::string ScanTemplate::ElementFunctions(bool prelude) const {
  const PointwiseExpr& pro = prelude ? spec_.prologue_prelude : spec_.prologue_libm;
  const PointwiseExpr& epi = prelude ? spec_.epilogue_prelude : spec_.epilogue_libm;
  std::vector<bool> is_bool;
  for (const auto& in : spec_.inputs) is_bool.push_back(in.is_bool);
  std::vector<bool> epi_bool = is_bool;
  epi_bool.insert(epi_bool.begin(), false);
  return ElementFunction("Prologue: the element fed to the scan.", "ke_prologue", pro, is_bool) +
         "\n" +
         ElementFunction("Epilogue: the output element from the scan element " +
                             epi.input_vars[0] + ".",
                         "ke_epilogue", epi, epi_bool,
                         OnlyArithmeticReads(epi, epi.input_vars[0]));
}

std::string ScanTemplate::EntryFunction(const std::string& dispatch) const {
  const size_t k = spec_.inputs.size();
  std::string out = fmt::format(
      "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
      "                                  DLTensor* outputs, int32_t num_outputs) {{\n"
      "  if (num_inputs != {} || num_outputs != 1) return 1;\n",
      k);
  for (size_t t = 0; t < k; ++t) {
    out += fmt::format("  if (const int rc = {}(inputs[{}])) return rc;\n",
                       spec_.inputs[t].is_bool ? "ke_check_bool_tensor" : "ke_check_tensor", t);
  }
  out += fmt::format(
      "  if (const int rc = ke_check_tensor(outputs[0])) return rc;\n"
      "  const DLTensor& y = outputs[0];\n"
      "  if (y.ndim != {0}) return 3;\n"
      "  const int64_t numel = ke_numel(y);\n"
      "  for (int32_t t = 0; t < num_inputs; ++t) {{\n"
      "    if (ke_numel(inputs[t]) != numel) return 3;\n"
      "  }}\n"
      "  if (numel == 0) return 0;\n"
      "  // Layout [outer, n, inner], scanning n = shape[{1}].\n"
      "  int64_t outer = 1;\n"
      "  int64_t inner = 1;\n"
      "  for (int32_t d = 0; d < {1}; ++d) outer *= y.shape[d];\n"
      "  for (int32_t d = {1} + 1; d < {0}; ++d) inner *= y.shape[d];\n"
      "  const int64_t n = {2};\n",
      spec_.rank, spec_.dim, spec_.rank == 0 ? "1" : fmt::format("y.shape[{}]", spec_.dim));
  for (size_t t = 0; t < k; ++t) {
    out += fmt::format("  const {}* in{} = {}(inputs[{}]);  // {}\n",
                       spec_.inputs[t].is_bool ? "uint8_t" : "float", t,
                       spec_.inputs[t].is_bool ? "ke_byte_data" : "ke_float_data", t,
                       spec_.inputs[t].node);
  }
  out += "  float* out = ke_float_data(outputs[0]);\n";
  return out + dispatch + "  return 0;\n}\n";
}

std::string ScanTemplate::Description(const nlohmann::json& knobs) const {
  const bool prelude = knobs.contains("math") && knobs.at("math") == "vectorized";
  const PointwiseExpr& pro = prelude ? spec_.prologue_prelude : spec_.prologue_libm;
  const PointwiseExpr& epi = prelude ? spec_.epilogue_prelude : spec_.epilogue_libm;
  std::string what = fmt::format(
      "{} {} along dim {} of float32 {} (captured as {}):\n"
      "  viewed as [outer={}, n={}, inner={}], scanning n{}.\n"
      "  s[j] = {} over k {} j of ke_prologue(inputs at k); out[j] = ke_epilogue(s[j], inputs "
      "at j)\n",
      spec_.reverse ? "Reverse" : "Inclusive", spec_.op == ScanOp::kSum ? "cumsum" : "cumprod",
      spec_.dim, ShapeText(spec_.shape), spec_.target, spec_.outer, spec_.n, spec_.inner,
      spec_.reverse ? " from n-1 down to 0 (flip, scan, flip back)" : "",
      spec_.op == ScanOp::kSum ? "sum" : "product", spec_.reverse ? ">=" : "<=");
  for (const auto& st : pro.statements) what += "  prologue " + st.var + " = " + st.origin + "\n";
  for (const auto& st : epi.statements) what += "  epilogue " + st.var + " = " + st.origin + "\n";
  return what + "Settings: " + space_.Describe(knobs) + ".";
}

std::string ScanTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  const bool prelude = knobs.contains("math") && knobs.at("math") == "vectorized";
  const bool threaded = knobs.at("threads") == "all";
  ScanCode code;
  code.combine = spec_.op == ScanOp::kSum ? "+" : "*";
  code.identity = spec_.op == ScanOp::kSum ? "0" : "1";
  code.reverse = spec_.reverse;
  std::vector<std::string> params, args, loads;
  for (size_t t = 0; t < spec_.inputs.size(); ++t) {
    const bool b = spec_.inputs[t].is_bool;
    params.push_back(fmt::format("const {}* __restrict in{}", b ? "uint8_t" : "float", t));
    args.push_back(fmt::format("in{}", t));
    loads.push_back(b ? fmt::format("(in{}[{{0}}] != 0)", t) : fmt::format("in{}[{{0}}]", t));
  }
  code.params = fmt::format("{}, float* __restrict out", fmt::join(params, ", "));
  code.args = fmt::format("{}, out", fmt::join(args, ", "));
  auto load_list = [loads](const std::string& i) {
    std::vector<std::string> parts;
    for (const auto& l : loads) parts.push_back(fmt::format(fmt::runtime(l), i));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  code.pro = [load_list](const std::string& i) { return "ke_prologue(" + load_list(i) + ")"; };
  code.epi = [load_list](const std::string& s, const std::string& i) {
    return "ke_epilogue(" + s + ", " + load_list(i) + ")";
  };
  const ScanLoops loops =
      Rows(spec_)
          ? RowScanLoops(code, knobs.at("algorithm").get<std::string>(),
                         knobs.contains("block") ? knobs.at("block").get<int64_t>() : 0, threaded)
          : ColumnScanLoops(code, knobs.at("loop_order").get<std::string>(),
                            knobs.contains("block_i") ? knobs.at("block_i").get<int64_t>() : 0, threaded);
  const std::string kernel =
      "// ---- kernel --------------------------------------------------------------------\n" +
      fmt::format("typedef {} ke_acc_t;  // accumulator type (knob accumulator)\n\n",
                  knobs.at("accumulator") == "float64" ? "double" : "float") +
      ElementFunctions(prelude) + "\n" + loops.functions + "\n" + EntryFunction(loops.dispatch);
  std::string abi;
  for (size_t t = 0; t < spec_.inputs.size(); ++t) {
    abi += fmt::format("//   inputs[{}] = {} ({} {})\n", t, spec_.inputs[t].node,
                       spec_.inputs[t].is_bool ? "bool, one byte per element," : "float32",
                       ShapeText(spec_.shape));
  }
  abi += fmt::format("//   outputs[0] = result (float32 {}); any shape of rank {} works.\n",
                     ShapeText(spec_.shape), spec_.rank);
  bool any_bool = false;
  for (const auto& in : spec_.inputs) any_bool = any_bool || in.is_bool;
  const std::string math = MathPreludeFor(kernel);
  return GeneratedHeader(Name(), Description(knobs), knobs, abi) + "\n" + GeneratedIncludes() +
         "\n" + (math.empty() ? "" : math + "\n") + AbiHelpers() + "\n" +
         (any_bool ? std::string(kBoolHelpers) + "\n" : "") + kernel;
}

std::optional<TemplateMatch> MatchScanTemplate(const core::Problem& problem, int threads) {
  bool has_scan = false;
  for (const core::OpNode* call : problem.graph.Calls()) {
    has_scan = has_scan || IsScanFamilyTarget(call->target);
  }
  if (!has_scan) return std::nullopt;
  ScanMatch match = MatchScan(problem.graph);
  if (!match.spec) return TemplateMatch{nullptr, match.unsupported};
  return TemplateMatch{std::make_unique<ScanTemplate>(std::move(*match.spec), threads > 1), ""};
}

}  // namespace kernelevolve::operators::templates
