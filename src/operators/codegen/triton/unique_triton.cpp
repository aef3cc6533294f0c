#include "operators/codegen/triton/unique_triton.h"

#include <fmt/format.h>

#include "core/error.h"
#include "operators/codegen/triton/compaction_triton.h"

namespace kernelevolve::operators::codegen {
namespace {

constexpr const char* kCountingKernels = R"PY(

@triton.jit
def _ke_min_max(x, bounds, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m, other=0)
    tl.atomic_min(bounds, tl.min(tl.where(m, v, 9223372036854775807), 0))
    tl.atomic_max(bounds + 1, tl.max(tl.where(m, v, -9223372036854775807 - 1), 0))


# The table's origin (the least id) and the slots in use (max - min + 1, 0 when that
# exceeds the capacity or overflows: then nothing is counted).
@triton.jit
def _ke_span(bounds, capacity):
    lo = tl.load(bounds)
    span = tl.load(bounds + 1) - lo + 1
    ok = (span > 0) & (span <= capacity)
    return lo, tl.where(ok, span, 0), ok


@triton.jit
def _ke_zero_table(table, bounds, capacity, BLOCK: tl.constexpr):
    lo, span, ok = _ke_span(bounds, capacity)
    j = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(table + j, tl.zeros([BLOCK], tl.int32), mask=j < span)


@triton.jit
def _ke_histogram(x, table, bounds, n, capacity, BLOCK: tl.constexpr):
    lo, span, ok = _ke_span(bounds, capacity)
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = (i < n) & ok
    v = tl.load(x + i, mask=m, other=0)
    tl.atomic_add(table + (v - lo), tl.full([BLOCK], 1, tl.int32), mask=m)


@triton.jit
def _ke_table_counts(table, bounds, counts, capacity, BLOCK: tl.constexpr):
    lo, span, ok = _ke_span(bounds, capacity)
    j = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    c = tl.load(table + j, mask=j < span, other=0)
    tl.store(counts + tl.program_id(0), tl.sum((c != 0).to(tl.int64), 0))


# Program b: the table's nonzero slots among [b * BLOCK, (b + 1) * BLOCK) go to their
# ranks (values lo + slot, counts), and each such slot then holds its rank.
@triton.jit
def _ke_pack_table(table, bounds, starts, uniq, counts, capacity, limit, HAS_VALUES: tl.constexpr,
                   HAS_COUNTS: tl.constexpr, BLOCK: tl.constexpr):
    lo, span, ok = _ke_span(bounds, capacity)
    j = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    c = tl.load(table + j, mask=j < span, other=0)
    chosen = c != 0
    pos = _ke_block_ranks(chosen, starts)
    keep = chosen & (pos < limit)
    if HAS_VALUES:
        tl.store(uniq + pos, lo + j, mask=keep)
    if HAS_COUNTS:
        tl.store(counts + pos, c.to(tl.int64), mask=keep)
    tl.store(table + j, pos.to(tl.int32), mask=chosen)


@triton.jit
def _ke_inverse(x, table, bounds, inverse, n, capacity, BLOCK: tl.constexpr):
    lo, span, ok = _ke_span(bounds, capacity)
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + i, mask=(i < n) & ok, other=0)
    rank = tl.load(table + (v - lo), mask=(i < n) & ok, other=-1)
    tl.store(inverse + i, rank.to(tl.int64), mask=i < n)


# The number of distinct values into a size tensor; -1 when the ids span more slots than
# the table has (nothing was counted).
@triton.jit
def _ke_write_count(starts, bounds, size, blocks, capacity):
    lo, span, ok = _ke_span(bounds, capacity)
    tl.store(size, tl.where(ok, tl.load(starts + blocks), -1))
)PY";

}  // namespace

