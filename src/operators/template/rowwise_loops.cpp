#include "operators/template/rowwise_loops.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include "operators/template/reduce_spelling.h"
#include "operators/template/rowwise_emit.h"

namespace kernelevolve::operators::templates {
namespace {

using ir::Level;
using ir::ReduceKind;
using ir::ValueKind;

std::string Indent(const std::vector<std::string>& lines, int spaces) {
  std::string pad(static_cast<size_t>(spaces), ' ');
  std::string out;
  for (const auto& l : lines) out += (l.rfind("#pragma", 0) == 0 ? "" : pad) + l + "\n";
  return out;
}

class Writer {
 public:
  Writer(const ir::Region& region, const LoopSettings& s)
      : g_(region.graph), region_(region), s_(s), emit_(region, s.flavor) {}

  std::string Run() {
    std::vector<std::string> out;
    out.push_back(fmt::format("constexpr int64_t O = {}, R = {}, I = {};  // [outer, reduced, inner]",
                              region_.outer, region_.reduce, region_.inner));
    out.push_back("constexpr int64_t kRows = O * I;");
    for (int id : region_.tail_inputs) {
      out.push_back(fmt::format("std::vector<float> tb{}(kRows);  // rows kept for a tail reduction", id));
    }
    std::vector<std::string> body;
    if (region_.SplitR()) {
      body = SplitR();
    } else if (region_.inner > 1 && s_.r_outer) {
      body = ROuter();
    } else {
      body = Rows();
    }
    out.insert(out.end(), body.begin(), body.end());
    const auto tail = Tail();
    out.insert(out.end(), tail.begin(), tail.end());
    return Indent(out, 2);
  }

 private:
  const ir::Value& V(int id) const { return region_.ValueOf(id); }
  Level L(int id) const { return region_.LevelOf(id); }
  std::string Acc(ReduceKind k) const { return CppAccumulatorType(k, s_.acc_double); }
  std::string Reductions(const ir::Stage& st) const {
    std::string out;
    for (int id : st.reductions) out += fmt::format(" reduction({} : a{})", OmpReductionIdentifier(V(id).reduce), id);
    return out;
  }
  /// Row values defined by statements (not aliases, not stage results).
  bool DefinedRow(int id) const {
    return L(id) == Level::kRow && V(id).kind == ValueKind::kElementwise;
  }
  bool StageRow(int id) const {
    return L(id) == Level::kRow && V(id).kind == ValueKind::kReduce && emit_.Base(id) == id;
  }
  std::string OutPtr(size_t k) const { return "out" + std::to_string(k); }

  /// Row ops ready after stage `s` (-1: before the first); scalar or array form.
  void RowSection(int s, const LoopNames& n, std::vector<std::string>& out) {
    Block b;
    for (const auto& v : g_.values) {
      if (!DefinedRow(v.id) || region_.row_stage[static_cast<size_t>(v.id)] != s) continue;
      const std::string rhs = emit_.RowDefinition(v.id, n, b);
      b.lines.push_back(n.row_arrays ? fmt::format("row{}[ii] = {};", v.id, rhs)
                                     : fmt::format("const auto row{} = {};", v.id, rhs));
    }
    out.insert(out.end(), b.lines.begin(), b.lines.end());
  }

  /// The accumulation body of one stage at (o, r, i). The accumulator of reduction
  /// `id` is a<id>, a<id>[ii] (n.row_arrays: a block of i) or p<id>[l] (n.partials).
  std::vector<std::string> StageBody(const ir::Stage& st, const LoopNames& n) {
    Block b;
    for (int id : st.reductions) {
      const std::string v = emit_.Emit(V(id).operands[0], false, n, b);
      const std::string name = n.row_arrays ? fmt::format("a{}[ii]", id)
                               : n.partials ? fmt::format("p{}[l]", id)
                                            : "a" + std::to_string(id);
      b.lines.push_back(CppReduceUpdate(V(id).reduce, name, v));
    }
    return b.lines;
  }

  /// Writes of element outputs at (o, r, i).
  std::vector<std::string> ElementOutputs(const LoopNames& n) {
    Block b;
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      if (L(g_.outputs[k]) != Level::kElement) continue;
      const std::string v = emit_.Emit(g_.outputs[k], false, n, b);
      b.lines.push_back(fmt::format("{}[{}] = {};", OutPtr(k), emit_.ElementIndex(n), emit_.OutputCast(k, v)));
    }
    return b.lines;
  }
  bool HasElementOutputs() const {
    return std::any_of(g_.outputs.begin(), g_.outputs.end(),
                       [&](int id) { return L(id) == Level::kElement; });
  }

