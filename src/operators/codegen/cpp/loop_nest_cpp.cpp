#include "operators/codegen/cpp/loop_nest_cpp.h"

#include <fmt/format.h>

#include <unordered_map>

#include "core/error.h"
#include "operators/codegen/prim_spelling.h"
#include "operators/ir/contraction.h"
#include "operators/ir/loop_ir.h"
#include "operators/template/kernel_template.h"
#include "operators/template/math_prelude.h"

namespace kernelevolve::operators::codegen {
namespace {

using core::DType;
using ir::DefKind;
using ir::Expr;
using ir::ExprKind;
using ir::ExprNode;
using ir::ReduceOp;
using ir::ScanOp;
using ir::TensorDef;

/// Prints expression DAGs as `const T vN = ...;` statements.
class ExprPrinter {
 public:
  ExprPrinter(Language lang, const ir::TensorProgram& program, std::string& out)
      : lang_(lang), program_(program), out_(out) {}

  /// Emits the statements computing `e` at `indent`; returns its name or literal.
  std::string Print(const Expr& e, const std::string& indent) {
    if (auto it = names_.find(e.get()); it != names_.end()) return it->second;
    std::string text;
    switch (e->kind) {
      case ExprKind::kConst:
        return SpellConstant(lang_, *e);
      case ExprKind::kVar:
        return fmt::format("i{}", e->var);
      case ExprKind::kLoad: {
        const TensorDef& src = program_.defs.at(static_cast<size_t>(e->tensor));
        const std::string offset = Print(ir::FlatOffset(e->args, src.shape), indent);
        const std::string read = fmt::format("t{}[{}]", e->tensor, offset);
        if (e->mask) {
          const std::string mask = Print(e->mask, indent);
          text = fmt::format("{} ? {} : static_cast<{}>(0)", mask, read, SpellType(lang_, e->dtype));
        } else {
          text = read;
        }
        break;
      }
      case ExprKind::kOp: {
        std::vector<std::string> args;
        for (const Expr& a : e->args) args.push_back(Print(a, indent));
        const DType operand = e->op == ir::Prim::kWhere ? e->args[1]->dtype : e->args[0]->dtype;
        text = SpellPrim(lang_, SpellingPrim(*e), operand, e->dtype, args);
        break;
      }
    }
    const std::string name = fmt::format("v{}", next_++);
    out_ += fmt::format("{}const {} {} = {};\n", indent, SpellType(lang_, e->dtype), name, text);
    names_.emplace(e.get(), name);
    alive_.push_back(e);  // the map is keyed by address: keep the node alive
    return name;
  }

