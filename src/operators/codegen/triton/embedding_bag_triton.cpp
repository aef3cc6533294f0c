#include "operators/codegen/triton/embedding_bag_triton.h"

#include <fmt/format.h>

#include "core/dtype.h"

namespace kernelevolve::operators::codegen {
namespace {

// One program: `BAGS` bags x `BLOCK` columns. For each bag, [start, end) from the
// offsets (clamped to [0, n]); each step loads GATHER indices and their weight rows as
// a [GATHER, BLOCK] tile, masked where the position is past the bag or the index is
// outside the table, and folds the tile element-wise into a [GATHER, BLOCK]
// accumulator, reduced over its GATHER rows once per bag. Max propagates NaN as
// torch.max does; an empty bag gives 0 in every mode (ATen's embedding_bag). A float16 /
// bfloat16 table (HALF) is widened as it is read and each bag rounded once at its store.
constexpr const char* kKernel = R"PY(
@triton.jit
def _embedding_bag(w, idx, off, pw, y, rows, dim, n, bags,
                   MODE: tl.constexpr, LAST: tl.constexpr, WEIGHTED: tl.constexpr, HALF: tl.constexpr,
                   BLOCK: tl.constexpr, GATHER: tl.constexpr, BAGS: tl.constexpr):
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    cmask = cols < dim
    steps = tl.arange(0, GATHER)
    for k in tl.static_range(BAGS):
        b = tl.program_id(0).to(tl.int64) * BAGS + k
        if b < bags:
            start = tl.load(off + b)
            if LAST:
                end = tl.load(off + b + 1)
            else:
                end = tl.load(off + b + 1, mask=b + 1 < bags, other=n)
            start = tl.minimum(tl.maximum(start, 0), n)
            end = tl.minimum(tl.maximum(end, start), n)
            if MODE == 2:
                tile = tl.full([GATHER, BLOCK], float('-inf'), tl.float32)
            else:
                tile = tl.zeros([GATHER, BLOCK], tl.float32)
            for i0 in range(start, end, GATHER):
                pos = i0 + steps
                pmask = pos < end
                ids = tl.load(idx + pos, mask=pmask, other=0)
                valid = pmask & (ids >= 0) & (ids < rows)
                m = valid[:, None] & cmask[None, :]
                v = tl.load(w + ids[:, None] * dim + cols[None, :], mask=m, other=0.0).to(tl.float32)
                if MODE == 2:
                    v = tl.where(m, v, float('-inf'))
                    tile = tl.maximum(tile, v, propagate_nan=tl.PropagateNan.ALL)
                else:
                    if WEIGHTED:
                        s = tl.load(pw + pos, mask=pmask, other=0.0).to(tl.float32)
                        v = v * s[:, None]
                    tile = tile + v
            if MODE == 2:
                acc = tl.max(tile, 0)
                nan = tl.max((tile != tile).to(tl.int32), 0) > 0
                acc = tl.where(nan, float('nan'), acc)
            else:
                acc = tl.sum(tile, 0)
            count = end - start
            if MODE == 1:
                if HALF:  # eager's half-precision mean: the rounded sum over the count
                    acc = acc.to(y.dtype.element_ty).to(tl.float32)
                acc = acc / tl.maximum(count, 1).to(tl.float32)
            if count == 0:
                acc = tl.zeros([BLOCK], tl.float32)
            tl.store(y + b * dim + cols, acc.to(y.dtype.element_ty), mask=cmask)
)PY";

}  // namespace

std::string PrintEmbeddingBagTriton(const ir::EmbeddingBagSpec& s, const EmbeddingBagTritonSchedule& k,
                                    const std::string& header) {
  std::string out = header + "import torch\nimport triton\nimport triton.language as tl\n\n" + kKernel;
  out += "\n\ndef _check(t, name, dtype, ndim):\n"
         "    if t.dtype != dtype or t.dim() != ndim:\n"
         "        raise ValueError(f\"{name}: {t.dtype}, {t.dim()} dims; this kernel takes {dtype}, {ndim} dims\")\n";
  out += "\n\ndef kernelevolve_entry(inputs, outputs):\n";
  out += fmt::format("    w, idx, off = inputs[{}], inputs[{}], inputs[{}]\n", s.weight, s.indices, s.offsets);
  const std::string dt = "torch." + std::string(core::DTypeName(s.dtype));
  out += "    y = outputs[0]\n";
  out += fmt::format("    _check(w, 'weight', {}, 2)\n", dt);
  out += "    _check(idx, 'indices', torch.int64, 1)\n"
         "    _check(off, 'offsets', torch.int64, 1)\n";
  out += fmt::format("    _check(y, 'output', {}, 2)\n", dt);
  if (s.per_sample_weights >= 0) {
    out += fmt::format("    pw = inputs[{}]\n", s.per_sample_weights);
    out += fmt::format("    _check(pw, 'per_sample_weights', {}, 1)\n", dt);
    out += "    if pw.shape[0] != idx.shape[0]:\n"
           "        raise ValueError(f\"per_sample_weights has {pw.shape[0]} entries for {idx.shape[0]} indices\")\n";
  } else {
    out += "    pw = w  # not read\n";
  }
  out += "    rows, dim = w.shape\n    n = idx.shape[0]\n";
  out += fmt::format("    bags = off.shape[0]{}\n", s.include_last_offset ? " - 1" : "");
  out += "    if bags < 0 or tuple(y.shape) != (bags, dim):\n"
         "        raise ValueError(f\"output is {tuple(y.shape)}; the inputs give ({bags}, {dim})\")\n"
         "    if bags == 0 or dim == 0:\n"
         "        return\n";
  out += fmt::format("    block = min({}, triton.next_power_of_2(dim))\n", k.block);
  out += fmt::format(
      "    grid = (triton.cdiv(bags, {bags}), triton.cdiv(dim, block))\n"
      "    _embedding_bag[grid](w, idx, off, pw, y, rows, dim, n, bags, MODE={mode}, LAST={last}, WEIGHTED={weighted},\n"
      "                         HALF={half}, BLOCK=block, GATHER={gather}, BAGS={bags}, num_warps={warps})\n",
      fmt::arg("bags", k.bags), fmt::arg("mode", static_cast<int>(s.mode)),
      fmt::arg("last", s.include_last_offset ? "True" : "False"),
      fmt::arg("weighted", s.per_sample_weights >= 0 ? "True" : "False"),
      fmt::arg("half", s.dtype != core::DType::kFloat32 ? "True" : "False"), fmt::arg("gather", k.gather),
      fmt::arg("warps", k.num_warps));
  return out;
}

}  // namespace kernelevolve::operators::codegen