  /// Writes of row outputs and tail buffers at (o, i).
  std::vector<std::string> RowOutputs(const LoopNames& n) {
    Block b;
    const std::string q = emit_.RowIndex(n);
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      if (L(g_.outputs[k]) != Level::kRow) continue;
      b.lines.push_back(fmt::format("{}[{}] = {};", OutPtr(k), q, emit_.OutputCast(k, emit_.RowRef(g_.outputs[k], n))));
    }
    for (int id : region_.tail_inputs) {
      const std::string v = emit_.Emit(id, true, n, b);
      b.lines.push_back(fmt::format("tb{}[{}] = {};", id, q, v));
    }
    return b.lines;
  }

  /// The r split factor D of the rows form: broadcast operands of element ops indexed
  /// by r / D' (D' a multiple of D, e.g. group norm's per-channel weight, r / HW) stay
  /// fixed over runs of D consecutive r, so r runs as r1 * D + r2 and their loads move
  /// out of the inner loop. 0: no split (no such operand, or no D dividing R that all
  /// their divisors are multiples of, or D < 8).
  int64_t SplitFactor() const {
    std::vector<int64_t> divisors;
    for (const auto& v : g_.values) {
      if (L(v.id) != Level::kElement || v.kind != ValueKind::kElementwise) continue;
      for (int op : v.operands) {
        emit_.ForEachLeafTerms(op, v.shape, [&](const std::vector<ir::IndexTerm>& terms) {
          for (const auto& t : terms) {
            if (t.part == ir::Part::kReduce && t.divisor > 1) divisors.push_back(t.divisor);
          }
        });
      }
    }
    if (divisors.empty()) return 0;
    const int64_t d = *std::min_element(divisors.begin(), divisors.end());
    if (d < 8 || region_.reduce % d != 0) return 0;
    for (int64_t x : divisors) {
      if (x % d != 0) return 0;
    }
    return d;
  }

  /// Whether a stage loop over `length` consecutive r (R, or the inner r2 run of an
  /// r split) accumulates into kPartialLanes partials per reduction (PartialLoop).
  static bool UsePartials(int64_t length) {
    return length >= 4 * kPartialLanes && length % kPartialLanes == 0;
  }

  /// One loop over r of the rows form: `pragma` then the loop, whose body `body`
  /// emits; small values that do not vary with r are hoisted in front of it (or, with
  /// an r split, in front of the inner loop over r2). `stage`: the loop accumulates
  /// this stage's reductions; when the run of r allows (UsePartials), into partials
  /// (`body` is then called with LoopNames::partials set).
  void RLoop(const std::string& pragma, const std::function<std::vector<std::string>(const LoopNames&)>& body,
             std::vector<std::string>& row, const ir::Stage* stage = nullptr) {
    LoopNames n;
    n.r_split = split_;
    Block hoist;
    std::map<int, std::string> computed;
    emit_.SetHoist(&hoist);
    emit_.SetBuffers(&reads_, &used_, &computed);
    n.partials = stage != nullptr && UsePartials(split_ != 0 ? split_ : region_.reduce);
    std::vector<std::string> lines = body(n);
    if (split_ != 0 && hoist.lines.empty()) {  // nothing moved out: keep one flat loop
      n.r_split = 0;
      computed.clear();
      n.partials = stage != nullptr && UsePartials(region_.reduce);
      lines = body(n);
    }
    emit_.SetHoist(nullptr);
    emit_.SetBuffers(nullptr, nullptr, nullptr);
    std::set<int> stored;
    for (const auto& [id, var] : computed) {
      if (buffered_.count(id) != 0 && reads_.count(id) == 0) {
        lines.push_back(fmt::format("buf{}[r] = {};", id, var));
        stored.insert(id);
      }
    }
    for (int id : stored) reads_[id] = fmt::format("buf{}[r]", id);
    std::set<int> ids;
    for (const auto& kv : computed) ids.insert(kv.first);
    loop_values_.push_back(std::move(ids));
    const bool partials = n.partials;
    if (partials) PartialsBegin(*stage, row);
    if (n.r_split == 0) {
      row.insert(row.end(), hoist.lines.begin(), hoist.lines.end());
      if (partials) {
        PartialLoop("R", "r", "", lines, row);
      } else {
        row.push_back(pragma);
        row.push_back("for (int64_t r = 0; r < R; ++r) {");
        for (const auto& l : lines) row.push_back("  " + l);
        row.push_back("}");
      }
    } else {
      row.push_back(fmt::format("for (int64_t {0} = 0; {0} < R / {1}; ++{0}) {{  // r = {0} * {1} + r2", n.r_hi, split_));
      for (const auto& l : hoist.lines) row.push_back("  " + l);
      const std::string r_of_r2 = fmt::format("const int64_t r = {} * {} + r2;", n.r_hi, split_);
      if (partials) {
        std::vector<std::string> inner;
        PartialLoop(std::to_string(split_), "r2", r_of_r2, lines, inner);
        for (const auto& l : inner) row.push_back((l.rfind("#pragma", 0) == 0 ? "" : "  ") + l);
      } else {
        row.push_back(pragma);
        row.push_back(fmt::format("  for (int64_t r2 = 0; r2 < {}; ++r2) {{", split_));
        row.push_back("    " + r_of_r2);
        for (const auto& l : lines) row.push_back("    " + l);
        row.push_back("  }");
      }
      row.push_back("}");
    }
    if (partials) PartialsEnd(*stage, row);
  }