 private:
  Language lang_;
  const ir::TensorProgram& program_;
  std::string& out_;
  std::unordered_map<const ExprNode*, std::string> names_;
  std::vector<Expr> alive_;
  int next_ = 0;
};

std::string CType(DType d) { return SpellType(Language::kCppScalar, d); }

/// DLPack (code, bits) of a dtype, as C++ text.
std::string DlCode(DType d) {
  if (core::IsFloatingPoint(d)) return "kDLFloat";
  if (d == DType::kBool || d == DType::kUInt8) return "kDLUInt";
  return "kDLInt";
}
int DlBits(DType d) { return d == DType::kBool ? 8 : static_cast<int>(core::DTypeSize(d) * 8); }

/// `for` headers over dims `dims` of `shape` (var i<dim>), with the OpenMP pragma
/// over the first `collapse` of them when `parallel`.
std::string LoopHeaders(const std::vector<int64_t>& shape, const std::vector<int>& dims, bool parallel,
                        int collapse, const std::string& extra_pragma, std::string& indent) {
  std::string out;
  // One loop both threaded and vectorized takes one combined construct.
  const bool combined = parallel && dims.size() == 1 && extra_pragma == "#pragma omp simd";
  if (parallel && !dims.empty()) {
    out += fmt::format("{}#pragma omp parallel for {}{}schedule(static)\n", indent, combined ? "simd " : "",
                       collapse > 1 ? fmt::format("collapse({}) ", collapse) : "");
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k + 1 == dims.size() && !extra_pragma.empty() && !combined) out += indent + extra_pragma + "\n";
    out += fmt::format("{}for (int64_t i{} = 0; i{} < {}; ++i{}) {{\n", indent, dims[k], dims[k],
                       shape[static_cast<size_t>(dims[k])], dims[k]);
    indent += "  ";
  }
  return out;
}

std::string CloseLoops(size_t count, std::string& indent) {
  std::string out;
  for (size_t k = 0; k < count; ++k) {
    indent.resize(indent.size() - 2);
    out += indent + "}\n";
  }
  return out;
}

int CollapseFor(size_t outer_dims) { return static_cast<int>(std::max<size_t>(outer_dims, 1)); }

/// The accumulator type of a reduction or scan of `dtype`.
std::string AccType(DType dtype, bool is_sum_like, bool double_acc) {
  if (dtype == DType::kFloat32 && is_sum_like && double_acc) return "double";
  if (dtype == DType::kBool) return "bool";
  return CType(dtype);
}

std::string InitValue(ReduceOp op, DType value_dtype) {
  const bool fp = core::IsFloatingPoint(value_dtype);
  switch (op) {
    case ReduceOp::kSum: return "0";
    case ReduceOp::kProd: return "1";
    case ReduceOp::kMax:
    case ReduceOp::kArgMax:
      return fp ? "-INFINITY" : fmt::format("std::numeric_limits<{}>::lowest()", CType(value_dtype));
    case ReduceOp::kMin:
    case ReduceOp::kArgMin:
      return fp ? "INFINITY" : fmt::format("std::numeric_limits<{}>::max()", CType(value_dtype));
    case ReduceOp::kAny: return "false";
    case ReduceOp::kAll: return "true";
  }
  return "0";
}

class Emitter {
 public:
  Emitter(const ir::KernelPlan& plan, const LoopNestSchedule& s) : plan_(plan), s_(s) {}

  /// Whether Entry() printed a ke_gemm call.
  bool UsedGemm() const { return used_gemm_; }

  std::string Entry() {
    const auto& p = plan_.program;
    std::string out;
    out += "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
           "                                   DLTensor* outputs, int32_t num_outputs) {\n";
    // Inputs: the forward() arguments, then every state_dict tensor; the graph reads
    // some of them (a BatchNorm's num_batches_tracked never), by abi_index.
    int needed = 0;
    for (const TensorDef& d : p.defs) {
      if (d.kind == DefKind::kInput) needed = std::max(needed, d.abi_index + 1);
    }
    out += fmt::format("  if (num_inputs < {} || num_outputs != {}) return 1;\n", needed, p.outputs.size());
    for (const TensorDef& d : p.defs) {
      if (d.kind != DefKind::kInput) continue;
      out += fmt::format("  if (int rc = ke_check_as(inputs[{}], {}, {}, {})) return rc;\n", d.abi_index,
                         DlCode(d.dtype), DlBits(d.dtype), ir::Numel(d.shape));
    }
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      const TensorDef& d = p.defs[static_cast<size_t>(p.outputs[k])];
      out += fmt::format("  if (int rc = ke_check_as(outputs[{}], {}, {}, {})) return rc;\n", k, DlCode(d.dtype),
                         DlBits(d.dtype), ir::Numel(d.shape));
    }
    for (const TensorDef& d : p.defs) {
      if (d.kind == DefKind::kInput) {
        out += fmt::format("  const {0}* __restrict t{1} = static_cast<const {0}*>(ke_data(inputs[{2}]));\n",
                           CType(d.dtype), d.id, d.abi_index);
      } else if (plan_.output_slot[static_cast<size_t>(d.id)] >= 0) {
        out += fmt::format("  {0}* __restrict t{1} = static_cast<{0}*>(ke_data(outputs[{2}]));\n", CType(d.dtype),
                           d.id, plan_.output_slot[static_cast<size_t>(d.id)]);
      } else if (plan_.materialized[static_cast<size_t>(d.id)]) {
        out += fmt::format("  std::unique_ptr<{0}[]> t{1}_buffer(new {0}[{2}]);\n  {0}* __restrict t{1} = t{1}_buffer.get();\n",
                           CType(d.dtype), d.id, std::max<int64_t>(ir::Numel(d.shape), 1));
      }
    }
    for (int k : plan_.kernels) out += Kernel(p.defs[static_cast<size_t>(k)]);
    out += "  return 0;\n}\n";
    return out;
  }

