#include "operators/codegen/triton/attention_triton.h"

#include <fmt/format.h>

namespace kernelevolve::operators::codegen {
namespace {

// MASK: 0 none, 1 additive float32, 2 bool (true = attend), 3 bool (true = masked out,
// the explicit spelling's masked_fill(mask, -inf)). A rank-3 spec runs with H = 1. A row whose every key is
// masked keeps m = -inf; its weights are exp(-inf) = 0 and its output 0, as PyTorch.
constexpr const char* kAttentionKernel = R"PY(

@triton.jit
def _ke_attention(q, k, v, y, mask, H, L, S, E, scale, ms0, ms1, ms2, ms3,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                  CAUSAL: tl.constexpr, MASK: tl.constexpr, PRECISION: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_E)
    row_ok = rows < L
    dim_ok = dims < E
    qt = tl.load(q + bh * L * E + rows[:, None] * E + dims[None, :], mask=row_ok[:, None] & dim_ok[None, :], other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_E], tl.float32)
    end = S
    if CAUSAL:
        end = tl.minimum(S, (pid_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        col_ok = cols < end
        kt = tl.load(k + bh * S * E + cols[None, :] * E + dims[:, None], mask=col_ok[None, :] & dim_ok[:, None], other=0.0)
        s = tl.dot(qt, kt, input_precision=PRECISION) * scale
        if MASK == 1:
            s += tl.load(mask + b * ms0 + h * ms1 + rows[:, None] * ms2 + cols[None, :] * ms3,
                         mask=row_ok[:, None] & col_ok[None, :], other=0.0)
        if MASK == 2:
            keep = tl.load(mask + b * ms0 + h * ms1 + rows[:, None] * ms2 + cols[None, :] * ms3,
                           mask=row_ok[:, None] & col_ok[None, :], other=0)
            s = tl.where(keep != 0, s, float("-inf"))
        if MASK == 3:
            drop = tl.load(mask + b * ms0 + h * ms1 + rows[:, None] * ms2 + cols[None, :] * ms3,
                           mask=row_ok[:, None] & col_ok[None, :], other=0)
            s = tl.where(drop != 0, float("-inf"), s)
        if CAUSAL:
            s = tl.where(cols[None, :] > rows[:, None], float("-inf"), s)
        s = tl.where(col_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        vt = tl.load(v + bh * S * E + cols[:, None] * E + dims[None, :], mask=col_ok[:, None] & dim_ok[None, :], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, vt, input_precision=PRECISION)
        m_i = m_new
    out = tl.where(l_i[:, None] > 0, acc / tl.where(l_i > 0, l_i, 1.0)[:, None], 0.0)
    tl.store(y + bh * L * E + rows[:, None] * E + dims[None, :], out, mask=row_ok[:, None] & dim_ok[None, :])
)PY";

}  // namespace

std::string PrintAttentionTriton(const ir::AttentionSpec& s, const AttentionTritonSchedule& k, const std::string& header) {
  std::string out = header + "import math\n\nimport torch\nimport triton\nimport triton.language as tl\n" + kAttentionKernel;
  std::string mask_setup;
  if (s.mask >= 0) {
    // Rank 3: the mask broadcasts to [B, L, S]; its head stride is 0.
    mask_setup = fmt::format(R"PY(    mask = inputs[{m}]
    if mask.dtype != {dtype} or mask.dim() > {rank} or mask.device != q.device:
        raise ValueError(f"mask is {{mask.dtype}} of rank {{mask.dim()}}; this kernel takes {dtype} broadcasting to [{full}]")
    try:
        ms = mask.expand({full}).stride()  # a view: size-1 dims read with stride 0
    except RuntimeError as exc:
        raise ValueError(f"mask {{tuple(mask.shape)}} does not broadcast to {{({full})}}") from exc
{rank3}
)PY",
                             fmt::arg("m", s.mask), fmt::arg("dtype", s.mask_bool ? "torch.bool" : "torch.float32"),
                             fmt::arg("rank", s.rank), fmt::arg("full", s.rank == 3 ? "B, L, S" : "B, H, L, S"),
                             fmt::arg("rank3", s.rank == 3 ? "    ms = (ms[0], 0, ms[1], ms[2])" : ""));
  } else {
    mask_setup = "    mask = q\n    ms = (0, 0, 0, 0)\n";
  }
  out += fmt::format(R"PY(

def kernelevolve_entry(inputs, outputs):
    if len(inputs) < {num_inputs} or len(outputs) != 1:
        raise ValueError(f"{{len(inputs)}} inputs and {{len(outputs)}} outputs; this kernel takes {num_inputs} and 1")
    q, k, v, y = inputs[{q}], inputs[{k}], inputs[{v}], outputs[0]
    for name, t in (("q", q), ("k", k), ("v", v), ("y", y)):
        if t.dtype != torch.float32 or t.dim() != {rank} or not t.is_contiguous():
            raise ValueError(f"{{name}} is {{t.dtype}} of rank {{t.dim()}}; this kernel takes contiguous float32 {layout}")
{sizes}
    if k.shape[:-2] != q.shape[:-2] or v.shape != k.shape or y.shape != q.shape or k.shape[-1] != E:
        raise ValueError(f"q {{tuple(q.shape)}}, k {{tuple(k.shape)}}, v {{tuple(v.shape)}}, y {{tuple(y.shape)}} do not agree")
{mask_setup}    if B * H * L * E == 0:
        return
    scale = {scale}
    grid = (triton.cdiv(L, {bm}), B * H)
    _ke_attention[grid](q, k, v, y, mask, H, L, S, E, scale, ms[0], ms[1], ms[2], ms[3],
                        BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_E=max(16, triton.next_power_of_2(E)),
                        CAUSAL={causal}, MASK={mask_kind}, PRECISION="{precision}", num_warps={warps},
                        num_stages={stages})
)PY",
                     fmt::arg("num_inputs", s.num_inputs), fmt::arg("q", s.q), fmt::arg("k", s.k), fmt::arg("v", s.v),
                     fmt::arg("mask_setup", mask_setup), fmt::arg("rank", s.rank),
                     fmt::arg("layout", s.rank == 3 ? "[B, *, E]" : "[B, H, *, E]"),
                     fmt::arg("sizes", s.rank == 3 ? "    B, L, E = q.shape\n    H = 1\n    S = k.shape[1]"
                                                   : "    B, H, L, E = q.shape\n    S = k.shape[2]"),
                     fmt::arg("scale", s.scale ? fmt::format("{:.17g}", *s.scale) : "1.0 / math.sqrt(E)"),
                     fmt::arg("bm", k.block_m), fmt::arg("bn", k.block_n), fmt::arg("causal", s.causal ? "True" : "False"),
                     fmt::arg("mask_kind", s.mask < 0 ? 0 : (!s.mask_bool ? 1 : (s.mask_inverted ? 3 : 2))), fmt::arg("warps", k.num_warps),
                     fmt::arg("stages", k.num_stages), fmt::arg("precision", k.input_precision));
  return out;
}

}  // namespace kernelevolve::operators::codegen