  /// Partials of a stage's reductions: kPartialLanes independent accumulators per
  /// reduction (p<id>[l] accumulates r = l mod kPartialLanes), combined into a<id> after
  /// the loop. One `#pragma omp simd reduction` accumulator is a single vector register
  /// whose every add waits for the previous one (a latency chain: ~3 cycles per vector
  /// on the development EPYC); kPartialLanes = 64 floats (4 AVX-512 or 8 AVX2 vectors) keep 4-8 chains
  /// in flight. Measured on layer norm's moments over [1024, 2048] float32, 2 threads:
  /// 366 -> 323 us for the kernel without its GELU.
  void PartialsBegin(const ir::Stage& st, std::vector<std::string>& row) const {
    for (int id : st.reductions) {
      row.push_back(fmt::format("alignas(64) {} p{}[{}];  // partials (independent accumulators)", Acc(V(id).reduce),
                                id, kPartialLanes));
      row.push_back(fmt::format("for (int64_t l = 0; l < {}; ++l) p{}[l] = {};", kPartialLanes, id,
                                CppReduceInit(V(id).reduce)));
    }
  }
  void PartialsEnd(const ir::Stage& st, std::vector<std::string>& row) const {
    for (int id : st.reductions) {
      row.push_back(fmt::format("for (int64_t l = 0; l < {}; ++l) {}", kPartialLanes,
                                CppReduceUpdate(V(id).reduce, "a" + std::to_string(id), fmt::format("p{}[l]", id))));
    }
  }
  /// `for (var = 0; var < length; ...)` in steps of kPartialLanes, the lanes l inner
  /// and vectorized; `define_r` (when not empty) derives r from `var`.
  static void PartialLoop(const std::string& length, const std::string& var, const std::string& define_r,
                          const std::vector<std::string>& lines, std::vector<std::string>& out) {
    out.push_back(fmt::format("for (int64_t {0}b = 0; {0}b < {1}; {0}b += {2}) {{", var, length, kPartialLanes));
    out.push_back("#pragma omp simd");
    out.push_back(fmt::format("  for (int64_t l = 0; l < {}; ++l) {{", kPartialLanes));
    out.push_back(fmt::format("    const int64_t {0} = {0}b + l;", var));
    if (!define_r.empty()) out.push_back("    " + define_r);
    for (const auto& l : lines) out.push_back("    " + l);
    out.push_back("  }");
    out.push_back("}");
  }

  /// Rows of the region one at a time; r innermost (I == 1 or loop order i_outer).
  std::vector<std::string> Rows() {
    split_ = SplitFactor();
    buffered_.clear();
    if (s_.row_buffer) buffered_ = ChooseRowBuffers();
    ResetPass();
    return RowsPass();
  }

  void ResetPass() {
    reads_.clear();
    used_.clear();
    loop_values_.clear();
  }

