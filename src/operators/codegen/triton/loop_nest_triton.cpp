#include "operators/codegen/triton/loop_nest_triton.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/dtype.h"
#include "core/error.h"
#include "operators/codegen/loop_ir_names.h"
#include "operators/codegen/prim_spelling.h"
#include "operators/codegen/triton/cuda_graph_entry.h"
#include "operators/codegen/triton/main_loop_triton.h"
#include "operators/codegen/triton/tf32_round.h"
#include "operators/ir/index_simplify.h"
#include "operators/ir/loop_ir.h"

namespace kernelevolve::operators::codegen {
namespace {

using namespace loop_ir_names;  // NOLINT(google-build-using-namespace): DType, Expr, TensorDef, ...

constexpr const char* kIndent = "    ";

int64_t NextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

std::string TorchDtype(DType d) {
  switch (d) {
    case DType::kFloat32: return "torch.float32";
    case DType::kFloat64: return "torch.float64";
    case DType::kFloat16: return "torch.float16";
    case DType::kBFloat16: return "torch.bfloat16";
    case DType::kInt8: return "torch.int8";
    case DType::kInt16: return "torch.int16";
    case DType::kInt32: return "torch.int32";
    case DType::kInt64: return "torch.int64";
    case DType::kUInt8: return "torch.uint8";
    case DType::kBool: return "torch.bool";
  }
  return "torch.float32";
}

std::string Ty(DType d) { return SpellType(Language::kTriton, d); }

/// The Python name of var number `var` (codegen::SpellVar): a loop index i<k>, or a
/// size read at run time s<k> (a kernel argument, and a local of the entry).
std::string VarName(int var) { return SpellVar(Language::kTriton, var); }

/// A size expression as Python text (codegen::SpellSize).
std::string SizeText(const Expr& e) { return SpellSize(Language::kTriton, e); }

/// The product of `extents` (folded where constant).
Expr Product(const std::vector<Expr>& extents) {
  Expr n = ir::Int(1);
  for (const Expr& e : extents) n = ir::IMul(n, e);
  return n;
}

/// Whether `e` is the constant 1 (a size read at run time never counts as one).
bool IsUnit(const Expr& e) {
  int64_t v = 0;
  return ir::IsIntConst(e, &v) && v == 1;
}

/// The constant terms of a kernel's load offsets (ir::SplitConstantTerm), numbered in
/// print order ("slots"), and which of them the kernel takes as arguments o<slot>
/// instead of literals: kernels that differ only in which slice of a buffer they read
/// (an unrolled recurrence's step t reads row t of the input projection) then print the
/// same text and share one compiled kernel.
struct OffsetHoist {
  bool all = false;                // every nonzero constant term is an argument
  std::vector<bool> as_argument;   // else per slot
  std::vector<int64_t> values;     // filled while printing: each slot's constant
  bool Argument(size_t slot) const { return all || (slot < as_argument.size() && as_argument[slot]); }
};

/// Prints expression DAGs as `vN = ...` lines of a kernel body. Every value is a
/// tensor of the tile's shape: constants are literals (Python numbers), wrapped in
/// tl.full where a whole operation would otherwise be constant.
class TritonExprPrinter {
 public:
  TritonExprPrinter(const ir::TensorProgram& program, std::string& out, std::string mask, std::string zero,
                    std::string tile)
      : program_(program), out_(out), mask_(std::move(mask)), zero_(std::move(zero)), tile_(std::move(tile)) {}

  std::string Print(const Expr& e) {
    if (auto it = names_.find(e.get()); it != names_.end()) return it->second;
    std::string text;
    switch (e->kind) {
      case ExprKind::kConst: return SpellConstant(Language::kTriton, *e);
      case ExprKind::kVar: return VarName(e->var);
      case ExprKind::kLoad: {
        if (e->tensor == replaced_tensor_) {
          if (!e->mask) return replaced_name_;
          // A masked read of the replaced tensor is 0 where its mask is off (tl.load's other=0).
          text = fmt::format("tl.where({}, {}, 0)", Print(e->mask), replaced_name_);
          break;
        }
        const TensorDef& src = program_.defs.at(static_cast<size_t>(e->tensor));
        const Expr flat = ir::FlatOffset(e->args, ir::Extents(src));
        std::string offset;
        if (hoist_ != nullptr) {
          int64_t constant = 0;
          const Expr rest = ir::SplitConstantTerm(flat, &constant);
          if (constant != 0) {
            const size_t slot = hoist_->values.size();
            hoist_->values.push_back(constant);
            if (hoist_->Argument(slot)) offset = fmt::format("{} + o{}", Print(rest), slot);
          }
        }
        if (offset.empty()) offset = Print(flat);
        std::string mask = mask_;
        if (e->mask) mask = fmt::format("{} & {}", mask_, Print(e->mask));
        text = fmt::format("tl.load(t{} + {} + {}, mask={}, other=0)", e->tensor, zero_, offset, mask);
        break;
      }
      case ExprKind::kOp: {
        std::vector<std::string> args;
        bool all_const = true;
        for (const Expr& a : e->args) {
          args.push_back(Print(a));
          all_const = all_const && a->kind == ExprKind::kConst;
        }
        if (all_const) {
          args[0] = fmt::format("tl.full({}, {}, {})", tile_, args[0], Ty(e->args[0]->dtype));
        }
        if (e->op == ir::Prim::kPow) {  // its spelling tests the exponent elementwise: tensors only
          for (size_t k = 0; k < args.size(); ++k) {
            if (e->args[k]->kind == ExprKind::kConst && args[k].rfind("tl.full(", 0) != 0) {
              args[k] = fmt::format("tl.full({}, {}, {})", tile_, args[k], Ty(e->args[k]->dtype));
            }
          }
        }
        const DType operand = e->op == ir::Prim::kWhere ? e->args[1]->dtype : e->args[0]->dtype;
        text = SpellPrim(Language::kTriton, SpellingPrim(*e), operand, e->dtype, args);
        break;
      }
    }
    const std::string name = fmt::format("v{}", next_++);
    out_ += fmt::format("{}{} = {}\n", kIndent2(), name, text);
    names_.emplace(e.get(), name);
    alive_.push_back(e);
    return name;
  }