 private:
  std::string Kernel(const TensorDef& d) {
    if (ir::Numel(d.shape) == 0) return "";
    std::string out = fmt::format("  // Kernel t{}: {} {}{}\n", d.id,
                                  d.kind == DefKind::kReduce ? "reduce" : (d.kind == DefKind::kScan ? "scan" : "element"),
                                  ir::ShapeText(d.shape), d.origin.empty() ? "" : ", from " + d.origin);
    out += "  {\n";
    std::string indent = "    ";
    switch (d.kind) {
      case DefKind::kCompute: out += Compute(d, indent); break;
      case DefKind::kReduce: {
        const auto contraction = s_.gemm ? ir::MatchContraction(plan_.program, d) : std::nullopt;
        if (contraction) {
          out += GemmCall(*contraction, d, indent);
        } else {
          out += Reduce(d, indent);
        }
        break;
      }
      case DefKind::kScan: out += Scan(d, indent); break;
      case DefKind::kInput: break;
    }
    out += "  }\n";
    return out;
  }

  std::string GemmCall(const ir::Contraction& c, const TensorDef& d, const std::string& indent) {
    used_gemm_ = true;
    return fmt::format("{}// main loop: packed GEMM, {} x {} x {}{}\n", indent, c.m, c.n, c.k,
                       c.batch.empty() ? "" : ", batch " + ir::ShapeText(c.batch)) +
           GemmCallCpp(c, d.id, s_.parallel, indent);
  }

  std::string Store(const TensorDef& d, const std::string& value) {
    return fmt::format("t{}[{}]", d.id, Flat(d)) + " = " + value;
  }

  /// The row-major offset of the loop indices in `d` (unit dims contribute nothing).
  std::string Flat(const TensorDef& d) {
    std::string flat;
    int64_t stride = 1;
    for (size_t k = d.shape.size(); k-- > 0;) {
      if (d.shape[k] != 1) {
        const std::string term = stride == 1 ? fmt::format("i{}", k) : fmt::format("i{} * {}", k, stride);
        flat = flat.empty() ? term : term + " + " + flat;
      }
      stride *= d.shape[k];
    }
    return flat.empty() ? "0" : flat;
  }