 public:
  /// Element values of the rows form worth a row buffer (knob row_buffer): float
  /// values computed in two or more loops over r, kept only while a later loop still
  /// reads them once buffered (a value only feeding a buffered one is dropped), at
  /// most kMaxBufferedFloats / R of them. Empty when the form has no such value.
  std::set<int> ChooseRowBuffers() {
    constexpr int64_t kMaxBufferedFloats = 32768;  // 128 KiB of stack per thread
    if (region_.SplitR() || region_.inner != 1 || region_.reduce > kMaxBufferedFloats) return {};
    if (split_ == 0) split_ = SplitFactor();
    buffered_.clear();
    ResetPass();
    RowsPass();
    std::map<int, int> loops;
    for (const auto& ids : loop_values_) {
      for (int id : ids) ++loops[id];
    }
    std::set<int> chosen;
    for (const auto& [id, count] : loops) {
      if (count >= 2 && V(id).dtype == core::DType::kFloat32) chosen.insert(id);
    }
    for (int round = 0; round < 4 && !chosen.empty(); ++round) {
      buffered_ = chosen;
      ResetPass();
      RowsPass();
      std::set<int> kept;
      for (int id : chosen) {
        if (used_.count(id) != 0) kept.insert(id);
      }
      if (kept == chosen) break;
      chosen = std::move(kept);
    }
    while (!chosen.empty() && static_cast<int64_t>(chosen.size()) * region_.reduce > kMaxBufferedFloats) {
      chosen.erase(std::prev(chosen.end()));
    }
    buffered_.clear();
    ResetPass();
    return chosen;
  }

 private:
  std::vector<std::string> RowsPass() {
    std::vector<std::string> out;
    LoopNames n;
    std::vector<std::string> row;
    row.push_back("const int64_t o = q / I, i = q % I;");
    row.push_back("(void)o; (void)i;");
    for (int id : buffered_) {
      row.push_back(fmt::format("alignas(64) float buf{}[R];  // row buffer: computed once, read again", id));
    }
    RowSection(-1, n, row);
    for (size_t s = 0; s < region_.stages.size(); ++s) {
      const auto& st = region_.stages[s];
      for (int id : st.reductions) {
        row.push_back(fmt::format("{} a{} = {};", Acc(V(id).reduce), id, CppReduceInit(V(id).reduce)));
      }
      RLoop("#pragma omp simd" + Reductions(st),
            [&](const LoopNames& ln) { return StageBody(st, ln); },
            row, &st);
      for (int id : st.reductions) row.push_back(fmt::format("const float row{0} = static_cast<float>(a{0});", id));
      RowSection(static_cast<int>(s), n, row);
    }
    if (HasElementOutputs()) {
      RLoop("#pragma omp simd", [&](const LoopNames& ln) { return ElementOutputs(ln); }, row);
    }
    for (const auto& l : RowOutputs(n)) row.push_back(l);
    if (s_.threaded) {
      out.push_back(fmt::format("constexpr int64_t kRowsPerChunk = {};", s_.rows_per_chunk));
      out.push_back("constexpr int64_t kNumChunks = (kRows + kRowsPerChunk - 1) / kRowsPerChunk;");
      out.push_back("#pragma omp parallel for schedule(static) if (kNumChunks > 1)");
      out.push_back("for (int64_t c = 0; c < kNumChunks; ++c) {");
      out.push_back("  const int64_t q_end = std::min(kRows, (c + 1) * kRowsPerChunk);");
      out.push_back("  for (int64_t q = c * kRowsPerChunk; q < q_end; ++q) {");
      for (const auto& l : row) out.push_back((l.rfind("#pragma", 0) == 0 ? "" : "    ") + l);
      out.push_back("  }");
      out.push_back("}");
    } else {
      out.push_back("for (int64_t q = 0; q < kRows; ++q) {");
      for (const auto& l : row) out.push_back((l.rfind("#pragma", 0) == 0 ? "" : "  ") + l);
      out.push_back("}");
    }
    return out;
  }

