#include "operators/codegen/triton/attention_triton.h"

#include <fmt/format.h>

namespace kernelevolve::operators::codegen {
namespace {

// MASK: 0 none, 1 additive float32, 2 bool (true = attend), 3 bool (true = masked out,
// the explicit spelling's masked_fill(mask, -inf)). A rank-3 spec runs with H = 1. A row whose every key is
// masked keeps m = -inf; its weights are exp(-inf) = 0 and its output 0, as SDPA, or NaN
// with EMPTY_NAN (the explicit spelling, whose eager softmax of a row of -inf is 0 / 0).
// The softmax runs in base 2: qk_scale = scale * log2(e) and exp2, as the FlashAttention-2
// Triton kernels (Dao, arXiv:2307.08691, 2023): one multiply a score fewer. EVEN (every key
// block full, E a power of two of at least 16) drops the key-block masks.
// SPLIT (operand_split "hoisted"): 3xTF32 by hand, the query block split into TF32 high and
// low parts once per program, each key and value block once a step (Triton's own
// input_precision="tf32x3" splits both operands at every tl.dot, the loop-invariant q
// block included). Both parts are rounded to nearest: with the low part left to the tensor
// cores' truncation, every product is biased the same way, and sdpa_scale's error (S 2048,
// E 128) was 2.2e-6 against Triton's 7.9e-8 (H100; eager's own is of order 1e-6).
constexpr const char* kAttentionKernel = R"PY(

@triton.jit
def _ke_tf32(x):
    # x rounded to TF32 (10 mantissa bits), to nearest: half of the 13 dropped bits added
    # to the bit pattern, then cleared (a carry moves into the exponent as it should; past
    # TF32's largest value that is inf, as the hardware's rounding). A NaN stays x: its
    # payload may sit in the cleared bits alone (0x7F800001 would become inf).
    rounded = ((x.to(tl.uint32, bitcast=True) + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)
    return tl.where(x == x, rounded, x)


@triton.jit
def _ke_split(x):
    # x as TF32 high and low parts, x ~ hi + lo.
    hi = _ke_tf32(x)
    return hi, _ke_tf32(x - hi)


@triton.jit
def _ke_dot3(a_hi, a_lo, b, acc):
    # 3xTF32 (NVIDIA CUTLASS's 3xTF32): a b ~ a_lo b_hi + a_hi b_lo + a_hi b_hi, small terms first.
    b_hi, b_lo = _ke_split(b)
    acc = tl.dot(a_lo, b_hi, acc, input_precision="tf32")
    acc = tl.dot(a_hi, b_lo, acc, input_precision="tf32")
    return tl.dot(a_hi, b_hi, acc, input_precision="tf32")


@triton.jit
def _ke_attention(q, k, v, y, mask, H, L, S, E, qk_scale, ms0, ms1, ms2, ms3,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                  CAUSAL: tl.constexpr, MASK: tl.constexpr, PRECISION: tl.constexpr,
                  SPLIT: tl.constexpr, EVEN: tl.constexpr, EMPTY_NAN: tl.constexpr):
    LOG2E: tl.constexpr = 1.4426950408889634
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_E)
    row_ok = rows < L
    dim_ok = dims < E
    qt = tl.load(q + bh * L * E + rows[:, None] * E + dims[None, :], mask=row_ok[:, None] & dim_ok[None, :], other=0.0)
    if SPLIT:
        q_hi, q_lo = _ke_split(qt)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_E], tl.float32)
    end = S
    if CAUSAL:
        end = tl.minimum(S, (pid_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        col_ok = cols < end
        if EVEN:
            kt = tl.load(k + bh * S * E + cols[None, :] * E + dims[:, None])
            vt = tl.load(v + bh * S * E + cols[:, None] * E + dims[None, :])
        else:
            kt = tl.load(k + bh * S * E + cols[None, :] * E + dims[:, None], mask=col_ok[None, :] & dim_ok[:, None], other=0.0)
            vt = tl.load(v + bh * S * E + cols[:, None] * E + dims[None, :], mask=col_ok[:, None] & dim_ok[None, :], other=0.0)
        if SPLIT:
            s = _ke_dot3(q_hi, q_lo, kt, tl.zeros([BLOCK_M, BLOCK_N], tl.float32))
        else:
            s = tl.dot(qt, kt, input_precision=PRECISION)
        s = s * qk_scale
        if MASK == 1:
            s += tl.load(mask + b * ms0 + h * ms1 + rows[:, None] * ms2 + cols[None, :] * ms3,
                         mask=row_ok[:, None] & col_ok[None, :], other=0.0) * LOG2E
        if MASK == 2:
            keep = tl.load(mask + b * ms0 + h * ms1 + rows[:, None] * ms2 + cols[None, :] * ms3,
                           mask=row_ok[:, None] & col_ok[None, :], other=0)
            s = tl.where(keep != 0, s, float("-inf"))
        if MASK == 3:
            drop = tl.load(mask + b * ms0 + h * ms1 + rows[:, None] * ms2 + cols[None, :] * ms3,
                           mask=row_ok[:, None] & col_ok[None, :], other=0)
            s = tl.where(drop != 0, float("-inf"), s)
        if CAUSAL:
            # Also masks the keys past `end` of a causal block: they come after every row.
            s = tl.where(cols[None, :] > rows[:, None], float("-inf"), s)
        if not EVEN:
            s = tl.where(col_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.math.exp2(m_i - m_safe)
        p = tl.math.exp2(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if SPLIT:
            p_hi, p_lo = _ke_split(p)
            acc = _ke_dot3(p_hi, p_lo, vt, acc)
        else:
            acc = tl.dot(p, vt, acc, input_precision=PRECISION)
        m_i = m_new
    if EMPTY_NAN:
        out = tl.where(l_i[:, None] > 0, acc / tl.where(l_i > 0, l_i, 1.0)[:, None], float("nan"))
    else:
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
    block_e = max(16, triton.next_power_of_2(E))
    grid = (triton.cdiv(L, {bm}), B * H)
    _ke_attention[grid](q, k, v, y, mask, H, L, S, E, scale * 1.4426950408889634, ms[0], ms[1], ms[2], ms[3],
                        BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_E=block_e,
                        CAUSAL={causal}, MASK={mask_kind}, PRECISION="{precision}", SPLIT={split},
                        EVEN=S % {bn} == 0 and E == block_e, EMPTY_NAN={empty_nan},
                        num_warps={warps}, num_stages={stages})
)PY",
                     fmt::arg("num_inputs", s.num_inputs), fmt::arg("q", s.q), fmt::arg("k", s.k), fmt::arg("v", s.v),
                     fmt::arg("mask_setup", mask_setup), fmt::arg("rank", s.rank),
                     fmt::arg("layout", s.rank == 3 ? "[B, *, E]" : "[B, H, *, E]"),
                     fmt::arg("sizes", s.rank == 3 ? "    B, L, E = q.shape\n    H = 1\n    S = k.shape[1]"
                                                   : "    B, H, L, E = q.shape\n    S = k.shape[2]"),
                     fmt::arg("scale", s.scale ? fmt::format("{:.17g}", *s.scale) : "1.0 / math.sqrt(E)"),
                     fmt::arg("bm", k.block_m), fmt::arg("bn", k.block_n), fmt::arg("causal", s.causal ? "True" : "False"),
                     fmt::arg("mask_kind", s.mask < 0 ? 0 : (!s.mask_bool ? 1 : (s.mask_inverted ? 3 : 2))), fmt::arg("warps", k.num_warps),
                     fmt::arg("stages", k.num_stages), fmt::arg("empty_nan", s.masked_row_nan ? "True" : "False"),
                     fmt::arg("precision", k.input_precision == "tf32x3" && k.split_hoisted ? "tf32" : k.input_precision),
                     fmt::arg("split", k.input_precision == "tf32x3" && k.split_hoisted ? "True" : "False"));
  return out;
}

}  // namespace kernelevolve::operators::codegen