  /// `e` as a tensor of the tile (a constant becomes tl.full).
  std::string PrintTensor(const Expr& e) {
    if (e->kind == ExprKind::kConst) {
      return fmt::format("tl.full({}, {}, {})", tile_, SpellConstant(Language::kTriton, *e), Ty(e->dtype));
    }
    if (e->kind == ExprKind::kVar) return fmt::format("({} + {})", VarName(e->var), zero_);
    return Print(e);
  }

  void SetIndent(std::string indent) { indent_ = std::move(indent); }

  /// Records load offsets' constant terms in `hoist` (none: printed as literals).
  void HoistOffsets(OffsetHoist* hoist) { hoist_ = hoist; }

  /// Loads of t<tensor> print as `name` (a main loop's accumulator, at the epilogue's
  /// own element).
  void Replace(int tensor, std::string name) {
    replaced_tensor_ = tensor;
    replaced_name_ = std::move(name);
  }

 private:
  const std::string& kIndent2() const { return indent_; }
  const ir::TensorProgram& program_;
  std::string& out_;
  std::string mask_, zero_, tile_;
  std::string indent_ = kIndent;
  int replaced_tensor_ = -1;
  std::string replaced_name_;
  OffsetHoist* hoist_ = nullptr;
  std::unordered_map<const ExprNode*, std::string> names_;
  std::vector<Expr> alive_;
  int next_ = 0;
};

/// Tensors a body loads, sorted.
std::vector<int> LoadedTensors(const Expr& body) {
  std::set<int> t;
  ir::VisitPostOrder(body, [&](const ExprNode& n) {
    if (n.kind == ExprKind::kLoad) t.insert(n.tensor);
  });
  return {t.begin(), t.end()};
}

/// "i<d> = (flat // stride) % size" lines for the dims of `extents` (unit dims: 0).
std::string Decompose(const std::string& flat, const std::vector<Expr>& extents, const std::vector<int>& dims,
                      const std::string& indent) {
  std::string out;
  Expr stride = ir::Int(1);
  std::vector<Expr> strides(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    strides[k] = stride;
    stride = ir::IMul(stride, extents[static_cast<size_t>(dims[k])]);
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    const Expr& size = extents[static_cast<size_t>(dims[k])];
    std::string e = IsUnit(strides[k]) ? flat : fmt::format("({} // {})", flat, SizeText(strides[k]));
    if (k > 0) e = fmt::format("{} % {}", e, SizeText(size));
    if (IsUnit(size)) e = "0";
    out += fmt::format("{}i{} = {}\n", indent, dims[k], e);
  }
  return out;
}

/// `kernel` without its comment lines, named `_k` instead of `_k<id>`, its tensor
/// parameters t<id> renamed by position (a0, a1, ...): the text two kernels share
/// exactly when they differ only in the buffers they are launched with.
std::string CanonicalKernel(const std::string& kernel) {
  std::string text;
  for (size_t at = 0; at < kernel.size();) {
    size_t end = kernel.find('\n', at);
    end = end == std::string::npos ? kernel.size() : end + 1;
    if (kernel[at] != '#') text.append(kernel, at, end - at);
    at = end;
  }
  const size_t def = text.find("def _k");
  if (def == std::string::npos) return text;
  const size_t open = text.find('(', def), close = text.find(')', open);
  std::unordered_map<std::string, std::string> rename;
  int position = 0;
  for (size_t at = open + 1; at < close;) {
    size_t end = std::min(text.find(',', at), close);
    std::string param = text.substr(at, end - at);
    param.erase(0, param.find_first_not_of(' '));
    if (param.size() > 1 && param[0] == 't' && param.find_first_not_of("0123456789", 1) == std::string::npos) {
      rename.emplace(param, fmt::format("a{}", position));
    }
    ++position;
    at = end + 1;
  }
  text.replace(def + 4, open - def - 4, "_k");
  std::string out;
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (size_t at = 0; at < text.size();) {
    if (!word(text[at])) {
      out += text[at++];
      continue;
    }
    size_t end = at;
    while (end < text.size() && word(text[end])) ++end;
    const std::string name = text.substr(at, end - at);
    auto it = rename.find(name);
    out += it == rename.end() ? name : it->second;
    at = end;
  }
  return out;
}

/// Emitter::Storage with the accumulator knob as an argument.
DType StorageType(const ir::KernelPlan& plan, const TritonFusion& fusion, const TensorDef& d,
                  bool double_accumulator) {
  const bool intermediate = plan.output_slot[static_cast<size_t>(d.id)] < 0;
  const bool wide = double_accumulator && intermediate && ir::AccumulatesFloat32(d) &&
                    !TritonRunsMainLoop(plan.program, d) && fusion.main_loop_operands.count(d.id) == 0;
  return wide ? DType::kFloat64 : d.dtype;
}

class Emitter {
 public:
  Emitter(const ir::KernelPlan& plan, const TritonLoopNestSchedule& s)
      : plan_(plan), s_(s), fusion_(PlanTritonFusion(plan)) {}