  /// A block of kIB values of i per step of r (I > 1, loop order r_outer).
  std::vector<std::string> ROuter() {
    std::vector<std::string> out;
    LoopNames n;
    n.row_arrays = true;
    const int64_t ib = std::min(s_.i_block, region_.inner);
    out.push_back(fmt::format("constexpr int64_t kIB = {};  // values of i per block", ib));
    out.push_back("constexpr int64_t kNib = (I + kIB - 1) / kIB;");
    if (s_.threaded) out.push_back("#pragma omp parallel for schedule(static) if (O * kNib > 1)");
    out.push_back("for (int64_t c = 0; c < O * kNib; ++c) {");
    std::vector<std::string> blk;
    blk.push_back("const int64_t o = c / kNib, i0 = (c % kNib) * kIB;");
    // A constant block width where blocks tile I: GCC then keeps a narrow block's
    // accumulators in registers across r instead of a load and a store per element and
    // step (sum over dim 1 of 32x256x256 with double accumulators, i_block 64, AVX2 VM:
    // 0.62x -> 0.88x eager).
    blk.push_back(region_.inner % ib == 0 ? "constexpr int64_t ni = kIB;" : "const int64_t ni = std::min(kIB, I - i0);");
    blk.push_back("(void)o;");
    for (const auto& v : g_.values) {
      if (DefinedRow(v.id) || StageRow(v.id)) {
        blk.push_back(fmt::format("alignas(64) {} row{}[kIB];", v.dtype == core::DType::kBool ? "bool" : "float", v.id));
      }
    }
    auto ii_loop = [&](std::vector<std::string> lines) {
      blk.push_back("#pragma omp simd");
      blk.push_back("for (int64_t ii = 0; ii < ni; ++ii) {");
      blk.push_back("  const int64_t i = i0 + ii;");
      blk.push_back("  (void)i;");
      for (const auto& l : lines) blk.push_back("  " + l);
      blk.push_back("}");
    };
    {
      std::vector<std::string> pre;
      RowSection(-1, n, pre);
      if (!pre.empty()) ii_loop(pre);
    }
    for (size_t s = 0; s < region_.stages.size(); ++s) {
      const auto& st = region_.stages[s];
      std::vector<std::string> init;
      for (int id : st.reductions) {
        blk.push_back(fmt::format("alignas(64) {} a{}[kIB];", Acc(V(id).reduce), id));
        init.push_back(fmt::format("a{}[ii] = {};", id, CppReduceInit(V(id).reduce)));
      }
      ii_loop(init);
      blk.push_back("for (int64_t r = 0; r < R; ++r) {");
      blk.push_back("#pragma omp simd");
      blk.push_back("  for (int64_t ii = 0; ii < ni; ++ii) {");
      blk.push_back("    const int64_t i = i0 + ii;");
      for (const auto& l : StageBody(st, n)) blk.push_back("    " + l);
      blk.push_back("  }");
      blk.push_back("}");
      std::vector<std::string> fin;
      for (int id : st.reductions) fin.push_back(fmt::format("row{0}[ii] = static_cast<float>(a{0}[ii]);", id));
      RowSection(static_cast<int>(s), n, fin);
      ii_loop(fin);
    }
    if (HasElementOutputs()) {
      blk.push_back("for (int64_t r = 0; r < R; ++r) {");
      blk.push_back("#pragma omp simd");
      blk.push_back("  for (int64_t ii = 0; ii < ni; ++ii) {");
      blk.push_back("    const int64_t i = i0 + ii;");
      for (const auto& l : ElementOutputs(n)) blk.push_back("    " + l);
      blk.push_back("  }");
      blk.push_back("}");
    }
    const auto rows = RowOutputs(n);
    if (!rows.empty()) ii_loop(rows);
    for (const auto& l : blk) out.push_back((l.rfind("#pragma", 0) == 0 ? "" : "  ") + l);
    out.push_back("}");
    return out;
  }

  /// The lines of a loop body from `body`, with the small values that do not vary
  /// with r appended to `before` (statements placed ahead of the loop) instead.
  std::vector<std::string> Hoisted(const std::function<std::vector<std::string>()>& body,
                                   std::vector<std::string>& before) {
    Block hoist;
    emit_.SetHoist(&hoist);
    std::vector<std::string> lines = body();
    emit_.SetHoist(nullptr);
    before.insert(before.end(), hoist.lines.begin(), hoist.lines.end());
    return lines;
  }