  /// Dims of `d` with more than one element (unit dims have i = 0).
  std::vector<int> LoopDims(const std::vector<int64_t>& shape, int skip = -1) {
    std::vector<int> dims;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (static_cast<int>(k) != skip && shape[k] != 1) dims.push_back(static_cast<int>(k));
    }
    return dims;
  }

  std::string UnitVars(const std::vector<int64_t>& shape, const std::string& indent, int first = 0) {
    std::string out;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 1) out += fmt::format("{}const int64_t i{} = 0;\n", indent, first + static_cast<int>(k));
    }
    return out;
  }

  Language Lang() const { return s_.vector_math ? Language::kCppVector : Language::kCppScalar; }

  std::string Compute(const TensorDef& d, std::string& indent) {
    std::string out = UnitVars(d.shape, indent);
    const auto dims = LoopDims(d.shape);
    const int collapse = CollapseFor(dims.size() > 1 ? dims.size() - 1 : dims.size());
    out += LoopHeaders(d.shape, dims, s_.parallel, collapse, s_.simd ? "#pragma omp simd" : "", indent);
    std::string body;
    ExprPrinter printer(Lang(), plan_.program, body);
    const std::string v = printer.Print(d.body, indent);
    out += body + indent + Store(d, v) + ";\n";
    out += CloseLoops(dims.size(), indent);
    return out;
  }

  std::string Reduce(const TensorDef& d, std::string& indent) {
    const size_t rank = d.shape.size();
    const DType vt = d.body->dtype;
    const bool sum_like = d.reduce == ReduceOp::kSum || d.reduce == ReduceOp::kProd;
    const bool arg = d.reduce == ReduceOp::kArgMax || d.reduce == ReduceOp::kArgMin;
    const std::string acc_t = arg ? CType(vt) : AccType(d.dtype, sum_like, s_.double_accumulator);
    std::string out = UnitVars(d.shape, indent);
    const auto dims = LoopDims(d.shape);
    // Few outputs and a sum / product: the threads share the reduced loops instead.
    const bool split_reduce = s_.parallel && sum_like && ir::Numel(d.shape) < 64;
    const int collapse = CollapseFor(dims.size());
    out += LoopHeaders(d.shape, dims, s_.parallel && !split_reduce, collapse, "", indent);
    out += fmt::format("{}{} acc = {};\n", indent, acc_t, InitValue(d.reduce, vt));
    if (arg) out += indent + "int64_t arg = 0, pos = 0;\n";
    std::vector<int64_t> ext_shape(rank, 1);
    ext_shape.insert(ext_shape.end(), d.reduce_extents.begin(), d.reduce_extents.end());
    std::vector<int> rdims;
    for (size_t k = 0; k < d.reduce_extents.size(); ++k) {
      if (d.reduce_extents[k] != 1) rdims.push_back(static_cast<int>(rank + k));
      else out += fmt::format("{}const int64_t i{} = 0;\n", indent, rank + k);
    }
    if (split_reduce && !rdims.empty()) {
      out += fmt::format("{}#pragma omp parallel for {}reduction({}:acc) schedule(static)\n", indent,
                         rdims.size() > 1 ? fmt::format("collapse({}) ", rdims.size()) : "",
                         d.reduce == ReduceOp::kSum ? "+" : "*");
    }
    out += LoopHeaders(ext_shape, rdims, false, 0, "", indent);
    std::string body;
    ExprPrinter printer(Lang(), plan_.program, body);
    const std::string v = printer.Print(d.body, indent);
    out += body;
    switch (d.reduce) {
      case ReduceOp::kSum: out += fmt::format("{}acc += {};\n", indent, v); break;
      case ReduceOp::kProd: out += fmt::format("{}acc *= {};\n", indent, v); break;
      case ReduceOp::kMax: out += fmt::format("{0}acc = ({1} > acc || {1} != {1}) && acc == acc ? {1} : acc;\n", indent, v); break;
      case ReduceOp::kMin: out += fmt::format("{0}acc = ({1} < acc || {1} != {1}) && acc == acc ? {1} : acc;\n", indent, v); break;
      case ReduceOp::kArgMax:
        out += fmt::format("{0}if (acc == acc && ({1} > acc || {1} != {1})) {{ acc = {1}; arg = pos; }}\n{0}++pos;\n", indent, v);
        break;
      case ReduceOp::kArgMin:
        out += fmt::format("{0}if (acc == acc && ({1} < acc || {1} != {1})) {{ acc = {1}; arg = pos; }}\n{0}++pos;\n", indent, v);
        break;
      case ReduceOp::kAny: out += fmt::format("{}acc = acc || {};\n", indent, v); break;
      case ReduceOp::kAll: out += fmt::format("{}acc = acc && {};\n", indent, v); break;
    }
    out += CloseLoops(rdims.size(), indent);
    out += indent + Store(d, arg ? "arg" : fmt::format("static_cast<{}>(acc)", CType(d.dtype))) + ";\n";
    out += CloseLoops(dims.size(), indent);
    return out;
  }

  std::string Scan(const TensorDef& d, std::string& indent) {
    const bool sum_like = d.scan == ScanOp::kSum || d.scan == ScanOp::kProd;
    const std::string acc_t = AccType(d.dtype, sum_like, s_.double_accumulator);
    std::string out = UnitVars(d.shape, indent);
    const auto dims = LoopDims(d.shape, d.scan_dim);
    out += LoopHeaders(d.shape, dims, s_.parallel, CollapseFor(dims.size()), "", indent);
    std::string init = "0";
    if (d.scan == ScanOp::kProd) init = "1";
    if (d.scan == ScanOp::kMax) init = InitValue(ReduceOp::kMax, d.dtype);
    if (d.scan == ScanOp::kMin) init = InitValue(ReduceOp::kMin, d.dtype);
    out += fmt::format("{}{} acc = {};\n", indent, acc_t, init);
    std::vector<int> sdim;
    if (d.shape[static_cast<size_t>(d.scan_dim)] != 1) sdim.push_back(d.scan_dim);
    out += LoopHeaders(d.shape, sdim, false, 0, "", indent);
    std::string body;
    ExprPrinter printer(Lang(), plan_.program, body);
    const std::string v = printer.Print(d.body, indent);
    out += body;
    switch (d.scan) {
      case ScanOp::kSum: out += fmt::format("{}acc += {};\n", indent, v); break;
      case ScanOp::kProd: out += fmt::format("{}acc *= {};\n", indent, v); break;
      case ScanOp::kMax: out += fmt::format("{0}acc = ({1} > acc || {1} != {1}) && acc == acc ? {1} : acc;\n", indent, v); break;
      case ScanOp::kMin: out += fmt::format("{0}acc = ({1} < acc || {1} != {1}) && acc == acc ? {1} : acc;\n", indent, v); break;
    }
    out += indent + Store(d, fmt::format("static_cast<{}>(acc)", CType(d.dtype))) + ";\n";
    out += CloseLoops(sdim.size(), indent);
    out += CloseLoops(dims.size(), indent);
    return out;
  }

  const ir::KernelPlan& plan_;
  LoopNestSchedule s_;
  bool used_gemm_ = false;  // a contraction was printed as ke_gemm (its helpers are needed)
};

