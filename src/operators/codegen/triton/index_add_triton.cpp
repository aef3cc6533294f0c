#include "operators/codegen/triton/index_add_triton.h"

#include <fmt/format.h>

#include "operators/codegen/triton/compaction_triton.h"

namespace kernelevolve::operators::codegen {
namespace {

constexpr const char* kIndexKernels = R"PY(
@triton.jit
def _zero(acc, total, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(acc + offs, tl.zeros([BLOCK], acc.dtype.element_ty), mask=offs < total)


@triton.jit
def _scatter(v, idx, acc, n, rows, width, ALPHA: tl.constexpr, SCALED: tl.constexpr,
             GATHER: tl.constexpr, BLOCK: tl.constexpr):
    pos = tl.program_id(0).to(tl.int64) * GATHER + tl.arange(0, GATHER)
    cols = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    pmask = pos < n
    r = tl.load(idx + pos, mask=pmask, other=0)
    r = tl.where(r < 0, r + rows, r)
    ok = pmask & (r >= 0) & (r < rows)
    m = ok[:, None] & (cols < width)[None, :]
    x = tl.load(v + pos[:, None] * width + cols[None, :], mask=m, other=0.0)
    if SCALED:
        x = x * ALPHA
    tl.atomic_add(acc + r[:, None] * width + cols[None, :], x.to(acc.dtype.element_ty), mask=m)


@triton.jit
def _finish(acc, base, y, total, FILL: tl.constexpr, HAS_SELF: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    s = tl.load(acc + offs, mask=mask, other=0.0)
    if HAS_SELF:
        b = tl.load(base + offs, mask=mask, other=0.0)
    else:
        b = tl.full([BLOCK], FILL, tl.float32)
    tl.store(y + offs, (b.to(s.dtype) + s).to(tl.float32), mask=mask)
)PY";

constexpr const char* kSegmentKernels = R"PY(
@triton.jit
def _segments(v, off, base, y, segments, width, n, FILL: tl.constexpr, HAS_SELF: tl.constexpr,
              ALPHA: tl.constexpr, SCALED: tl.constexpr, MEAN: tl.constexpr, ACC: tl.constexpr,
              GATHER: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    cmask = cols < width
    tile = tl.zeros([GATHER, BLOCK], ACC)
    valid = b < segments  # rows past the segments keep self (or the fill)
    start = tl.minimum(tl.maximum(tl.load(off + b, mask=valid, other=0), 0), n)
    end = tl.minimum(tl.maximum(tl.load(off + b + 1, mask=valid, other=0), start), n)
    count = end - start
    for i0 in range(start, end, GATHER):
        pos = i0 + tl.arange(0, GATHER)
        m = (pos < end)[:, None] & cmask[None, :]
        x = tl.load(v + pos[:, None] * width + cols[None, :], mask=m, other=0.0)
        if SCALED:
            x = x * ALPHA
        tile = tile + x.to(ACC)
    s = tl.sum(tile, 0)
    if HAS_SELF:
        a = tl.load(base + b * width + cols, mask=cmask, other=0.0)
    else:
        a = tl.full([BLOCK], FILL, tl.float32)
    out = a.to(ACC) + s
    if MEAN:
        out = out / tl.maximum(count, 1).to(ACC)
    tl.store(y + b * width + cols, out.to(tl.float32), mask=cmask)
)PY";

std::string Check(const std::string& t, const std::string& name, const std::string& dtype) {
  return fmt::format("    if {0}.dtype != {2}:\n"
                     "        raise ValueError(f\"{1} is {{{0}.dtype}}; this kernel takes {2}\")\n",
                     t, name, dtype);
}

}  // namespace

std::string PrintIndexAddTriton(const ir::IndexAddSpec& s, const IndexAddTritonSchedule& k, const std::string& header) {
  std::string out = header + "import torch\nimport triton\nimport triton.language as tl\n" +
                    (s.segments ? StreamCompactionTriton() + kSegmentKernels : std::string(kIndexKernels));
  const std::string acc = k.double_accumulator ? "float64" : "float32";
  const std::string alpha = fmt::format("ALPHA={}, SCALED={}", s.scaled ? fmt::format("{:.17g}", s.alpha) : "1.0",
                                        s.scaled ? "True" : "False");
  const std::string base = s.self_is_input ? "base" : "y";
  const std::string fill = fmt::format("FILL={:.17g}, HAS_SELF={}", s.fill, s.self_is_input ? "True" : "False");
  out += "\n\ndef kernelevolve_entry(inputs, outputs):\n";
  out += fmt::format("    v = inputs[{}]\n    y = outputs[0]\n", s.values);
  out += Check("v", "values", "torch.float32") + Check("y", "output", "torch.float32");
  out += "    if y.dim() < 1 or v.dim() != y.dim() or tuple(v.shape[1:]) != tuple(y.shape[1:]):\n"
         "        raise ValueError(f\"values {tuple(v.shape)} do not fit rows of the output {tuple(y.shape)}\")\n";
  if (s.self_is_input) {
    out += fmt::format("    base = inputs[{}]\n", s.self) + Check("base", "self", "torch.float32");
    out += "    if base.shape != y.shape:\n"
           "        raise ValueError(f\"self is {tuple(base.shape)}; the output is {tuple(y.shape)}\")\n";
  }
  out += "    rows, n = y.shape[0], v.shape[0]\n"
         "    width = y.numel() // rows if rows else 0\n";
  if (s.segments) {
    out += fmt::format("    lengths = inputs[{}]\n", s.lengths) + Check("lengths", "lengths", "torch.int64");
    out += "    segments = lengths.shape[0]\n"
           "    if lengths.dim() != 1 or segments > rows:\n"
           "        raise ValueError(f\"{segments} segments for {rows} output rows\")\n";
    if (s.mean) {
      out += "    if segments != rows:\n"
             "        raise ValueError(f\"a segment mean of {segments} segments into {rows} rows\")\n";
    }
    out += "    if rows == 0 or width == 0:\n        return\n";
    out += "    off = torch.empty(segments + 1, dtype=torch.int64, device=y.device)\n"
           "    _ke_exclusive_scan[(1,)](lengths, off, segments, BLOCK=1024)\n";
    out += fmt::format(
        "    block = min({block}, triton.next_power_of_2(width))\n"
        "    _segments[(rows, triton.cdiv(width, block))](v, off, {base}, y, segments, width, n, {fill}, {alpha},\n"
        "        MEAN={mean}, ACC=tl.{acc}, GATHER={gather}, BLOCK=block, num_warps={warps})\n",
        fmt::arg("block", k.block), fmt::arg("base", base), fmt::arg("fill", fill), fmt::arg("alpha", alpha),
        fmt::arg("mean", s.mean ? "True" : "False"), fmt::arg("acc", acc), fmt::arg("gather", k.gather),
        fmt::arg("warps", k.num_warps));
    return out;
  }
  out += fmt::format("    idx = inputs[{}]\n", s.index) + Check("idx", "index", "torch.int64");
  out += "    if idx.dim() != 1 or idx.shape[0] != n:\n"
         "        raise ValueError(f\"index of {tuple(idx.shape)} for {n} value rows\")\n"
         "    if rows == 0 or width == 0:\n        return\n";
  out += fmt::format(
      "    total = rows * width\n"
      "    acc = torch.empty(total, dtype=torch.{acc}, device=y.device)\n"
      "    _zero[(triton.cdiv(total, 1024),)](acc, total, BLOCK=1024)\n"
      "    block = min({block}, triton.next_power_of_2(width))\n"
      "    if n > 0:\n"
      "        _scatter[(triton.cdiv(n, {gather}), triton.cdiv(width, block))](v, idx, acc, n, rows, width, {alpha},\n"
      "            GATHER={gather}, BLOCK=block, num_warps={warps})\n"
      "    _finish[(triton.cdiv(total, 1024),)](acc, {base}, y, total, {fill}, BLOCK=1024)\n",
      fmt::arg("acc", acc), fmt::arg("block", k.block), fmt::arg("gather", k.gather), fmt::arg("alpha", alpha),
      fmt::arg("warps", k.num_warps), fmt::arg("base", base), fmt::arg("fill", fill));
  return out;
}

}  // namespace kernelevolve::operators::codegen