  std::string Module() {
    std::string kernels, launches;
    const auto& p = plan_.program;
    // Kernels of the same form (the same text but for their buffers and the constant
    // offsets of their loads: the steps of an unrolled recurrence) are printed once and
    // launched once per definition, so that Triton compiles each form once.
    std::vector<const TensorDef*> defs;
    for (int k : plan_.kernels) {
      const TensorDef& d = p.defs[static_cast<size_t>(k)];
      if (d.symbolic_shape.empty() && ir::Numel(d.shape) == 0) continue;
      if (fusion_.fused.count(k) != 0) continue;  // computed by a main loop or a reduction
      defs.push_back(&d);
    }
    std::vector<size_t> form(defs.size());                 // per def: its form's index
    std::vector<std::vector<size_t>> members;              // per form: defs, in order
    std::vector<std::vector<int64_t>> constants(defs.size());
    {
      std::unordered_map<std::string, size_t> forms;
      for (size_t i = 0; i < defs.size(); ++i) {
        OffsetHoist all;
        all.all = true;
        hoist_ = &all;
        std::string launch;
        const std::string key = CanonicalKernel(Kernel(*defs[i], launch));
        hoist_ = nullptr;
        constants[i] = all.values;
        auto [it, fresh] = forms.emplace(key, members.size());
        if (fresh) members.emplace_back();
        form[i] = it->second;
        members[it->second].push_back(i);
      }
    }
    // Per form, the constants that differ between its members: only those become arguments.
    std::vector<OffsetHoist> varying(members.size());
    for (size_t f = 0; f < members.size(); ++f) {
      const std::vector<int64_t>& first = constants[members[f].front()];
      for (size_t slot = 0; slot < first.size(); ++slot) {
        bool differs = false;
        for (size_t m : members[f]) differs = differs || constants[m][slot] != first[slot];
        varying[f].as_argument.push_back(differs);
      }
    }
    for (size_t i = 0; i < defs.size(); ++i) {
      const std::vector<size_t>& group = members[form[i]];
      hoist_ = group.size() > 1 ? &varying[form[i]] : nullptr;
      std::string launch;
      std::string kernel = Kernel(*defs[i], launch);
      hoist_ = nullptr;
      if (group.front() == i) {
        if (group.size() > 1) kernel.insert(kernel.find('\n') + 1, SharedComment(defs, group));
        kernels += kernel + "\n\n";
      } else {
        const std::string own = fmt::format("_k{}[", defs[i]->id);
        launch.replace(launch.find(own), own.size(), fmt::format("_k{}[", defs[group.front()]->id));
      }
      launches += launch;
    }
    std::string entry = fmt::format("def {}(inputs, outputs):\n", s_.cuda_graph ? "_ke_launch" : s_.entry_name);
    for (const TensorDef& d : p.defs) {
      if (d.kind == DefKind::kInput) entry += fmt::format("    t{} = inputs[{}]\n", d.id, d.abi_index);
    }
    for (size_t k = 0; k < p.outputs.size(); ++k) entry += fmt::format("    t{} = outputs[{}]\n", p.outputs[k], k);
    entry += SizeChecks();
    entry += "    device = outputs[0].device\n";
    for (int k : plan_.kernels) {
      const TensorDef& d = p.defs[static_cast<size_t>(k)];
      if (plan_.output_slot[static_cast<size_t>(k)] >= 0 || !fusion_.HasBuffer(k)) continue;
      entry += fmt::format("    t{} = torch.empty({}, dtype={}, device=device)\n", k, ShapeList(d),
                           TorchDtype(Storage(d)));
    }
    entry += launches;
    if (s_.cuda_graph) {
      entry += CudaGraphEntry(s_.entry_name, "_ke_launch",
                              CudaGraphsKept(TritonIntermediateBytes(plan_, fusion_, s_.double_accumulator)));
    }
    // libdevice (asin, acos, atan, atan2) only where used: TRITON_INTERPRET lacks it.
    std::string out = "import torch\nimport triton\nimport triton.language as tl\n";
    if (kernels.find("libdevice.") != std::string::npos) out += "from triton.language.extra import libdevice\n";
    // The combine function of product reductions and scans, only where one uses it.
    if (kernels.find("_ke_mul") != std::string::npos) {
      out += "\n\n@triton.jit\ndef _ke_mul(a, b):\n    return a * b\n";
    }
    if (UsesTf32Rounding(kernels + entry)) out += RoundTf32Helper();
    return out + "\n\n" + kernels + entry;
  }