std::string PrintUniqueTriton(const ir::UniqueSpec& s, const UniqueTritonSchedule& k, const std::string& header) {
  if (s.dtype != core::DType::kInt64) throw core::InternalError("PrintUniqueTriton: the counting table needs int64");
  if (s.outputs.empty()) throw core::InternalError("PrintUniqueTriton: a unique with no outputs");
  const int nout = static_cast<int>(s.outputs.size());
  int values = -1, inverse = -1, counts = -1;
  for (int i = 0; i < nout; ++i) {
    switch (s.outputs[static_cast<size_t>(i)]) {
      case ir::UniqueOutput::kValues: values = i; break;
      case ir::UniqueOutput::kInverse: inverse = i; break;
      case ir::UniqueOutput::kCounts: counts = i; break;
    }
  }
  const int sized = (values >= 0) + (counts >= 0);
  std::string out = header + "import torch\nimport triton\nimport triton.language as tl\n" + StreamCompactionTriton() +
                    kCountingKernels;
  out += fmt::format(R"PY(

def _ke_check(t, what, shape):
    if t.dtype != torch.int64 or tuple(t.shape) != tuple(shape):
        raise ValueError(f"{{what}} is {{t.dtype}} {{tuple(t.shape)}}; expected int64 {{tuple(shape)}}")


def kernelevolve_entry(inputs, outputs):
    if len(inputs) < {num_inputs} or len(outputs) not in ({nout}, {nout_sized}):
        raise ValueError(f"{{len(inputs)}} inputs and {{len(outputs)}} outputs; this kernel takes {num_inputs} inputs "
                         "and {nout} outputs ({nout_sized} with the size tensors)")
    x = inputs[{input}]
    if x.dtype != torch.int64 or x.dim() != {rank}:
        raise ValueError(f"x is {{x.dtype}} of rank {{x.dim()}}; this kernel takes int64 of rank {rank}")
    n = x.numel()
    if n >= 2 ** 31:
        raise ValueError(f"{{n}} elements; the counting table's ranks are int32")
    sizes = outputs[{nout}:]
    for t in sizes:
        _ke_check(t, "a size tensor", (1,))
    limits = []
)PY",
                     fmt::arg("num_inputs", s.num_inputs), fmt::arg("nout", nout), fmt::arg("nout_sized", nout + sized),
                     fmt::arg("input", s.input), fmt::arg("rank", s.rank), fmt::arg("sized", sized));
  for (int i : {values, counts}) {
    if (i < 0) continue;
    out += fmt::format("    if outputs[{0}].dim() != 1:\n"
                       "        raise ValueError(f\"output {0} has rank {{outputs[{0}].dim()}}; expected 1\")\n"
                       "    _ke_check(outputs[{0}], \"output {0}\", (outputs[{0}].shape[0],))\n"
                       "    limits.append(outputs[{0}].shape[0])\n",
                       i);
  }
  if (inverse >= 0) out += fmt::format("    _ke_check(outputs[{0}], \"the inverse (output {0})\", x.shape)\n", inverse);
  out += fmt::format(
      R"PY(    device = x.device
    if n == 0:
        for t in sizes:
            t.fill_(0)
        return
    capacity = max(4 * n, 1 << 16)
    bounds = torch.empty(2, dtype=torch.int64, device=device)
    bounds[0].fill_(9223372036854775807)
    bounds[1].fill_(-9223372036854775808)
    table = torch.empty(capacity, dtype=torch.int32, device=device)
    blocks = triton.cdiv(capacity, {block})
    block_counts = torch.empty(blocks, dtype=torch.int64, device=device)
    starts = torch.empty(blocks + 1, dtype=torch.int64, device=device)
    grid = (triton.cdiv(n, {block}),)
    _ke_min_max[grid](x, bounds, n, BLOCK={block})
    _ke_zero_table[(blocks,)](table, bounds, capacity, BLOCK={block})
    _ke_histogram[grid](x, table, bounds, n, capacity, BLOCK={block}, num_warps={warps})
    _ke_table_counts[(blocks,)](table, bounds, block_counts, capacity, BLOCK={block})
    _ke_exclusive_scan[(1,)](block_counts, starts, blocks, BLOCK=1024)
    limit = min(limits) if limits else n
    _ke_pack_table[(blocks,)](table, bounds, starts, {values_arg}, {counts_arg}, capacity, limit,
                              HAS_VALUES={has_values}, HAS_COUNTS={has_counts}, BLOCK={block}, num_warps={warps})
)PY",
      fmt::arg("block", k.block), fmt::arg("warps", k.num_warps),
      fmt::arg("values_arg", values >= 0 ? fmt::format("outputs[{}]", values) : "table"),
      fmt::arg("counts_arg", counts >= 0 ? fmt::format("outputs[{}]", counts) : "table"),
      fmt::arg("has_values", values >= 0 ? "True" : "False"), fmt::arg("has_counts", counts >= 0 ? "True" : "False"));
  if (inverse >= 0) {
    out += fmt::format("    _ke_inverse[grid](x, table, bounds, outputs[{}], n, capacity, BLOCK={}, num_warps={})\n",
                       inverse, k.block, k.num_warps);
  }
  out += "    for t in sizes:\n        _ke_write_count[(1,)](starts, bounds, t, blocks, capacity)\n";
  return out;
}

}  // namespace kernelevolve::operators::codegen
