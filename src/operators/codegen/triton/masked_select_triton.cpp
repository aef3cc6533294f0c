#include "operators/codegen/triton/masked_select_triton.h"

#include <fmt/format.h>

#include "operators/codegen/triton/compaction_triton.h"

namespace kernelevolve::operators::codegen {
namespace {

// Program b copies the selected rows among rows [b * BLOCK, (b + 1) * BLOCK) of x
// (`width` elements each) to their ranks in y, COLS columns a step; ranks at or past
// `limit` (the output's rows) are not written.
constexpr const char* kPackRows = R"PY(

@triton.jit
def _ke_pack_rows(mask, starts, x, y, rows, width, limit, BLOCK: tl.constexpr, COLS: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    chosen = tl.load(mask + r, mask=r < rows, other=0) != 0
    pos = _ke_block_ranks(chosen, starts)
    keep = chosen & (pos < limit)
    for c0 in range(0, width, COLS):
        c = c0 + tl.arange(0, COLS)
        m = keep[:, None] & (c < width)[None, :]
        v = tl.load(x + r[:, None] * width + c[None, :], mask=m)
        tl.store(y + pos[:, None] * width + c[None, :], v, mask=m)
)PY";

}  // namespace

std::string PrintMaskedSelectTriton(const ir::MaskedSelectSpec& s, const MaskedSelectTritonSchedule& k,
                                    const std::string& header, const std::string& mask_program) {
  std::string out = header + mask_program + "\n" + StreamCompactionTriton() + kPackRows;
  out += fmt::format(R"PY(

def kernelevolve_entry(inputs, outputs):
    if len(inputs) < {num_inputs} or len(outputs) not in (1, 2):
        raise ValueError(f"{{len(inputs)}} inputs and {{len(outputs)}} outputs; this kernel takes "
                         "{num_inputs} inputs and 1 output (2 with its size tensor)")
    x = inputs[{self}]
    y = outputs[0]
    if x.dim() != {rank} or y.dim() != {out_rank} or y.dtype != x.dtype:
        raise ValueError(f"x is {{x.dtype}} {{tuple(x.shape)}} and the output {{y.dtype}} {{tuple(y.shape)}}; "
                         "expected rank {rank} and rank {out_rank} of one dtype")
    if tuple(y.shape[1:]) != tuple(x.shape[{mask_rank}:]):
        raise ValueError(f"output rows {{tuple(y.shape[1:])}} are not x's rows {{tuple(x.shape[{mask_rank}:])}}")
    rows = 1
    for d in x.shape[:{mask_rank}]:
        rows *= d
    width = x.numel() // rows if rows else 0
    mask = torch.empty(tuple(x.shape[:{mask_rank}]), dtype=torch.bool, device=y.device)
    _ke_mask(inputs, [mask])
    blocks = triton.cdiv(rows, {block})
    counts = torch.empty(max(blocks, 1), dtype=torch.int64, device=y.device)
    starts = torch.empty(blocks + 1, dtype=torch.int64, device=y.device)
    if blocks > 0:
        _ke_block_counts[(blocks,)](mask, counts, rows, BLOCK={block})
    _ke_exclusive_scan[(1,)](counts, starts, blocks, BLOCK=1024)
    limit = y.shape[0]
    if blocks > 0 and width > 0:
        cols = min(triton.next_power_of_2(width), max(1, 8192 // {block}))
        _ke_pack_rows[(blocks,)](mask, starts, x, y, rows, width, limit, BLOCK={block}, COLS=cols,
                                 num_warps={num_warps})
    if len(outputs) == 2:
        size = outputs[1]
        if size.dtype != torch.int64 or tuple(size.shape) != (y.dim(),):
            raise ValueError(f"the size tensor is {{size.dtype}} {{tuple(size.shape)}}; expected int64 ({{y.dim()}},)")
        size[:1].copy_(starts[blocks:])
        for d in range(1, y.dim()):
            size[d].fill_(y.shape[d])
)PY",
                     fmt::arg("num_inputs", s.num_inputs), fmt::arg("self", s.self), fmt::arg("rank", s.rank),
                     fmt::arg("out_rank", s.rank - s.mask_rank + 1), fmt::arg("mask_rank", s.mask_rank),
                     fmt::arg("block", k.block), fmt::arg("num_warps", k.num_warps));
  return out;
}

}  // namespace kernelevolve::operators::codegen