const char* kLoopNestHelpers = R"CPP(static inline void* ke_data(const DLTensor& t) {
  return static_cast<char*>(t.data) + t.byte_offset;
}

// 0 when `t` has dtype (code, bits), `numel` elements, CPU memory and a dense
// row-major layout; else 2 (dtype, device or data), 3 (element count) or 4 (strides).
static inline int ke_check_as(const DLTensor& t, uint8_t code, uint8_t bits, int64_t numel) {
  if (t.dtype.code != code || t.dtype.bits != bits || t.dtype.lanes != 1) return 2;
  if (ke_numel(t) != numel) return 3;
  return ke_check_layout(t);
}
)CPP";

}  // namespace

std::string PrintLoopNestCpp(const ir::KernelPlan& plan, const LoopNestSchedule& schedule) {
  Emitter emitter(plan, schedule);
  const std::string entry = emitter.Entry();
  std::string out = templates::GeneratedIncludes();
  out += "#include <algorithm>\n#include <cstring>\n#include <limits>\n#include <memory>\n\n";
  out += templates::AbiHelpers() + "\n" + kLoopNestHelpers + "\n";
  if (emitter.UsedGemm()) out += GemmHelpersCpp(*schedule.gemm) + "\n";
  const std::string helpers = CppHelpersFor(entry);
  if (!helpers.empty()) out += helpers + "\n";
  if (schedule.vector_math) {
    const std::string prelude = templates::MathPreludeFor(entry);
    if (!prelude.empty()) out += prelude + "\n";
  }
  out += entry;
  return out;
}

}  // namespace kernelevolve::operators::codegen