 private:
  /// "# launched for t89, t108, ... too" for a kernel several definitions share.
  static std::string SharedComment(const std::vector<const TensorDef*>& defs, const std::vector<size_t>& group) {
    std::vector<std::string> names;
    for (size_t k = 1; k < group.size() && k <= 8; ++k) names.push_back(fmt::format("t{}", defs[group[k]]->id));
    if (group.size() > 9) names.push_back(fmt::format("and {} more", group.size() - 9));
    return fmt::format("# also launched for {} (the same form: other buffers, other constant offsets)\n",
                       fmt::join(names, ", "));
  }

  /// Sizes read at run time: the entry reads each symbol from its input, refuses sizes
  /// outside those the input sets showed (the lowering's choices hold there) and tensors
  /// whose element counts disagree with them (a kernel would read or write past them).
  std::string SizeChecks() const {
    const auto& p = plan_.program;
    if (p.symbols.empty()) return "";
    std::string out;
    for (size_t k = 0; k < p.symbols.size(); ++k) {
      const ir::SizeSymbol& sym = p.symbols[k];
      size_t rank = 0;
      for (const TensorDef& d : p.defs) {
        if (d.kind == DefKind::kInput && d.abi_index == sym.abi_index) rank = d.shape.size();
      }
      out += fmt::format(
          "    if inputs[{0}].dim() != {1}:\n"
          "        raise ValueError(f\"input {0} has {{inputs[{0}].dim()}} dims; this kernel reads {1}\")\n"
          "    s{2} = int(inputs[{0}].shape[{3}])\n"
          "    if not {4} <= s{2} <= {5}:\n"
          "        raise ValueError(f\"size {3} of input {0} is {{s{2}}}: this kernel was generated for {4} to {5}, "
          "the sizes the input sets showed\")\n",
          sym.abi_index, rank, k, sym.dim, sym.min_value, sym.max_value);
    }
    auto check = [&](const TensorDef& d, const std::string& what) {
      out += fmt::format("    if t{0}.numel() != {1}:\n"
                         "        raise ValueError(f\"{2} has {{t{0}.numel()}} elements; the sizes read give {1}\")\n",
                         d.id, SizeText(Product(ir::Extents(d))), what);
    };
    for (const TensorDef& d : p.defs) {
      if (d.kind == DefKind::kInput) check(d, fmt::format("input {}", d.abi_index));
    }
    for (size_t k = 0; k < p.outputs.size(); ++k) check(p.defs[static_cast<size_t>(p.outputs[k])], fmt::format("output {}", k));
    return out;
  }

  /// `d`'s shape as a Python list (sizes read at run time by name).
  static std::string ShapeList(const TensorDef& d) {
    if (d.symbolic_shape.empty()) return nlohmann::json(d.shape).dump();
    std::vector<std::string> parts;
    for (const Expr& e : d.symbolic_shape) parts.push_back(SizeText(e));
    return fmt::format("[{}]", fmt::join(parts, ", "));
  }

  /// The element type `d` is stored in. With double accumulators, a float32 sum,
  /// product or scan that is not an ABI output stays float64 in its buffer: its
  /// consumers compute in float64 and round once when they store (index_add is
  /// table + sum, a segment mean sum / count; rounding the sum first cost an ulp of the
  /// largest term, which cancellation makes visible).
  /// A tl.dot main loop accumulates in float32 whatever the knob: its buffer is float32,
  /// and so is the buffer of a sum it reads as an operand (tl.dot takes no float64).
  DType Storage(const TensorDef& d) const { return StorageType(plan_, fusion_, d, s_.double_accumulator); }

