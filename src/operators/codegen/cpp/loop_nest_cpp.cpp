#include "operators/codegen/cpp/loop_nest_cpp.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/error.h"
#include "operators/codegen/cpp/conv_cpp.h"
#include "operators/codegen/loop_ir_names.h"
#include "operators/codegen/prim_spelling.h"
#include "operators/ir/contraction.h"
#include "operators/ir/convolution.h"
#include "operators/ir/epilogue_fusion.h"
#include "operators/ir/index_simplify.h"
#include "operators/ir/interior_split.h"
#include "operators/ir/loop_ir.h"
#include "operators/template/kernel_template.h"
#include "operators/template/math_prelude.h"

namespace kernelevolve::operators::codegen {
namespace {

using namespace loop_ir_names;  // NOLINT(google-build-using-namespace): DType, Expr, TensorDef, ...

/// The C++ name of var number `var` (codegen::SpellVar).
std::string VarName(int var) { return SpellVar(Language::kCppScalar, var); }

/// A size expression as C++ text (codegen::SpellSize).
std::string SizeText(const Expr& e) { return SpellSize(Language::kCppScalar, e); }

/// Prints expression DAGs as `const T vN = ...;` statements.
class ExprPrinter {
 public:
  ExprPrinter(Language lang, const ir::TensorProgram& program, std::string& out)
      : lang_(lang), program_(program), out_(out) {}

  /// Reads of `tensor` at the loop's own indices (ReadsOwnElement) print as `name`:
  /// the value a fused epilogue receives from its producer.
  void Replace(int tensor, std::string name) {
    replaced_tensor_ = tensor;
    replaced_name_ = std::move(name);
  }

  /// Unmasked reads of `tensor` at the loop's own element (ir::ReadsOwnElement over
  /// `own_shape`) print as t<tensor>[offset], where `offset` names that flat position
  /// already computed: a convolution epilogue has it as image, channel and column
  /// without the per-dim division and remainder of the column that the indices cost.
  void ReadOwnElementAt(int tensor, std::vector<int64_t> own_shape, std::string offset) {
    own_shape_ = std::move(own_shape);
    own_offset_[tensor] = std::move(offset);
  }

