#include "operators/codegen/triton/compaction_triton.h"

namespace kernelevolve::operators::codegen {

std::string StreamCompactionTriton() {
  return R"PY(
@triton.jit
def _ke_exclusive_scan(x, out, n, BLOCK: tl.constexpr):
    carry = tl.zeros([1], tl.int64)
    tl.store(out + tl.arange(0, 1), carry)
    for i0 in range(0, n, BLOCK):
        i = i0 + tl.arange(0, BLOCK)
        v = tl.maximum(tl.load(x + i, mask=i < n, other=0).to(tl.int64), 0)
        tl.store(out + i + 1, tl.cumsum(v, 0) + carry, mask=i < n)
        carry = carry + tl.sum(v, 0)


@triton.jit
def _ke_block_counts(flags, counts, n, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    i = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    f = tl.load(flags + i, mask=i < n, other=0)
    tl.store(counts + b, tl.sum((f != 0).to(tl.int64), 0))


@triton.jit
def _ke_block_ranks(chosen, starts):
    s = chosen.to(tl.int64)
    return tl.load(starts + tl.program_id(0)) + tl.cumsum(s, 0) - s
)PY";
}

}  // namespace kernelevolve::operators::codegen