  std::string Kernel(const TensorDef& d, std::string& launch) {
    TritonEpilogue epilogue;
    if (auto it = fusion_.main_loops.find(d.id); it != fusion_.main_loops.end()) {
      const Expr& body = it->second.body;
      epilogue.target = it->second.epilogue;
      for (int t : LoadedTensors(body)) {
        if (t != d.id) epilogue.tensors.push_back(t);
      }
      epilogue.print = [this, &body, &d](std::string& lines) {
        TritonExprPrinter printer(plan_.program, lines, "mask", "zero", "[BLOCK_M, BLOCK_N]");
        printer.Replace(d.id, "acc");
        return printer.PrintTensor(body);
      };
    }
    if (std::optional<TritonKernelText> main = PrintMainLoopTriton(
            plan_.program, d, s_.main_loop, epilogue.target >= 0 ? &epilogue : nullptr)) {
      launch = main->launch;
      return main->kernel;
    }
    std::vector<int> loads = LoadedTensors(d.body);
    std::vector<int> stores = {d.id};
    if (auto it = fusion_.reductions.find(d.id); it != fusion_.reductions.end()) {
      // The consumers' loads but the reduction itself, and their buffers.
      if (!it->second.store_reduction) stores.clear();
      for (size_t c = 0; c < it->second.consumers.size(); ++c) {
        for (int t : LoadedTensors(it->second.bodies[c])) {
          if (t != d.id && std::find(loads.begin(), loads.end(), t) == loads.end()) loads.push_back(t);
        }
        stores.push_back(it->second.consumers[c]);
      }
    }
    std::vector<std::string> params;
    for (int t : loads) params.push_back(fmt::format("t{}", t));
    for (int t : stores) {
      if (std::find(loads.begin(), loads.end(), t) == loads.end()) params.push_back(fmt::format("t{}", t));
    }
    for (size_t k = 0; k < plan_.program.symbols.size(); ++k) params.push_back(fmt::format("s{}", k));
    int64_t xblock = 0, rblock = 1;
    Expr rows;
    std::string body;
    if (hoist_ != nullptr) hoist_->values.clear();
    switch (d.kind) {
      case DefKind::kCompute: body = Compute(d, xblock); rows = Product(ir::Extents(d)); break;
      case DefKind::kReduce: body = Reduce(d, xblock, rblock); rows = Product(ir::Extents(d)); break;
      case DefKind::kScan: body = Scan(d, xblock, rblock, rows); break;
      case DefKind::kInput: break;
    }
    std::vector<std::string> args = params;
    for (size_t slot = 0; hoist_ != nullptr && slot < hoist_->values.size(); ++slot) {
      if (!hoist_->Argument(slot)) continue;
      params.push_back(fmt::format("o{}", slot));
      args.push_back(std::to_string(hoist_->values[slot]));
    }
    std::string out = fmt::format("# t{}: {} {}{}\n@triton.jit\ndef _k{}({}, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):\n",
                                  d.id, d.kind == DefKind::kReduce ? "reduce" : (d.kind == DefKind::kScan ? "scan" : "element"),
                                  ShapeList(d), d.origin.empty() ? "" : " <- " + d.origin, d.id,
                                  fmt::join(params, ", "));
    out += body;
    launch = fmt::format("_k{}[(triton.cdiv({}, {}),)]({}, XBLOCK={}, RBLOCK={}, num_warps={})\n", d.id,
                         SizeText(rows), xblock, fmt::join(args, ", "), xblock, rblock, s_.num_warps);
    // A size read at run time may make this kernel empty: no launch of an empty grid.
    launch = ir::IsIntConst(rows, nullptr) ? "    " + launch
                                           : fmt::format("    if {} > 0:\n        {}", SizeText(rows), launch);
    return out;
  }

  /// A block size for `hint` elements (the first input set's count): at most `knob`,
  /// the knob itself where the count is read at run time.
  static int64_t BlockFor(const Expr& count, int64_t hint, int64_t knob) {
    return ir::IsIntConst(count, nullptr) ? std::min<int64_t>(knob, NextPow2(hint)) : knob;
  }

  std::string Compute(const TensorDef& d, int64_t& xblock) {
    const Expr n = Product(ir::Extents(d));
    xblock = BlockFor(n, ir::Numel(d.shape), s_.block);
    std::string out = fmt::format("{0}xoffs = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)\n"
                                  "{0}xmask = xoffs < {1}\n{0}zero = xoffs * 0\n",
                                  kIndent, SizeText(n));
    std::vector<int> dims;
    for (size_t k = 0; k < d.shape.size(); ++k) dims.push_back(static_cast<int>(k));
    out += Decompose("xoffs", ir::Extents(d), dims, kIndent);
    std::string body;
    TritonExprPrinter printer(plan_.program, body, "xmask", "zero", "[XBLOCK]");
    printer.HoistOffsets(hoist_);
    const std::string v = printer.PrintTensor(ir::SimplifiedBody(d));
    out += body;
    out += fmt::format("{}tl.store(t{} + xoffs, {}.to({}), mask=xmask)\n", kIndent, d.id, v, Ty(d.dtype));
    return out;
  }