  /// Emits the statements computing `e` at `indent`; returns its name or literal.
  std::string Print(const Expr& e, const std::string& indent) {
    if (auto it = names_.find(e.get()); it != names_.end()) return it->second;
    std::string text;
    switch (e->kind) {
      case ExprKind::kConst:
        return SpellConstant(lang_, *e);
      case ExprKind::kVar:
        return VarName(e->var);
      case ExprKind::kLoad: {
        if (e->tensor == replaced_tensor_) return replaced_name_;
        const TensorDef& src = program_.defs.at(static_cast<size_t>(e->tensor));
        if (auto it = own_offset_.find(e->tensor);
            it != own_offset_.end() && src.symbolic_shape.empty() && ir::ReadsOwnElement(*e, src.shape, own_shape_)) {
          text = fmt::format("t{}[{}]", e->tensor, it->second);
          break;
        }
        const std::string offset = Print(ir::FlatOffset(e->args, ir::Extents(src)), indent);
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
  int replaced_tensor_ = -1;
  std::string replaced_name_;
  std::vector<int64_t> own_shape_;
  std::unordered_map<int, std::string> own_offset_;
};

std::string CType(DType d) { return SpellType(Language::kCppScalar, d); }

/// DLPack (code, bits) of a dtype, as C++ text.
std::string DlCode(DType d) {
  if (d == DType::kBFloat16) return "kDLBfloat";
  if (core::IsFloatingPoint(d)) return "kDLFloat";
  if (d == DType::kBool || d == DType::kUInt8) return "kDLUInt";
  return "kDLInt";
}
int DlBits(DType d) { return d == DType::kBool ? 8 : static_cast<int>(core::DTypeSize(d) * 8); }

/// `for` headers over dims `dims` of a loop nest whose dim k runs to `bounds[k]` (C++
/// text; var i<dim>), with the OpenMP pragma over the first `collapse` of them when `parallel`.
std::string LoopHeaders(const std::vector<std::string>& bounds, const std::vector<int>& dims, bool parallel,
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
                       bounds[static_cast<size_t>(dims[k])], dims[k]);
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

class Emitter {
 public:
  Emitter(const ir::KernelPlan& plan, const LoopNestSchedule& s) : plan_(plan), s_(s) {
    // Sizes read at run time: plain loops only (the tiled main loops and the row-blocked
    // reductions are printed for fixed sizes).
    if (!plan_.program.symbols.empty()) {
      s_.gemm.reset();
      s_.reduce_outer = false;
    }
    PlanEpilogues();
  }

  /// Whether Entry() printed a ke_gemm call.
  bool UsedGemm() const { return used_gemm_; }
  /// Whether Entry() printed a convolution's implicit GEMM.
  bool UsedConv() const { return used_conv_; }

  std::string Entry(const std::string& name) {
    const auto& p = plan_.program;
    std::string out;
    if (name == "kernelevolve_entry") {
      out += "extern \"C\" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,\n"
             "                                   DLTensor* outputs, int32_t num_outputs) {\n";
    } else {
      out += fmt::format("static int {}(const DLTensor* inputs, int32_t num_inputs, DLTensor* outputs,\n"
                         "    int32_t num_outputs) {{\n", name);
    }
    // Inputs: the forward() arguments, then every state_dict tensor; the graph reads
    // some of them (a BatchNorm's num_batches_tracked never), by abi_index.
    int needed = 0;
    for (const TensorDef& d : p.defs) {
      if (d.kind == DefKind::kInput) needed = std::max(needed, d.abi_index + 1);
    }
    out += fmt::format("  if (num_inputs < {} || num_outputs != {}) return 1;\n", needed, p.outputs.size());
    // Sizes read from the inputs at run time (the rest of the program is written in them).
    for (size_t k = 0; k < p.symbols.size(); ++k) {
      const ir::SizeSymbol& sym = p.symbols[k];
      size_t rank = 0;
      for (const TensorDef& d : p.defs) {
        if (d.kind == DefKind::kInput && d.abi_index == sym.abi_index) rank = d.shape.size();
      }
      out += fmt::format("  if (inputs[{0}].ndim != {1}) return 2;\n  const int64_t ke_s{2} = inputs[{0}].shape[{3}];\n",
                         sym.abi_index, rank, k, sym.dim);
      // Only the sizes the input sets showed: outside them the lowering's choices may not hold.
      out += fmt::format("  if (ke_s{0} < {1} || ke_s{0} > {2}) return 3;\n", k, sym.min_value, sym.max_value);
    }
    for (const TensorDef& d : p.defs) {
      if (d.kind != DefKind::kInput) continue;
      out += fmt::format("  if (int rc = ke_check_as(inputs[{}], {}, {}, {})) return rc;\n", d.abi_index,
                         DlCode(d.dtype), DlBits(d.dtype), NumelText(d));
    }
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      const TensorDef& d = p.defs[static_cast<size_t>(p.outputs[k])];
      out += fmt::format("  if (int rc = ke_check_as(outputs[{}], {}, {}, {})) return rc;\n", k, DlCode(d.dtype),
                         DlBits(d.dtype), NumelText(d));
    }
    for (const TensorDef& d : p.defs) {
      if (d.kind == DefKind::kInput) {
        out += fmt::format("  const {0}* __restrict t{1} = static_cast<const {0}*>(ke_data(inputs[{2}]));\n",
                           CType(d.dtype), d.id, d.abi_index);
      } else if (plan_.output_slot[static_cast<size_t>(d.id)] >= 0) {
        out += fmt::format("  {0}* __restrict t{1} = static_cast<{0}*>(ke_data(outputs[{2}]));\n", CType(d.dtype),
                           d.id, plan_.output_slot[static_cast<size_t>(d.id)]);
      } else if (plan_.materialized[static_cast<size_t>(d.id)] && epilogue_of_.count(d.id) == 0) {
        const std::string size = d.symbolic_shape.empty() ? std::to_string(std::max<int64_t>(ir::Numel(d.shape), 1))
                                                          : fmt::format("std::max<int64_t>({}, 1)", NumelText(d));
        out += fmt::format("  std::unique_ptr<{0}[]> t{1}_buffer(new {0}[{2}]);\n  {0}* __restrict t{1} = t{1}_buffer.get();\n",
                           CType(d.dtype), d.id, size);
      }
    }
    for (int k : plan_.kernels) out += Kernel(p.defs[static_cast<size_t>(k)]);
    out += "  return 0;\n}\n";
    return out;
  }

 private:
  /// The heavy kernels (matrix products other than matrix-vector ones, and
  /// convolutions, under main_loop = tiled) whose epilogue (ir/epilogue_fusion.h)
  /// is applied as the micro-tiles are stored: the product needs no buffer.
  void PlanEpilogues() {
    for (auto& [heavy, e] : PlanCppMainLoopEpilogues(plan_, s_)) {
      epilogue_of_[heavy] = e.epilogue;
      fused_[e.epilogue] = heavy;
      epilogue_body_[heavy] = e.body;
    }
  }

  /// The body printer of the epilogue lambda fused into heavy kernel `heavy`, or null.
  /// With `own_flat_index` (a convolution's lambda, which defines `ke_own`: conv_cpp.h),
  /// tensors read at the element's own position are read at ke_own.
  std::function<std::string(const std::string&)> Epilogue(int heavy, bool own_flat_index = false) {
    auto it = epilogue_of_.find(heavy);
    if (it == epilogue_of_.end()) return nullptr;
    const Expr& epilogue = epilogue_body_.at(heavy);
    const std::vector<int64_t>& shape = plan_.program.defs[static_cast<size_t>(heavy)].shape;
    return [this, &epilogue, heavy, &shape, own_flat_index](const std::string& indent) {
      std::string body;
      ExprPrinter printer(Lang(), plan_.program, body);
      printer.Replace(heavy, "ke_acc");
      if (own_flat_index) {
        ir::VisitPostOrder(epilogue, [&](const ExprNode& n) {
          if (n.kind == ExprKind::kLoad && n.tensor != heavy) printer.ReadOwnElementAt(n.tensor, shape, "ke_own");
        });
      }
      const std::string v = printer.Print(epilogue, indent);
      return body + fmt::format("{}return static_cast<float>({});\n", indent, v);
    };
  }

  /// Whether `e` reads t<tensor> other than through the value branch of the where node
  /// `w` (its condition and other branch count).
  static bool ReadsBesides(const Expr& e, const ExprNode* w, int tensor) {
    std::unordered_map<const ExprNode*, bool> memo;
    std::function<bool(const Expr&)> reads = [&](const Expr& x) -> bool {
      if (!x) return false;
      if (auto it = memo.find(x.get()); it != memo.end()) return it->second;
      bool r = x->kind == ExprKind::kLoad && x->tensor == tensor;
      if (x.get() == w) {
        r = reads(x->args[0]) || reads(x->args[2]);
      } else {
        for (const Expr& a : x->args) r = r || reads(a);
        r = r || reads(x->mask);
      }
      memo.emplace(x.get(), r);
      return r;
    };
    return reads(e);
  }

  /// Where the epilogue fused into product `heavy` (rank r) reads the product: for each
  /// where(cond, value, other) through whose value branch alone the epilogue reads it
  /// (tril, triu, a band of both, then any scale) and whose `cond` is a conjunction of
  /// affine bounds in the row and column indices only (tril: i1 <= i0), those bounds,
  /// all of them together; none: every tile is computed. Outside any one such `cond`
  /// the epilogue's value does not depend on the product.
  std::vector<GemmLiveBound> LiveBounds(int heavy, size_t rank) {
    auto it = epilogue_body_.find(heavy);
    if (it == epilogue_body_.end() || rank < 2) return {};
    const Expr& e = it->second;
    const int row = static_cast<int>(rank) - 2, col = row + 1;
    std::vector<GemmLiveBound> out;
    ir::VisitPostOrder(e, [&](const ExprNode& w) {
      if (w.kind != ExprKind::kOp || w.op != ir::Prim::kWhere || ReadsBesides(e, &w, heavy)) return;
      const auto bounds = ir::ConjunctionBounds(w.args[0]);
      if (!bounds) return;
      std::vector<GemmLiveBound> found;
      for (const ir::Affine& b : *bounds) {
        for (size_t v = 0; v < b.coeff.size(); ++v) {
          if (b.coeff[v] != 0 && static_cast<int>(v) != row && static_cast<int>(v) != col) return;
        }
        found.push_back({b.Coeff(row), b.Coeff(col), b.constant});
      }
      out.insert(out.end(), found.begin(), found.end());
    });
    return out;
  }

  std::string Kernel(const TensorDef& d) {
    if (d.symbolic_shape.empty() && ir::Numel(d.shape) == 0) return "";
    if (auto it = fused_.find(d.id); it != fused_.end()) {
      return fmt::format("  // Kernel t{}: {} {}: the epilogue of t{}'s main loop\n", d.id, "element",
                         ir::ShapeText(d.shape), it->second);
    }
    std::string out = fmt::format("  // Kernel t{}: {} {}{}\n", d.id,
                                  d.kind == DefKind::kReduce ? "reduce" : (d.kind == DefKind::kScan ? "scan" : "element"),
                                  ir::ShapeText(d.shape), d.origin.empty() ? "" : ", from " + d.origin);
    out += "  {\n";
    std::string indent = "    ";
    // A kernel of few iterations (a layer norm's [rows, 1] mean and rstd) runs on the
    // calling thread: forking the team costs more than it saves, and on a machine whose
    // cores are busy each parallel region waits for a descheduled thread.
    const bool parallel = s_.parallel;
    if (d.symbolic_shape.empty() && ir::Iterations(d) < kMinParallelIterations) s_.parallel = false;
    switch (d.kind) {
      case DefKind::kCompute: out += Compute(d, indent); break;
      case DefKind::kReduce: {
        auto contraction = s_.gemm ? ir::MatchContraction(plan_.program, d) : std::nullopt;
        const auto conv = s_.gemm && !contraction ? ir::MatchConvolution(plan_.program, d) : std::nullopt;
        if (contraction && !GemmPays(*contraction)) contraction.reset();
        if (contraction) {
          out += GemmCall(*contraction, d, indent);
        } else if (conv) {
          out += ConvCall(*conv, d, indent);
        } else {
          out += Reduce(d, indent);
        }
        break;
      }
      case DefKind::kScan: out += Scan(d, indent); break;
      case DefKind::kInput: break;
    }
    s_.parallel = parallel;
    out += "  }\n";
    return out;
  }

  /// The buffer a heavy kernel writes: its epilogue's when it has one.
  int Target(const TensorDef& d) const {
    auto it = epilogue_of_.find(d.id);
    return it == epilogue_of_.end() ? d.id : it->second;
  }

  std::string GemmCall(const ir::Contraction& c, const TensorDef& d, const std::string& indent) {
    used_gemm_ = true;
    return fmt::format("{}// main loop: packed GEMM, {} x {} x {}{}{}\n", indent, c.m, c.n, c.k,
                       c.batch.empty() ? "" : ", batch " + ir::ShapeText(c.batch),
                       Target(d) != d.id ? fmt::format(", epilogue t{} fused", Target(d)) : "") +
           GemmCallCpp(c, Target(d), s_.parallel, indent, Epilogue(d.id), kMinParallelBatches,
                       LiveBounds(d.id, d.shape.size()));
  }

  std::string ConvCall(const ir::Convolution& c, const TensorDef& d, const std::string& indent) {
    used_gemm_ = used_conv_ = true;
    const std::string fused = Target(d) != d.id ? fmt::format(", epilogue t{} fused", Target(d)) : "";
    if (ConvRunsDirect(c)) {
      return fmt::format("{}// main loop: depthwise convolution, direct form, {} x {} channels{}\n", indent, c.images,
                         c.cout, fused) +
             ConvCallCpp(c, Target(d), s_.parallel, indent, Epilogue(d.id, /*own_flat_index=*/true));
    }
    return fmt::format("{}// main loop: convolution as implicit GEMM, {} x {} x {} per (image, group), {} x {}{}\n",
                       indent, c.CoutPerGroup(), c.OutPositions(), c.Depth(), c.images, c.groups, fused) +
           ConvCallCpp(c, Target(d), s_.parallel, indent, Epilogue(d.id, /*own_flat_index=*/true));
  }

  std::string Store(const TensorDef& d, const std::string& value) {
    return fmt::format("t{}[{}]", d.id, Flat(d)) + " = " + value;
  }

  /// The row-major offset of the loop indices in `d` (unit dims contribute nothing).
  std::string Flat(const TensorDef& d) {
    std::string flat;
    if (!d.symbolic_shape.empty()) {
      std::string stride;  // empty: 1
      for (size_t k = d.shape.size(); k-- > 0;) {
        if (!IsUnit(d.symbolic_shape[k])) {
          const std::string term = stride.empty() ? fmt::format("i{}", k) : fmt::format("i{} * {}", k, stride);
          flat = flat.empty() ? term : term + " + " + flat;
        }
        const std::string extent = SizeText(d.symbolic_shape[k]);
        stride = stride.empty() ? extent : stride + " * " + extent;
      }
      return flat.empty() ? "0" : flat;
    }
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

  /// A size that is the constant 1 (a size read at run time never counts as one).
  static bool IsUnit(const Expr& e) {
    int64_t v = 0;
    return ir::IsIntConst(e, &v) && v == 1;
  }

  /// `d`'s sizes for the unit-dim tests below: a size read at run time as -1 (never 1).
  static std::vector<int64_t> UnitHint(const std::vector<int64_t>& sizes, const std::vector<Expr>& symbolic) {
    std::vector<int64_t> out = sizes;
    for (size_t k = 0; k < symbolic.size(); ++k) {
      if (!ir::IsIntConst(symbolic[k], nullptr)) out[k] = -1;
    }
    return out;
  }
  static std::vector<int64_t> ShapeHint(const TensorDef& d) { return UnitHint(d.shape, d.symbolic_shape); }
  static std::vector<int64_t> ReduceHint(const TensorDef& d) {
    return UnitHint(d.reduce_extents, d.symbolic_reduce_extents);
  }

  /// Loop bounds (C++ text) of `d`'s dims; with `reduced`, rank "1"s then its reduced extents.
  static std::vector<std::string> Bounds(const TensorDef& d, bool reduced = false) {
    std::vector<std::string> out;
    if (reduced) out.assign(d.shape.size(), "1");
    for (const Expr& e : reduced ? ir::ReduceExtents(d) : ir::Extents(d)) out.push_back(SizeText(e));
    return out;
  }

  /// The element count of `d` as C++ text.
  static std::string NumelText(const TensorDef& d) {
    if (d.symbolic_shape.empty()) return std::to_string(ir::Numel(d.shape));
    std::vector<std::string> parts;
    for (const Expr& e : d.symbolic_shape) parts.push_back(SizeText(e));
    return parts.empty() ? "1" : fmt::format("{}", fmt::join(parts, " * "));
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
    std::string out = UnitVars(ShapeHint(d), indent);
    const auto dims = LoopDims(ShapeHint(d));
    const int collapse = CollapseFor(dims.size() > 1 ? dims.size() - 1 : dims.size());
    out += LoopHeaders(Bounds(d), dims, s_.parallel, collapse, s_.simd ? "#pragma omp simd" : "", indent);
    std::string body;
    ExprPrinter printer(Lang(), plan_.program, body);
    const std::string v = printer.Print(ir::SimplifiedBody(d), indent);
    out += body + indent + Store(d, v) + ";\n";
    out += CloseLoops(dims.size(), indent);
    return out;
  }

  std::string Reduce(const TensorDef& d, std::string& indent) {
    // (Few outputs of a sum under threads: the threads share its reduced loops instead.)
    const bool few_sums = s_.parallel && (d.reduce == ReduceOp::kSum || d.reduce == ReduceOp::kProd) &&
                          ir::Numel(d.shape) < 64;
    const bool vector_reduction = s_.simd && !few_sums && InnerReductionVectorizes(d);
    if (s_.reduce_outer && ReduceLoopApplies(d) && !few_sums && !vector_reduction) {
      return ReduceRowBlocked(d, indent);
    }
    const size_t rank = d.shape.size();
    const DType vt = d.body->dtype;
    const bool sum_like = d.reduce == ReduceOp::kSum || d.reduce == ReduceOp::kProd;
    const bool arg = ir::IsArgReduce(d.reduce);
    const std::string acc_t = arg ? CType(vt) : AccType(d.dtype, sum_like, s_.double_accumulator);
    std::string out = UnitVars(ShapeHint(d), indent);
    const auto dims = LoopDims(ShapeHint(d));
    // Few outputs and a sum / product: the threads share the reduced loops instead.
    const bool split_reduce = s_.parallel && sum_like && ir::Numel(d.shape) < 64;
    const int collapse = CollapseFor(dims.size());
    out += LoopHeaders(Bounds(d), dims, s_.parallel && !split_reduce, collapse, "", indent);
    out += fmt::format("{}{} acc = {};\n", indent, acc_t,
                       SpellReduceIdentity(Language::kCppScalar, d.reduce, vt));
    if (arg) out += indent + "int64_t arg = 0, pos = 0;\n";
    const auto reduce_hint = ReduceHint(d);
    std::vector<int> rdims;
    for (size_t k = 0; k < reduce_hint.size(); ++k) {
      if (reduce_hint[k] != 1) rdims.push_back(static_cast<int>(rank + k));
      else out += fmt::format("{}const int64_t i{} = 0;\n", indent, rank + k);
    }
    if (split_reduce && !rdims.empty()) {
      out += fmt::format("{}#pragma omp parallel for {}reduction({}:acc) schedule(static)\n", indent,
                         rdims.size() > 1 ? fmt::format("collapse({}) ", rdims.size()) : "",
                         d.reduce == ReduceOp::kSum ? "+" : "*");
    }
    const std::string simd_reduction =
        vector_reduction && !split_reduce
            ? fmt::format("#pragma omp simd reduction({}:acc)", d.reduce == ReduceOp::kSum ? "+" : "*")
            : "";
    out += LoopHeaders(Bounds(d, /*reduced=*/true), rdims, false, 0, simd_reduction, indent);
    std::string body;
    ExprPrinter printer(Lang(), plan_.program, body);
    const std::string v = printer.Print(ir::SimplifiedBody(d), indent);
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
      case ReduceOp::kArgMaxLastNaN:
        out += fmt::format("{0}if ({1} > acc || {1} != {1}) {{ acc = {1}; arg = pos; }}\n{0}++pos;\n", indent, v);
        break;
      case ReduceOp::kAny: out += fmt::format("{}acc = acc || {};\n", indent, v); break;
      case ReduceOp::kAll: out += fmt::format("{}acc = acc && {};\n", indent, v); break;
    }
    out += CloseLoops(rdims.size(), indent);
    out += indent + Store(d, arg ? "arg" : fmt::format("static_cast<{}>(acc)", CType(d.dtype))) + ";\n";
    out += CloseLoops(dims.size(), indent);
    return out;
  }

  /// acc[ke_j] (and arg[ke_j]) updated with the value `v` of the block's reduction.
  static std::string AccumulateBlock(const TensorDef& d, const std::string& v, const std::string& indent) {
    const std::string a = "acc[ke_j]";
    switch (d.reduce) {
      case ReduceOp::kSum: return fmt::format("{}{} += {};\n", indent, a, v);
      case ReduceOp::kProd: return fmt::format("{}{} *= {};\n", indent, a, v);
      case ReduceOp::kMax: return fmt::format("{0}{2} = ({1} > {2} || {1} != {1}) && {2} == {2} ? {1} : {2};\n", indent, v, a);
      case ReduceOp::kMin: return fmt::format("{0}{2} = ({1} < {2} || {1} != {1}) && {2} == {2} ? {1} : {2};\n", indent, v, a);
      case ReduceOp::kArgMax:
      case ReduceOp::kArgMin: {
        const char* cmp = d.reduce == ReduceOp::kArgMax ? ">" : "<";
        return fmt::format("{0}const bool take = {2} == {2} && ({1} {3} {2} || {1} != {1});\n", indent, v, a, cmp) +
               fmt::format("{0}{2} = take ? {1} : {2};\n{0}arg[ke_j] = take ? pos : arg[ke_j];\n", indent, v, a);
      }
      case ReduceOp::kArgMaxLastNaN:
        return fmt::format("{0}const bool take = {1} > {2} || {1} != {1};\n", indent, v, a) +
               fmt::format("{0}{2} = take ? {1} : {2};\n{0}arg[ke_j] = take ? pos : arg[ke_j];\n", indent, v, a);
      case ReduceOp::kAny: return fmt::format("{}{} = {} || {};\n", indent, a, a, v);
      case ReduceOp::kAll: return fmt::format("{}{} = {} && {};\n", indent, a, a, v);
    }
    return "";
  }

  /// `ke_lo` and `ke_hi`: the block positions ke_j in [0, ke_n) where every bound of
  /// `split` holds (i{last} = ke_j0 + ke_j, the other indices fixed by the loops
  /// around): c ke_j + R >= 0 gives ke_j >= ceil(-R / c) for c > 0 and
  /// ke_j <= floor(R / -c) for c < 0; a bound without i{last} empties the interior
  /// when it fails. ke_lo <= ke_hi, both in [0, ke_n]. ke_floor_div is the floor-division
  /// helper of the primitive table (CppHelpersFor adds it to the kernel).
  static std::string InteriorBounds(const ir::InteriorSplit& split, int last, const std::string& indent) {
    std::string out = indent + "int64_t ke_lo = 0, ke_hi = ke_n;\n";
    for (const ir::MaskBound& b : split.bounds) {
      const int64_t c = b.form.Coeff(last);
      std::string rest = std::to_string(b.form.constant);
      for (size_t v = 0; v < b.form.coeff.size(); ++v) {
        const int64_t k = b.form.coeff[v];
        if (static_cast<int>(v) != last && k != 0) rest += fmt::format(" + ({}) * i{}", k, v);
      }
      if (c == 0) {
        out += fmt::format("{}if ({} < 0) ke_hi = 0;\n", indent, rest);
        continue;
      }
      const std::string r = fmt::format("({}) * ke_j0 + {}", c, rest);
      out += c > 0 ? fmt::format("{}ke_lo = std::max<int64_t>(ke_lo, -ke_floor_div({}, INT64_C({})));\n", indent, r, c)
                   : fmt::format("{}ke_hi = std::min<int64_t>(ke_hi, ke_floor_div({}, INT64_C({})) + 1);\n", indent, r, -c);
    }
    return out + indent + "if (ke_lo > ke_n) ke_lo = ke_n;\n" + indent + "if (ke_hi < ke_lo) ke_hi = ke_lo;\n";
  }

  /// A sum or product over at least kMinVectorReduction values of its innermost reduced
  /// index whose every load reads that index with stride 0 or 1, one at least with 1 (a
  /// layer norm's or a softmax's row): its inner form vectorizes as an `omp simd
  /// reduction` (reassociated: partial sums per lane, added at the end; the float32 or
  /// double accumulator still decides the precision), where blocking rows would read
  /// them a row apart. The row-blocked form stays for windows (pooling) and sums over
  /// leading dims.
  bool InnerReductionVectorizes(const TensorDef& d) const {
    constexpr int64_t kMinVectorReduction = 16;  // two AVX2 or one AVX-512 vector of floats
    if (!d.symbolic_shape.empty() || !d.symbolic_reduce_extents.empty() || d.reduce_extents.empty()) return false;
    if ((d.reduce != ReduceOp::kSum && d.reduce != ReduceOp::kProd) || d.reduce_extents.back() < kMinVectorReduction) {
      return false;
    }
    std::vector<int64_t> extents = d.shape;
    extents.insert(extents.end(), d.reduce_extents.begin(), d.reduce_extents.end());
    const int innermost = static_cast<int>(extents.size()) - 1;
    bool ok = true, unit = false;
    ir::VisitPostOrder(ir::SimplifiedBody(d), [&](const ExprNode& n) {
      if (n.kind != ExprKind::kLoad) return;
      const auto offset =
          ir::AffineOf(ir::FlatOffset(n.args, plan_.program.defs[static_cast<size_t>(n.tensor)].shape), &extents);
      const int64_t stride = offset ? offset->Coeff(innermost) : -1;
      unit = unit || stride == 1;
      ok = ok && (stride == 0 || stride == 1);
    });
    return ok && unit;
  }

  /// reduce_loop = "outer": per block of up to kRowBlock outputs along the innermost
  /// output dim, accumulators in an array; the reduced loops run outside a `#pragma
  /// omp simd` loop over the block, so neighbouring outputs (a pooling row, the
  /// columns of a sum over rows) are computed in vector lanes side by side. Same
  /// order of accumulation per output as the inner form, so the same results.
  std::string ReduceRowBlocked(const TensorDef& d, std::string& indent) {
    constexpr int64_t kRowBlock = 64;
    const size_t rank = d.shape.size();
    const DType vt = d.body->dtype;
    const bool sum_like = d.reduce == ReduceOp::kSum || d.reduce == ReduceOp::kProd;
    const bool arg = ir::IsArgReduce(d.reduce);
    const std::string acc_t = arg ? CType(vt) : AccType(d.dtype, sum_like, s_.double_accumulator);
    std::string out = UnitVars(d.shape, indent);
    auto dims = LoopDims(d.shape);
    const int last = dims.back();
    dims.pop_back();
    const int64_t extent = d.shape[static_cast<size_t>(last)];
    const int64_t block = std::min(extent, kRowBlock);
    if (s_.parallel) {
      out += fmt::format("{}#pragma omp parallel for {}schedule(static)\n", indent,
                         dims.empty() ? "" : fmt::format("collapse({}) ", dims.size() + 1));
    }
    out += LoopHeaders(Bounds(d), dims, false, 0, "", indent);
    out += fmt::format("{}for (int64_t ke_b = 0; ke_b < {}; ++ke_b) {{\n", indent, (extent + block - 1) / block);
    indent += "  ";
    out += fmt::format("{0}const int64_t ke_j0 = ke_b * {1}, ke_n = {2} - ke_j0 < {1} ? {2} - ke_j0 : {1};\n", indent,
                       block, extent);
    out += fmt::format("{}{} acc[{}];\n", indent, acc_t, block);
    if (arg) out += fmt::format("{}int64_t arg[{}];\n{}int64_t pos = 0;\n", indent, block, indent);
    out += fmt::format("{}for (int64_t ke_j = 0; ke_j < {}; ++ke_j) {{ acc[ke_j] = {};{} }}\n", indent, block,
                       SpellReduceIdentity(Language::kCppScalar, d.reduce, vt), arg ? " arg[ke_j] = 0;" : "");
    std::vector<int> rdims;
    for (size_t k = 0; k < d.reduce_extents.size(); ++k) {
      if (d.reduce_extents[k] != 1) rdims.push_back(static_cast<int>(rank + k));
      else out += fmt::format("{}const int64_t i{} = 0;\n", indent, rank + k);
    }
    out += LoopHeaders(Bounds(d, /*reduced=*/true), rdims, false, 0, "", indent);
    // One simd loop over the block, or three when the body's masks are range checks:
    // outputs before, inside and after the window's interior (the middle loop unmasked).
    const auto block_loop = [&](const std::string& lo, const std::string& hi, const Expr& body) {
      std::string text = indent + "#pragma omp simd\n";
      text += fmt::format("{}for (int64_t ke_j = {}; ke_j < {}; ++ke_j) {{\n", indent, lo, hi);
      indent += "  ";
      text += fmt::format("{}const int64_t i{} = ke_j0 + ke_j;\n", indent, last);
      std::string lines;
      ExprPrinter printer(Lang(), plan_.program, lines);
      const std::string v = printer.Print(body, indent);
      text += lines + AccumulateBlock(d, v, indent);
      indent.resize(indent.size() - 2);
      return text + indent + "}\n";
    };
    const Expr body = ir::SimplifiedBody(d);
    const auto split = d.symbolic_shape.empty() ? ir::SplitAtMaskBounds(body) : std::nullopt;
    if (split) {
      out += InteriorBounds(*split, last, indent);
      out += block_loop("0", "ke_lo", body) + block_loop("ke_lo", "ke_hi", split->interior_body) +
             block_loop("ke_hi", "ke_n", body);
    } else {
      out += block_loop("0", "ke_n", body);
    }
    if (arg) out += indent + "++pos;\n";
    out += CloseLoops(rdims.size(), indent);
    out += fmt::format("{}for (int64_t ke_j = 0; ke_j < ke_n; ++ke_j) {{\n", indent);
    out += fmt::format("{}  const int64_t i{} = ke_j0 + ke_j;\n", indent, last);
    out += indent + "  " + Store(d, arg ? "arg[ke_j]" : fmt::format("static_cast<{}>(acc[ke_j])", CType(d.dtype))) + ";\n";
    out += indent + "}\n";
    indent.resize(indent.size() - 2);
    out += indent + "}\n";
    out += CloseLoops(dims.size(), indent);
    return out;
  }

  std::string Scan(const TensorDef& d, std::string& indent) {
    const bool sum_like = d.scan == ScanOp::kSum || d.scan == ScanOp::kProd;
    const std::string acc_t = AccType(d.dtype, sum_like, s_.double_accumulator);
    std::string out = UnitVars(ShapeHint(d), indent);
    const auto dims = LoopDims(ShapeHint(d), d.scan_dim);
    out += LoopHeaders(Bounds(d), dims, s_.parallel, CollapseFor(dims.size()), "", indent);
    std::string init = "0";
    if (d.scan == ScanOp::kProd) init = "1";
    if (d.scan == ScanOp::kMax) init = SpellReduceIdentity(Language::kCppScalar, ReduceOp::kMax, d.dtype);
    if (d.scan == ScanOp::kMin) init = SpellReduceIdentity(Language::kCppScalar, ReduceOp::kMin, d.dtype);
    out += fmt::format("{}{} acc = {};\n", indent, acc_t, init);
    std::vector<int> sdim;
    if (ShapeHint(d)[static_cast<size_t>(d.scan_dim)] != 1) sdim.push_back(d.scan_dim);
    out += LoopHeaders(Bounds(d), sdim, false, 0, "", indent);
    std::string body;
    ExprPrinter printer(Lang(), plan_.program, body);
    const std::string v = printer.Print(ir::SimplifiedBody(d), indent);
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
  bool used_conv_ = false;  // a convolution was printed as an implicit GEMM
  std::unordered_map<int, int> epilogue_of_;  // heavy kernel -> its fused epilogue kernel
  std::unordered_map<int, int> fused_;        // epilogue kernel -> its heavy kernel
  std::unordered_map<int, Expr> epilogue_body_;  // heavy kernel -> epilogue over its indices
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

bool ReduceLoopApplies(const ir::TensorDef& d) {
  if (d.kind != DefKind::kReduce) return false;
  return std::any_of(d.shape.begin(), d.shape.end(), [](int64_t e) { return e > 1; }) &&
         d.reduce != ReduceOp::kAny && d.reduce != ReduceOp::kAll;
}

std::unordered_map<int, ir::MainLoopEpilogue> PlanCppMainLoopEpilogues(const ir::KernelPlan& plan,
                                                                       const LoopNestSchedule& schedule) {
  if (!schedule.gemm) return {};
  return ir::PlanMainLoopEpilogues(plan, [&plan](const ir::TensorDef& d) {
    return d.kind == ir::DefKind::kReduce && ir::HasMainLoop(plan.program, d);
  });
}

std::string PrintLoopNestCpp(const ir::KernelPlan& plan, const LoopNestSchedule& schedule,
                             const std::string& entry_name) {
  Emitter emitter(plan, schedule);
  const std::string entry = emitter.Entry(entry_name);
  std::string out = templates::GeneratedIncludes();
  out += "#include <algorithm>\n#include <cstring>\n#include <limits>\n#include <memory>\n#include <type_traits>\n\n";
  out += templates::AbiHelpers() + "\n" + kLoopNestHelpers + "\n";
  if (emitter.UsedGemm()) out += GemmHelpersCpp(*schedule.gemm) + "\n";
  if (emitter.UsedConv()) out += ConvHelpersCpp() + "\n";
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
