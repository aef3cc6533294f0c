// The split layout's kernels (partials, combine, element writes), the tail kernel
// and the kernelevolve_entry launcher of the triton_rowwise template.
#include "operators/template/triton_rowwise_writer.h"

namespace kernelevolve::operators::templates::triton_rowwise {

/// kSplit: the (o, p) program's index names and the row values it loads.
TritonIndex Writer::SplitIndex() const {
  TritonIndex n;
  n.i = "0";
  n.r_mask = "rmask";
  n.r_start = "(p * CHUNK + k)";  // CHUNK is a multiple of BR (the launcher rounds it up)
  n.r_block = s_.block_r;
  return n;
}

Lines Writer::SplitPrologue(int before_stage, bool with_p) {
  Lines body;
  body.push_back(big_ ? "o = tl.program_id(0).to(tl.int64)" : "o = tl.program_id(0)");
  if (with_p) body.push_back(big_ ? "p = tl.program_id(1).to(tl.int64)" : "p = tl.program_id(1)");
  for (const auto& [id, slot] : slot_) {
    const int st = RowStage(id);
    if (st >= 0 && st < before_stage) {
      body.push_back(fmt::format("row{} = tl.load(rowbuf + {} + o)", id, slot * rows_));
    }
  }
  Append(body, RowSection(-1, SplitIndex()), 0);
  return body;
}

std::string Writer::SplitLoop() const { return "for k in tl.range(0, CHUNK, BR, num_stages=NS):"; }

Lines Writer::SplitRange() const {
  return {"    r = p * CHUNK + k + tl.arange(0, BR)",
          fmt::format("    rmask = r < {}", region_.reduce)};
}

std::string Writer::SplitStage(int s) {
  const TritonIndex n = SplitIndex();
  Lines body = SplitPrologue(s, true);
  const auto& reds = region_.stages[static_cast<size_t>(s)].reductions;
  for (int id : reds) {
    body.push_back(fmt::format("acc{} = tl.full([BR], {}, {})", id, Identity(V(id).reduce),
                               Acc(V(id).reduce)));
  }
  body.push_back(SplitLoop());
  Append(body, SplitRange(), 0);
  TritonBlock b;
  for (int id : reds) {
    const ReduceKind k = V(id).reduce;
    const std::string v = emit_.Emit(V(id).operands[0], false, n, b);
    const std::string x = ToAcc(k, fmt::format("tl.where(rmask, {}, {})", v, Identity(k)));
    b.lines.push_back(fmt::format("acc{} = {}", id, Combine(k, "acc" + std::to_string(id), x)));
  }
  Append(body, b.lines, 4);
  for (size_t j = 0; j < reds.size(); ++j) {
    const int id = reds[j];
    body.push_back(fmt::format("tl.store(part + ({} + o) * NP + p, {})",
                               static_cast<int64_t>(j) * rows_,
                               ReduceText(V(id).reduce, "acc" + std::to_string(id), 0, false)));
  }
  Lines out = {
      "@triton.jit",
      fmt::format("def _split_stage{}({}CHUNK: tl.constexpr, NP: tl.constexpr, BR: tl.constexpr, "
                  "NS: tl.constexpr):",
                  s, Params())};
  Append(out, body, 4);
  return Join(out);
}

std::string Writer::SplitCombine(int s) {
  const TritonIndex n = SplitIndex();
  Lines body = SplitPrologue(s, false);
  body.push_back("q = tl.arange(0, NPB)");
  const auto& reds = region_.stages[static_cast<size_t>(s)].reductions;
  for (size_t j = 0; j < reds.size(); ++j) {
    const int id = reds[j];
    const ReduceKind k = V(id).reduce;
    body.push_back(fmt::format(
        "row{} = {}.to(tl.float32)", id,
        ReduceText(k,
                   fmt::format("tl.load(part + ({} + o) * NP + q, mask=q < NP, other={})",
                               static_cast<int64_t>(j) * rows_, Identity(k)),
                   0, false)));
  }
  Append(body, RowSection(s, n), 0);
  for (const auto& [id, slot] : slot_) {
    if (RowStage(id) == s)
      body.push_back(fmt::format("tl.store(rowbuf + {} + o, row{})", slot * rows_, id));
  }
  if (s + 1 == static_cast<int>(region_.stages.size())) Append(body, RowOutputs(n), 0);
  Lines out = {
      "@triton.jit",
      fmt::format("def _split_combine{}({}NP: tl.constexpr, NPB: tl.constexpr):", s, Params())};
  Append(out, body, 4);
  return Join(out);
}

std::string Writer::SplitElements() {
  const TritonIndex n = SplitIndex();
  Lines body = SplitPrologue(static_cast<int>(region_.stages.size()), true);
  body.push_back(SplitLoop());
  Append(body, SplitRange(), 0);
  TritonBlock b;
  ElementOutputs(n, b);
  Append(body, b.lines, 4);
  Lines out = {
      "@triton.jit",
      fmt::format("def _split_elements({}CHUNK: tl.constexpr, NP: tl.constexpr, BR: tl.constexpr, "
                  "NS: tl.constexpr):",
                  Params())};
  Append(out, body, 4);
  return Join(out);
}

/// One program: the tail reductions over the buffered rows in a fixed order, then
/// the scalar ops and the scalar outputs.
std::string Writer::Tail() {
  TritonIndex n;
  n.o = "0";
  n.i = "0";
  TritonBlock b;
  const ir::Region::TailOrder tail = region_.Tail();
  for (const ir::Value* v : tail.values) {
    if (v->kind == ValueKind::kElementwise) {
      const std::string rhs = emit_.RowDefinition(v->id, n, b);
      b.lines.push_back(fmt::format("t{} = {}", v->id, rhs));
      continue;
    }
    const ReduceKind k = v->reduce;
    const std::string load =
        fmt::format("tl.load(tb{} + q, mask=q < {}, other={})", v->operands[0], rows_, Identity(k));
    b.lines.insert(b.lines.end(), {fmt::format("acc = tl.full([TB], {}, {})", Identity(k), Acc(k)),
                                   fmt::format("for q0 in tl.range(0, {}, TB):", rows_),
                                   "    q = q0 + tl.arange(0, TB)",
                                   fmt::format("    acc = {}", Combine(k, "acc", ToAcc(k, load))),
                                   fmt::format("t{} = {}.to(tl.float32)", v->id, ReduceText(k, "acc", 0, false))});
  }
  for (size_t k : tail.outputs) {
    b.lines.push_back(fmt::format("tl.store(out{}, t{}.to({}))", k, emit_.Base(g_.outputs[k]), OutType(k)));
  }
  Lines out = {"@triton.jit", "def _tail(" + Params() + "TB: tl.constexpr):"};
  Append(out, b.lines, 4);
  return Join(out);
}

std::string Writer::Entry() const {
  const int64_t O = region_.outer, R = region_.reduce, I = region_.inner;
  Lines body = {"dev = outputs[0].device"};
  for (int id : region_.tail_inputs) {
    body.push_back(
        fmt::format("tb{} = torch.empty({}, dtype=torch.float32, device=dev)", id, rows_));
  }
  const std::string args = Args();
  const std::string w = fmt::format("num_warps={}", s_.num_warps);
  if (s_.layout == TritonLayout::kSplit) {
    const int64_t np = s_.programs_per_row;
    const int64_t chunk = ((R + np - 1) / np + s_.block_r - 1) / s_.block_r * s_.block_r;
    body.push_back(fmt::format("rowbuf = torch.empty({}, dtype=torch.float32, device=dev)",
                               std::max<int64_t>(1, static_cast<int64_t>(slot_.size()) * rows_)));
    body.push_back(fmt::format("part = torch.empty({}, dtype={}, device=dev)",
                               std::max<int64_t>(1, static_cast<int64_t>(max_stage_) * rows_ * np),
                               PartType()));
    const std::string tiles =
        fmt::format("CHUNK={}, NP={}, BR={}, NS={}, {}", chunk, np, s_.block_r, s_.num_stages, w);
    for (size_t s = 0; s < region_.stages.size(); ++s) {
      body.push_back(fmt::format("_split_stage{}[({}, {})]({}{})", s, rows_, np, args, tiles));
      body.push_back(fmt::format("_split_combine{}[({},)]({}NP={}, NPB={}, num_warps=4)", s, rows_,
                                 args, np, PowerOfTwoAtLeast(np)));
    }
    if (HasElementOutputs())
      body.push_back(fmt::format("_split_elements[({}, {})]({}{})", rows_, np, args, tiles));
  } else if (s_.layout == TritonLayout::kRows) {
    const int64_t br = s_.single_pass ? PowerOfTwoAtLeast(R) : s_.block_r;
    body.push_back(fmt::format("_rowwise[({},)]({}BQ={}, BR={}, BI=1, NS={}, {})",
                               (O + s_.rows_per_program - 1) / s_.rows_per_program, args,
                               s_.rows_per_program, br, s_.num_stages, w));
  } else {
    const int64_t br = s_.single_pass ? PowerOfTwoAtLeast(R) : s_.block_r;
    body.push_back(fmt::format("_rowwise[({},)]({}BQ=1, BR={}, BI={}, NS={}, {})",
                               O * ((I + s_.block_i - 1) / s_.block_i), args, br, s_.block_i,
                               s_.num_stages, w));
  }
  if (!region_.tail_inputs.empty()) {
    body.push_back(fmt::format("_tail[(1,)]({}TB={}, num_warps=4)", args, kTritonTailBlock));
  }
  Lines out = {"def kernelevolve_entry(inputs, outputs):"};
  Append(out, body, 4);
  return Join(out);
}
}  // namespace kernelevolve::operators::templates::triton_rowwise