  std::string Reduce(const TensorDef& d, int64_t& xblock, int64_t& rblock) {
    const Expr n = Product(ir::Extents(d));
    const Expr rn = Product(ir::ReduceExtents(d));
    int64_t rn_hint = 1;
    for (int64_t e : d.reduce_extents) rn_hint *= e;
    // A window of a few elements walked by tl.static_range, one lane per output
    // (TritonUnrollsReduction), or [XBLOCK, RBLOCK] tiles.
    const bool unrolled = s_.unroll_short_reductions && TritonUnrollsReduction(d);
    rblock = unrolled ? 1 : BlockFor(rn, rn_hint, s_.rblock);
    xblock = BlockFor(n, ir::Numel(d.shape), unrolled ? s_.block : std::max<int64_t>(1, 4096 / rblock));
    const std::string tile = unrolled ? "[XBLOCK]" : "[XBLOCK, RBLOCK]";
    const std::string column = unrolled ? "" : "[:, None]";  // a row's result as a column of the tile
    const size_t rank = d.shape.size();
    const DType vt = d.body->dtype;
    const bool fp = core::IsFloatingPoint(vt);
    const bool arg = ir::IsArgReduce(d.reduce);
    DType acc = d.reduce == ReduceOp::kAny || d.reduce == ReduceOp::kAll ? DType::kInt32 : vt;
    if (!arg && d.reduce != ReduceOp::kAny && d.reduce != ReduceOp::kAll) acc = d.dtype;
    if (s_.double_accumulator && ir::AccumulatesFloat32(d)) acc = DType::kFloat64;
    std::string out = fmt::format(
        "{0}xoffs = (tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)){2}\n"
        "{0}xmask = xoffs < {1}\n",
        kIndent, SizeText(n), column);
    std::vector<int> dims;
    for (size_t k = 0; k < rank; ++k) dims.push_back(static_cast<int>(k));
    out += Decompose("xoffs", ir::Extents(d), dims, kIndent);
    out += fmt::format("{}acc = tl.full({}, {}, {})\n", kIndent, tile,
                       SpellReduceIdentity(Language::kTriton, d.reduce, vt), Ty(acc));
    if (arg) out += fmt::format("{}accidx = tl.full({}, 0, tl.int64)\n", kIndent, tile);
    const std::string in = std::string(kIndent) + kIndent;
    if (unrolled) {
      // roffs is a tensor (zero + r0) so that every value derived from it is one too; the
      // compiler folds it to the constant r0 of each unrolled step.
      out += fmt::format("{0}for r0 in tl.static_range({1}):\n"
                         "{2}zero = xoffs * 0\n"
                         "{2}roffs = zero + r0\n"
                         "{2}xrmask = xmask\n",
                         kIndent, SizeText(rn), in);
    } else {
      out += fmt::format("{0}for r0 in range(0, {1}, RBLOCK):\n"
                         "{2}roffs = r0 + tl.arange(0, RBLOCK)[None, :]\n"
                         "{2}xrmask = xmask & (roffs < {1})\n"
                         "{2}zero = xoffs * 0 + roffs * 0\n",
                         kIndent, SizeText(rn), in);
    }
    std::vector<Expr> ext_shape(rank, ir::Int(1));
    for (const Expr& e : ir::ReduceExtents(d)) ext_shape.push_back(e);
    std::vector<int> rdims;
    for (size_t k = 0; k < d.reduce_extents.size(); ++k) rdims.push_back(static_cast<int>(rank + k));
    out += Decompose("roffs", ext_shape, rdims, in);
    std::string body;
    TritonExprPrinter printer(plan_.program, body, "xrmask", "zero", tile);
    printer.SetIndent(in);
    printer.HoistOffsets(hoist_);
    std::string v = printer.PrintTensor(ir::SimplifiedBody(d));
    out += body;
    const std::string init = SpellReduceIdentity(Language::kTriton, d.reduce, vt);
    out += fmt::format("{}v = tl.where(xrmask, {}.to({}), {})\n", in, v, Ty(acc), init);
    switch (d.reduce) {
      case ReduceOp::kSum: out += in + "acc = acc + v\n"; break;
      case ReduceOp::kProd: out += in + "acc = acc * v\n"; break;
      case ReduceOp::kMax:
        out += in + (fp ? "acc = tl.where((v > acc) | (v != v), v, acc)\n" : "acc = tl.maximum(acc, v)\n");
        break;
      case ReduceOp::kMin:
        out += in + (fp ? "acc = tl.where((v < acc) | (v != v), v, acc)\n" : "acc = tl.minimum(acc, v)\n");
        break;
      case ReduceOp::kArgMax:
      case ReduceOp::kArgMin: {
        const char* cmp = d.reduce == ReduceOp::kArgMax ? ">" : "<";
        out += in + (fp ? fmt::format("better = (v {} acc) | ((v != v) & (acc == acc))\n", cmp)
                        : fmt::format("better = v {} acc\n", cmp));
        out += in + "acc = tl.where(better, v, acc)\n" + in + "accidx = tl.where(better, roffs, accidx)\n";
        break;
      }
      case ReduceOp::kArgMaxLastNaN:
        out += in + (fp ? "better = (v > acc) | (v != v)\n" : "better = v > acc\n");
        out += in + "acc = tl.where(better, v, acc)\n" + in + "accidx = tl.where(better, roffs, accidx)\n";
        break;
      case ReduceOp::kAny: out += in + "acc = tl.maximum(acc, (v != 0).to(tl.int32))\n"; break;
      case ReduceOp::kAll: out += in + "acc = tl.minimum(acc, (v != 0).to(tl.int32))\n"; break;
    }
    std::string result;
    if (unrolled) {
      // Each lane walked its whole window in order: its accumulator is the result.
      result = arg ? "accidx" : (d.reduce == ReduceOp::kAny || d.reduce == ReduceOp::kAll ? "acc > 0" : "acc");
    } else {
      result = CombineLanes(d, fp, out);
    }
    auto fused = fusion_.reductions.find(d.id);
    if (fused == fusion_.reductions.end()) {
      out += fmt::format("{}tl.store(t{} + xoffs, ({}){}.to({}), mask=xmask)\n", kIndent, d.id, result, column,
                         Ty(Storage(d)));
      return out;
    }
    // The element kernels that read this reduction at their own element, computed here
    // (ir/epilogue_fusion.h): each reads the reduced rows as `res` and stores its buffer.
    out += fmt::format("{0}res = ({1}){2}.to({3})\n{0}zero = xoffs * 0\n", kIndent, result, column, Ty(Storage(d)));
    if (fused->second.store_reduction) out += fmt::format("{}tl.store(t{} + xoffs, res, mask=xmask)\n", kIndent, d.id);
    for (size_t c = 0; c < fused->second.consumers.size(); ++c) {
      const TensorDef& consumer = plan_.program.defs[static_cast<size_t>(fused->second.consumers[c])];
      std::string lines;
      TritonExprPrinter epilogue(plan_.program, lines, "xmask", "zero", unrolled ? "[XBLOCK]" : "[XBLOCK, 1]");
      epilogue.Replace(d.id, "res");
      epilogue.HoistOffsets(hoist_);
      const std::string v = epilogue.PrintTensor(fused->second.bodies[c]);
      out += lines;
      out += fmt::format("{}tl.store(t{} + xoffs, ({}).to({}), mask=xmask)\n", kIndent, consumer.id, v,
                         Ty(Storage(consumer)));
    }
    return out;
  }