  /// One row (O = I = 1): each stage's sweep over r split into fixed chunks whose
  /// partials are combined in chunk order (the same result for any thread count).
  std::vector<std::string> SplitR() {
    std::vector<std::string> out;
    LoopNames n;
    out.push_back("constexpr int64_t o = 0, i = 0;");
    out.push_back("(void)o; (void)i;");
    out.push_back(fmt::format("constexpr int64_t kChunk = {};  // elements per partial", s_.r_chunk));
    out.push_back("constexpr int64_t kNumChunks = (R + kChunk - 1) / kChunk;");
    RowSection(-1, n, out);
    const std::string par = "#pragma omp parallel for schedule(static) if (kNumChunks > 1)";
    for (size_t s = 0; s < region_.stages.size(); ++s) {
      const auto& st = region_.stages[s];
      for (int id : st.reductions) {
        out.push_back(fmt::format("std::vector<{}> p{}(kNumChunks);", Acc(V(id).reduce), id));
      }
      const std::vector<std::string> body = Hoisted([&] { return StageBody(st, n); }, out);
      if (s_.threaded) out.push_back(par);
      out.push_back("for (int64_t c = 0; c < kNumChunks; ++c) {");
      for (int id : st.reductions) {
        out.push_back(fmt::format("  {} a{} = {};", Acc(V(id).reduce), id, CppReduceInit(V(id).reduce)));
      }
      out.push_back("  const int64_t r_end = std::min(R, (c + 1) * kChunk);");
      out.push_back("#pragma omp simd" + Reductions(st));
      out.push_back("  for (int64_t r = c * kChunk; r < r_end; ++r) {");
      for (const auto& l : body) out.push_back("    " + l);
      out.push_back("  }");
      for (int id : st.reductions) out.push_back(fmt::format("  p{0}[c] = a{0};", id));
      out.push_back("}");
      for (int id : st.reductions) {
        out.push_back(fmt::format("{} a{} = {};", Acc(V(id).reduce), id, CppReduceInit(V(id).reduce)));
        out.push_back(fmt::format("for (int64_t c = 0; c < kNumChunks; ++c) {}",
                                  CppReduceUpdate(V(id).reduce, "a" + std::to_string(id), fmt::format("p{}[c]", id))));
        out.push_back(fmt::format("const float row{0} = static_cast<float>(a{0});", id));
      }
      RowSection(static_cast<int>(s), n, out);
    }
    if (HasElementOutputs()) {
      const std::vector<std::string> body = Hoisted([&] { return ElementOutputs(n); }, out);
      if (s_.threaded) out.push_back(par);
      out.push_back("for (int64_t c = 0; c < kNumChunks; ++c) {");
      out.push_back("  const int64_t r_end = std::min(R, (c + 1) * kChunk);");
      out.push_back("#pragma omp simd");
      out.push_back("  for (int64_t r = c * kChunk; r < r_end; ++r) {");
      for (const auto& l : body) out.push_back("    " + l);
      out.push_back("  }");
      out.push_back("}");
    }
    const auto rows = RowOutputs(n);
    out.insert(out.end(), rows.begin(), rows.end());
    return out;
  }

  /// Tail reductions over the buffered rows, in order, then scalar ops and outputs.
  std::vector<std::string> Tail() {
    LoopNames n;  // one program: the outer and inner indices are 0
    n.o = n.i = "0";
    Block b;
    const ir::Region::TailOrder tail = region_.Tail();
    for (const ir::Value* v : tail.values) {
      if (v->kind == ValueKind::kElementwise) {
        b.lines.push_back(fmt::format("const auto t{} = {};", v->id, emit_.RowDefinition(v->id, n, b)));
        continue;
      }
      const std::string acc = "ta" + std::to_string(v->id);
      b.lines.push_back(fmt::format("{} {} = {};", Acc(v->reduce), acc, CppReduceInit(v->reduce)));
      b.lines.push_back(fmt::format("for (int64_t q = 0; q < kRows; ++q) {}",
                                    CppReduceUpdate(v->reduce, acc, fmt::format("tb{}[q]", v->operands[0]))));
      b.lines.push_back(fmt::format("const float t{} = static_cast<float>({});", v->id, acc));
    }
    for (size_t k : tail.outputs) {
      const std::string value = "t" + std::to_string(emit_.Base(g_.outputs[k]));
      b.lines.push_back(fmt::format("{}[0] = {};", OutPtr(k), emit_.OutputCast(k, value)));
    }
    return b.lines;
  }

  const ir::Graph& g_;
  const ir::Region& region_;
  static constexpr int64_t kPartialLanes = 64;  // PartialsBegin

  const LoopSettings& s_;
  ExprEmitter emit_;
  int64_t split_ = 0;  // r split factor of the rows form (SplitFactor)
  // Row buffers of the rows form (knob row_buffer, ChooseRowBuffers).
  std::set<int> buffered_;                  // values stored in buf<id>[R]
  std::map<int, std::string> reads_;        // buffered values stored by an earlier loop
  std::set<int> used_;                      // buffered values read by a later loop
  std::vector<std::set<int>> loop_values_;  // element values computed, per loop over r
};

}  // namespace

std::string LoopNest(const ir::Region& region, const LoopSettings& settings) {
  return Writer(region, settings).Run();
}

std::set<int> RowBufferValues(const ir::Region& region) {
  LoopSettings settings;
  settings.row_buffer = true;
  return Writer(region, settings).ChooseRowBuffers();
}

}  // namespace kernelevolve::operators::templates