  /// The result of a tiled reduction: the lanes of each row of `acc` (and `accidx`)
  /// combined, as an expression of [XBLOCK] values; the lines it needs go to `out`.
  static std::string CombineLanes(const TensorDef& d, bool fp, std::string& out) {
    std::string result;
    switch (d.reduce) {
      case ReduceOp::kSum: result = "tl.sum(acc, 1)"; break;
      case ReduceOp::kProd: result = "tl.reduce(acc, 1, _ke_mul)"; break;
      case ReduceOp::kAny:
      case ReduceOp::kAll: result = d.reduce == ReduceOp::kAny ? "tl.max(acc, 1) > 0" : "tl.min(acc, 1) > 0"; break;
      case ReduceOp::kMax:
      case ReduceOp::kMin:
      case ReduceOp::kArgMax:
      case ReduceOp::kArgMin:
      case ReduceOp::kArgMaxLastNaN: {
        const bool max = d.reduce != ReduceOp::kMin && d.reduce != ReduceOp::kArgMin;
        out += fmt::format("{}best = tl.{}(acc, 1)\n", kIndent, max ? "max" : "min");
        if (fp) {
          out += fmt::format("{0}nan = tl.max((acc != acc).to(tl.int32), 1) > 0\n"
                             "{0}best = tl.where(nan, float('nan'), best)\n", kIndent);
        }
        if (d.reduce == ReduceOp::kMax || d.reduce == ReduceOp::kMin) {
          result = "best";
        } else {
          out += fmt::format("{}hit = acc == best[:, None]\n", kIndent);
          if (fp) out += fmt::format("{0}hit = hit | ((acc != acc) & nan[:, None])\n", kIndent);
          out += fmt::format("{}idx = tl.min(tl.where(hit, accidx, 9223372036854775807), 1)\n", kIndent);
          if (fp && d.reduce == ReduceOp::kArgMaxLastNaN) {
            // Each lane holds its last NaN; the window's last NaN is the largest of those.
            out += fmt::format("{0}idx = tl.where(nan, tl.max(tl.where(acc != acc, accidx, -1), 1), idx)\n", kIndent);
          }
          result = "idx";
        }
        break;
      }
    }
    return result;
  }

  std::string Scan(const TensorDef& d, int64_t& xblock, int64_t& rblock, Expr& rows) {
    const int sd = d.scan_dim;
    const std::vector<Expr> extents = ir::Extents(d);
    const Expr len = d.shape.empty() ? ir::Int(1) : extents[static_cast<size_t>(sd)];
    const int64_t len_hint = d.shape.empty() ? 1 : d.shape[static_cast<size_t>(sd)];
    std::vector<int> dims;
    std::vector<Expr> row_extents;
    for (size_t k = 0; k < d.shape.size(); ++k) {
      if (static_cast<int>(k) != sd) {
        dims.push_back(static_cast<int>(k));
        row_extents.push_back(extents[k]);
      }
    }
    rows = Product(row_extents);
    rblock = BlockFor(len, len_hint, s_.rblock);
    xblock = BlockFor(rows, ir::Numel(d.shape) / std::max<int64_t>(len_hint, 1), std::max<int64_t>(1, 4096 / rblock));
    std::string out = fmt::format(
        "{0}xoffs = (tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK))[:, None]\n"
        "{0}xmask = xoffs < {1}\n",
        kIndent, SizeText(rows));
    out += Decompose("xoffs", extents, dims, kIndent);
    const bool sum = d.scan == ScanOp::kSum, prod = d.scan == ScanOp::kProd;
    const ReduceOp extreme = d.scan == ScanOp::kMax ? ReduceOp::kMax : ReduceOp::kMin;
    const std::string init = sum ? "0" : (prod ? "1" : SpellReduceIdentity(Language::kTriton, extreme, d.dtype));
    const DType acc = s_.double_accumulator && ir::AccumulatesFloat32(d) ? DType::kFloat64 : d.dtype;
    out += fmt::format("{}carry = tl.full([XBLOCK, 1], {}, {})\n", kIndent, init, Ty(acc));
    const std::string in = std::string(kIndent) + kIndent;
    out += fmt::format("{0}for r0 in range(0, {1}, RBLOCK):\n"
                       "{2}i{3} = r0 + tl.arange(0, RBLOCK)[None, :]\n"
                       "{2}xrmask = xmask & (i{3} < {1})\n"
                       "{2}zero = xoffs * 0 + i{3} * 0\n",
                       kIndent, SizeText(len), in, sd);
    std::string body;
    TritonExprPrinter printer(plan_.program, body, "xrmask", "zero", "[XBLOCK, RBLOCK]");
    printer.SetIndent(in);
    printer.HoistOffsets(hoist_);
    const std::string v = printer.PrintTensor(ir::SimplifiedBody(d));
    out += body;
    out += fmt::format("{}v = tl.where(xrmask, {}.to({}), {})\n", in, v, Ty(acc), init);
    if (sum) {
      out += in + "c = tl.cumsum(v, 1) + carry\n" + in + "carry = carry + tl.sum(v, 1)[:, None]\n";
    } else if (prod) {
      out += in + "c = tl.associative_scan(v, 1, _ke_mul) * carry\n" + in +
             "carry = carry * tl.reduce(v, 1, _ke_mul)[:, None]\n";
    } else {
      throw core::InternalError("Triton loop nest: only sum and product scans are printed");
    }
    std::vector<Expr> index = ir::IndexVars(d.shape.size());
    std::string flat;
    {
      std::string tmp;
      TritonExprPrinter p2(plan_.program, tmp, "xrmask", "zero", "[XBLOCK, RBLOCK]");
      p2.SetIndent(in);
      flat = p2.PrintTensor(ir::FlatOffset(index, extents));
      out += tmp;
    }
    out += fmt::format("{}tl.store(t{} + {}, c.to({}), mask=xrmask)\n", in, d.id, flat, Ty(Storage(d)));
    return out;
  }

  const ir::KernelPlan& plan_;
  TritonLoopNestSchedule s_;
  TritonFusion fusion_;            // what main loops and reductions compute of other kernels
  OffsetHoist* hoist_ = nullptr;  // while printing a kernel's loads
};

}  // namespace

bool TritonUnrollsReduction(const TensorDef& d) {
  if (d.kind != DefKind::kReduce || !d.symbolic_shape.empty()) return false;
  int64_t rn = 1;
  for (const Expr& e : ir::ReduceExtents(d)) {
    int64_t v = 0;
    if (!ir::IsIntConst(e, &v)) return false;
    rn *= v;
  }
  return rn >= 3 && rn <= kMaxUnrolledReduction && (rn & (rn - 1)) != 0;
}

TritonFusion PlanTritonFusion(const ir::KernelPlan& plan) {
  TritonFusion f;
  f.main_loops = PlanTritonMainLoopEpilogues(plan);
  for (const auto& [heavy, e] : f.main_loops) f.fused.insert(e.epilogue);
  const std::set<int> main_loop_epilogues = f.fused;
  f.reductions = ir::PlanReductionEpilogues(
      plan, [&plan](const TensorDef& d) { return !TritonRunsMainLoop(plan.program, d); },
      [&](const TensorDef& c) { return main_loop_epilogues.count(c.id) == 0; });
  for (const auto& [reduction, e] : f.reductions) f.fused.insert(e.consumers.begin(), e.consumers.end());
  for (int k : plan.kernels) {
    const TensorDef& d = plan.program.defs[static_cast<size_t>(k)];
    if (!TritonRunsMainLoop(plan.program, d)) continue;
    if (const auto c = ir::MatchContraction(plan.program, d)) {
      f.main_loop_operands.insert({c->a, c->b});
    } else if (const auto v = ir::MatchConvolution(plan.program, d)) {
      f.main_loop_operands.insert({v->x, v->w});
    }
  }
  return f;
}

bool TritonFusion::HasBuffer(int k) const {
  if (main_loops.count(k) != 0) return false;
  auto it = reductions.find(k);
  return it == reductions.end() || it->second.store_reduction;
}

std::string TritonFusion::Note(int kernel) const {
  if (std::string note = ir::FusedIntoNote(main_loops, kernel); !note.empty()) return note;
  for (const auto& [reduction, e] : reductions) {
    if (std::find(e.consumers.begin(), e.consumers.end(), kernel) != e.consumers.end()) {
      return fmt::format(" (computed by t{}'s reduction)", reduction);
    }
  }
  return "";
}

int64_t TritonIntermediateBytes(const ir::KernelPlan& plan, const TritonFusion& fusion, bool double_accumulator) {
  int64_t bytes = 0;
  // As the entry allocates them.
  for (int k : plan.kernels) {
    const TensorDef& d = plan.program.defs[static_cast<size_t>(k)];
    if (plan.output_slot[static_cast<size_t>(k)] >= 0 || !fusion.HasBuffer(k)) continue;
    bytes += ir::Numel(d.shape) * static_cast<int64_t>(core::DTypeSize(StorageType(plan, fusion, d, double_accumulator)));
  }
  return bytes;
}

std::string PrintLoopNestTriton(const ir::KernelPlan& plan, const TritonLoopNestSchedule& schedule) {
  return Emitter(plan, schedule).Module();
}

}  // namespace kernelevolve::operators::codegen
