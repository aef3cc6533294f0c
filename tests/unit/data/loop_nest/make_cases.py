"""Writes the loop_nest family's test cases (tests/unit/loop_nest_template_test.cpp):
for each small model, its captured Core ATen graph (<case>.json, worker format) and
one input set with the eager outputs (<case>.safetensors: "in.<k>" ABI inputs, the
forward() inputs then the state_dict() tensors the graph reads, and "out.<k>" eager
outputs). The cases cover every rule file of the generic lowering
(src/operators/ir/lower_core_{layout,elementwise,reduce,heavy,kept,search,sort}.cpp) and the
families that take whole graphs (families/index_add).

Regenerate from the repository root: .venv/bin/python tests/unit/data/loop_nest/make_cases.py
"""

import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "worker"))
from kernelevolve_worker.graph_capture import capture_graph  # noqa: E402


class Fn(nn.Module):
    def __init__(self, fn, *mods):
        super().__init__()
        self.fn = fn
        self.mods = nn.ModuleList(mods)

    def forward(self, *args):
        return self.fn(self, *args)


def r(*shape):
    return torch.randn(*shape)


def ints(lo, hi, *shape):
    return torch.randint(lo, hi, shape, dtype=torch.int64)


def nonzero_ints(lo, hi, *shape):
    """Integers in [lo, hi) without 0 (divisors)."""
    t = ints(lo, hi, *shape)
    return torch.where(t == 0, torch.ones_like(t), t)


def reduction_epilogues(x, y):
    m = x.amax(dim=1)
    p = x.abs().sum(dim=1)
    return (m, m * y + 1.0, (x.sum(dim=1) / 3.0).reshape(-1) - y.flatten(), x.argmin(dim=1) * 2 + 1,
            x - x.mean(dim=1, keepdim=True), p * y, x / p[:, None, :])


def cases():
    ln = nn.LayerNorm(12)
    ln.weight.data.uniform_(0.5, 1.5)
    ln.bias.data.uniform_(-0.5, 0.5)
    gn = nn.GroupNorm(2, 6)
    gn.weight.data.uniform_(0.5, 1.5)
    gn.bias.data.uniform_(-0.5, 0.5)
    bn = nn.BatchNorm2d(3)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-0.5, 0.5)
    emb = nn.Embedding(10, 4)
    lin = nn.Linear(16, 8)
    conv1 = nn.Conv1d(3, 4, 3, padding=1)
    conv2 = nn.Conv2d(3, 4, 3, stride=2, padding=1, dilation=2)
    gconv = nn.Conv2d(4, 6, 3, groups=2)
    tconv = nn.ConvTranspose2d(3, 2, 3, stride=2, output_padding=1)
    # argmax ties: small integers as floats, so rows hold repeated maxima.
    ties = torch.randint(0, 3, (5, 6, 4)).float()
    return {
        # ---- views and layout (lower_core_layout.cpp) ----
        "permute_contiguous": (Fn(lambda s, x: x.permute(2, 0, 1).contiguous()), [r(3, 4, 5)]),
        "transpose_reshape": (Fn(lambda s, x: x.transpose(1, 2).reshape(3, -1) * 2), [r(3, 4, 5)]),
        "expand_mul": (Fn(lambda s, x, y: x.expand(4, 3, 5) * y), [r(4, 1, 5), r(4, 3, 5)]),
        "slice_step": (Fn(lambda s, x: x[1:6:2, ::3] + 1), [r(7, 10)]),
        "select": (Fn(lambda s, x: x[:, 2] + x[1]), [r(4, 4, 3)]),
        "cat": (Fn(lambda s, a, b: torch.cat([a, b * 2], dim=1)), [r(3, 2, 4), r(3, 5, 4)]),
        "stack": (Fn(lambda s, a, b: torch.stack([a, b, a - b], dim=1)), [r(4, 5), r(4, 5)]),
        "split_three": (Fn(lambda s, x: tuple(t * (k + 1) for k, t in enumerate(torch.split(x, [2, 3, 1], dim=1)))),
                        [r(4, 6, 3)]),
        "pad_constant": (Fn(lambda s, x: F.pad(x, (1, 2, 0, 1), value=0.5)), [r(2, 3, 4)]),
        "pad_reflect": (Fn(lambda s, x: F.pad(x, (2, 1, 1, 2), mode="reflect")), [r(2, 3, 5, 6)]),
        "flip": (Fn(lambda s, x: torch.flip(x, dims=(0, 2))), [r(3, 4, 5)]),
        "roll_dims": (Fn(lambda s, x: torch.roll(x, shifts=(1, -2), dims=(0, 1))), [r(4, 5, 3)]),
        "roll_flat": (Fn(lambda s, x: torch.roll(x, shifts=3)), [r(4, 5)]),
        "repeat": (Fn(lambda s, x: x.repeat(2, 1, 3)), [r(2, 3, 4)]),
        "diagonal": (Fn(lambda s, x: torch.diagonal(x, offset=1, dim1=0, dim2=2) * 3), [r(4, 3, 5)]),
        "triu_tril": (Fn(lambda s, x: (torch.triu(x, diagonal=1), torch.tril(x, diagonal=-1))), [r(2, 5, 6)]),
        # ---- creation ----
        "arange_add": (Fn(lambda s, x: (x + torch.arange(x.shape[1]), torch.arange(1, 11, 3) * 2)), [r(3, 6)]),
        "full_zeros_like": (Fn(lambda s, x: (torch.full_like(x, 3.5) * x, torch.zeros_like(x) + x)), [r(4, 5)]),
        # ---- masks and selects (lower_core_elementwise.cpp) ----
        "where_compare": (Fn(lambda s, x, y: torch.where(x > y, x, y * 2)), [r(6, 7), r(6, 7)]),
        "masked_fill": (Fn(lambda s, x, y: x.masked_fill(y < 0, -1.5) * 2), [r(5, 8), r(5, 8)]),
        # ---- int64 arithmetic, bits, comparisons, casts ----
        "int_add_mul": (Fn(lambda s, a, b: (a + b, a * b - 3)), [ints(-20, 20, 4, 6), ints(-9, 9, 4, 6)]),
        "int_rem_floordiv": (Fn(lambda s, a, b: (torch.remainder(a, b), torch.floor_divide(a, b))),
                             [ints(-20, 20, 5, 6), nonzero_ints(-5, 6, 5, 6)]),
        "int_bitwise": (Fn(lambda s, a, b: (a & b, a | b, a ^ b, ~a)), [ints(-50, 50, 4, 7), ints(-50, 50, 4, 7)]),
        "compare_bool": (Fn(lambda s, x, y, a: (x > y, x <= 0.5, a == 1)),
                         [r(4, 5), r(4, 5), ints(0, 3, 4, 5)]),
        "casts": (Fn(lambda s, x: (x.to(torch.int64), (x > 0).float() * 2)), [3 * r(5, 6)]),
        "clamp_tensor": (Fn(lambda s, x, lo, hi: torch.clamp(x, min=lo, max=hi)),
                         [2 * r(4, 6), -0.5 - r(4, 6).abs(), 0.5 + r(1, 6).abs()]),
        # ---- gathers ----
        "gather": (Fn(lambda s, x, i: torch.gather(x, 1, i)), [r(4, 6), ints(0, 6, 4, 3)]),
        "index_select": (Fn(lambda s, x, i: torch.index_select(x, 0, i)), [r(6, 5), torch.tensor([4, 0, 4, 2, 5])]),
        "embedding": (Fn(lambda s, i: s.mods[0](i), emb), [ints(0, 10, 3, 5)]),
        "advanced_index": (Fn(lambda s, x, i: (x[i], x[:, i])), [r(5, 6), torch.tensor([3, 0, 4, 4])]),
        # indexed dims not adjacent: the broadcast index dims come first (NumPy's rule)
        "advanced_index_split": (Fn(lambda s, x, i, j: x[i, :, j]),
                                 [r(5, 3, 6), torch.tensor([4, 0, -1]), torch.tensor([5, 2, 0])]),
        "select_slice_scatter": (Fn(lambda s, x, a, b: (torch.select_scatter(x, a, 1, 2),
                                                        torch.slice_scatter(x, b, 0, 1, 6, 2))),
                                 [r(6, 4), r(6), r(3, 4)]),
        # ---- reductions and scans (lower_core_reduce.cpp, lower_core_kept.cpp) ----
        "sum_dims_0_2": (Fn(lambda s, x: x.sum(dim=(0, 2))), [r(4, 5, 6)]),
        "amax_keepdim": (Fn(lambda s, x: x.amax(dim=1, keepdim=True)), [r(4, 7, 3)]),
        "mean_all": (Fn(lambda s, x: x.mean()), [r(6, 9)]),
        "prod_dim": (Fn(lambda s, x: x.prod(dim=1)), [1 + 0.1 * r(5, 12)]),
        "var_std": (Fn(lambda s, x: (torch.var(x, dim=1, correction=0), torch.std(x, dim=0))), [r(6, 9)]),
        "argmax_ties": (Fn(lambda s, x: torch.argmax(x, dim=1)), [ties]),
        "any_all": (Fn(lambda s, x: ((x > 1).any(dim=1), (x > -2).all())), [r(6, 5)]),
        "cumsum_dim0": (Fn(lambda s, x: torch.cumsum(x, dim=0)), [r(7, 4)]),
        "logsumexp": (Fn(lambda s, x: torch.logsumexp(x, dim=1)), [3 * r(5, 8)]),
        "softmax_dim0": (Fn(lambda s, x: torch.softmax(x, dim=0)), [3 * r(6, 5)]),
        "layer_norm": (Fn(lambda s, x: s.mods[0](x), ln), [r(3, 4, 12)]),
        "group_norm": (Fn(lambda s, x: s.mods[0](x), gn), [r(2, 6, 3, 4)]),
        "batch_norm_eval": (Fn(lambda s, x: s.mods[0](x), bn.eval()), [r(2, 3, 4, 5)]),
        # ---- heavy ops (lower_core_heavy.cpp) ----
        "mm": (Fn(lambda s, a, b: torch.mm(a, b)), [r(5, 7), r(7, 6)]),
        "bmm": (Fn(lambda s, a, b: torch.bmm(a, b)), [r(3, 4, 5), r(3, 5, 6)]),
        "linear": (Fn(lambda s, x: s.mods[0](x), lin), [r(5, 16)]),
        "conv1d": (Fn(lambda s, x: s.mods[0](x), conv1), [r(2, 3, 10)]),
        "conv2d_stride_dilation": (Fn(lambda s, x: s.mods[0](x), conv2), [r(2, 3, 9, 9)]),
        "conv2d_grouped": (Fn(lambda s, x: s.mods[0](x), gconv), [r(2, 4, 6, 5)]),
        "conv_transpose2d": (Fn(lambda s, x: s.mods[0](x), tconv), [r(2, 3, 4, 4)]),
        "max_pool2d_indices": (Fn(lambda s, x: F.max_pool2d(x, 2, stride=2, return_indices=True)), [r(2, 3, 6, 7)]),
        "avg_pool2d_pad": (Fn(lambda s, x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)),
                           [r(2, 3, 7, 6)]),
        "adaptive_avg_pool2d": (Fn(lambda s, x: F.adaptive_avg_pool2d(x, (3, 5))), [r(2, 3, 7, 8)]),
        "mm_relu_mm": (Fn(lambda s, a, w1, w2: torch.mm(torch.relu(torch.mm(a, w1)), w2)),
                       [r(8, 16), r(16, 32), r(32, 4)]),
        # ---- the tiled GEMM main loop (codegen/cpp/gemm_cpp.cpp): edges of every
        # register tile, K past one 256-deep panel, transposed and batched operands ----
        "mm_odd_transposed_relu": (Fn(lambda s, a, w: torch.relu(a @ w.t())), [r(37, 300), r(53, 300)]),
        "bmm_transposed_a": (Fn(lambda s, a, b: torch.bmm(a.transpose(1, 2), b)), [r(3, 300, 19), r(3, 300, 23)]),
        "matmul_broadcast": (Fn(lambda s, a, b: torch.matmul(a, b)), [r(2, 1, 9, 40), r(3, 40, 11)]),
        "linear_3d": (Fn(lambda s, x: s.mods[0](x), nn.Linear(40, 11)), [r(2, 9, 40)]),
        # ---- searches in sorted tensors (lower_core_search.cpp): ties on both sides,
        # values below, between and above the boundaries, NaN, a batched sequence ----
        "bucketize_ties": (Fn(lambda s, x, b: (torch.bucketize(x, b), torch.bucketize(x, b, right=True))),
                           [torch.cat([torch.round(2 * r(4, 6)) / 2, torch.tensor([[float("nan")] * 6])]),
                            torch.tensor([-1.0, -0.5, 0.0, 0.0, 0.5, 1.0])]),
        "searchsorted_sides": (Fn(lambda s, seq, v, rows, w: (torch.searchsorted(seq, v),
                                                               torch.searchsorted(seq, v, side="right"),
                                                               torch.searchsorted(rows, w, right=True))),
                               [torch.tensor([0, 2, 2, 2, 5, 7]), ints(-1, 9, 3, 5),
                                torch.sort(torch.round(2 * r(3, 6)) / 2, dim=1).values, torch.round(2 * r(3, 4)) / 2]),
        # ---- int64 hashing: multiplies that wrap past 2^63, shifts of negatives, xor, mod ----
        "int_hash": (Fn(lambda s, x: (torch.remainder((x ^ ((x >> 33) & (2**31 - 1))) * 0x7F51AFD7ED558CCD, 1000003),
                                      (x << 6) + 0x9E3779B9 - x * x)),
                     [torch.randint(-(1 << 62), 1 << 62, (4, 6), dtype=torch.int64)]),
        # ---- fused epilogues and convolutions as implicit GEMMs (issue 18): created
        # last, so the cases above keep their random values ----
        "linear_gelu_residual_clamp": (
            Fn(lambda s, x, res: torch.clamp(F.gelu(s.mods[0](x)) + res, -0.5, 0.5), nn.Linear(300, 29)),
            [r(2, 7, 300), r(2, 7, 29)]),
        "addmm_sigmoid": (Fn(lambda s, b, a, w: torch.sigmoid(torch.addmm(b, a, w))), [r(19), r(13, 40), r(40, 19)]),
        "conv2d_3x3_bias_relu": (Fn(lambda s, x: torch.relu(s.mods[0](x)), nn.Conv2d(5, 13, 3, padding=1)),
                                 [r(2, 5, 11, 21)]),
        "conv2d_1x1_nobias": (Fn(lambda s, x: s.mods[0](x), nn.Conv2d(24, 7, 1, bias=False)), [r(2, 24, 5, 9)]),
        "conv2d_grouped_strided_padded": (
            Fn(lambda s, x: s.mods[0](x), nn.Conv2d(6, 9, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                                     groups=3)),
            [r(3, 6, 10, 17)]),
        "conv2d_depthwise_unbatched": (Fn(lambda s, x: s.mods[0](x), nn.Conv2d(4, 8, 3, padding=1, groups=4)),
                                       [r(4, 7, 6)]),
        "conv1d_strided_silu": (Fn(lambda s, x: F.silu(s.mods[0](x)), nn.Conv1d(6, 10, 5, stride=2, padding=2)),
                                [r(3, 6, 40)]),
        "conv3d_padded": (Fn(lambda s, x: s.mods[0](x), nn.Conv3d(3, 4, 3, padding=1, stride=(1, 2, 1))),
                          [r(2, 3, 5, 6, 7)]),
        # ---- pooling windows under reduce_loop = "outer" ----
        "max_pool2d_dilated_ceil": (
            Fn(lambda s, x: F.max_pool2d(x, 3, stride=2, padding=1, dilation=2, ceil_mode=True)), [r(2, 3, 11, 13)]),
        "avg_pool2d_ceil_include_pad": (
            Fn(lambda s, x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True)),
            [r(2, 3, 9, 10)]),
        "max_pool1d_indices": (Fn(lambda s, x: F.max_pool1d(x, 4, stride=3, padding=2, return_indices=True)),
                               [r(2, 5, 20)]),
        "conv2d_depthwise": (Fn(lambda s, x: s.mods[0](x), nn.Conv2d(4, 8, 3, padding=1, groups=4)), [r(2, 4, 7, 6)]),
        # ---- sort and top-k (lower_core_sort.cpp; families/sort): ties in input order,
        # NaN largest, -0.0 == +0.0 ----
        "sort_desc_nan_ties": (Fn(lambda s, x: torch.sort(x, dim=1, descending=True, stable=True)),
                               [torch.cat([torch.round(2 * r(3, 9)) / 2,
                                           torch.tensor([[float("nan"), 0.0, -0.0, 1.0, float("nan"), -0.0,
                                                          float("inf"), -float("inf"), 0.0]])])]),
        "sort_int64_dim0": (Fn(lambda s, x: torch.sort(x, dim=0, stable=True)), [ints(-3, 4, 11, 5)]),
        "topk_smallest_dim0": (Fn(lambda s, x: torch.topk(x, 3, dim=0, largest=False)),
                               [torch.cat([r(7, 4), torch.tensor([[float("nan"), 0.5, -9.0, 2.0]])])]),
        "topk_relu_sum": (Fn(lambda s, x: torch.relu(torch.topk(x, 4, dim=-1).values).sum(-1)), [r(5, 2, 10)]),
        # ---- scatter writes in their gather form (lower_core_scatter.cpp): duplicate
        # indices, an index smaller than self, every scatter_reduce mode ----
        "scatter_add_dup": (Fn(lambda s, x, i, src: torch.scatter_add(x, 1, i, src)),
                            [r(4, 6), ints(0, 6, 3, 5), r(4, 7)]),
        "scatter_src_value": (Fn(lambda s, x, i, src, j: (x.scatter(0, i, src), x.scatter(1, j, 2.5))),
                              [r(5, 4), ints(0, 5, 3, 4), r(3, 4), ints(0, 4, 5, 2)]),
        "scatter_reduce_modes": (
            Fn(lambda s, x, i, src, xi, srci: (x.scatter_reduce(0, i, src, "sum"),
                                               x.scatter_reduce(0, i, src, "prod", include_self=False),
                                               x.scatter_reduce(0, i, src, "mean"),
                                               x.scatter_reduce(0, i, src, "amax"),
                                               x.scatter_reduce(0, i, src, "amin", include_self=False),
                                               xi.scatter_reduce(0, i, srci, "mean", include_self=False))),
            [r(6, 3), ints(0, 6, 8, 3), r(8, 3), ints(-20, 20, 6, 3), ints(-20, 20, 8, 3)]),
        "index_put_accumulate": (
            Fn(lambda s, x, i, v, a, c, w: (x.index_put((i,), v, accumulate=True),
                                             x.index_put((a, c), w))),
            [r(7, 3), ints(-7, 7, 10), r(10, 3), torch.tensor([0, 2, 6, -1]), torch.tensor([1, 0, 2, 2]), r(4)]),
        "index_add_rows": (Fn(lambda s, x, i, src: x.index_add(0, i, src, alpha=0.5)), [r(6, 4), ints(0, 6, 9), r(9, 4)]),
        "masked_scatter_broadcast": (Fn(lambda s, x, m, src: x.masked_scatter(m, src)),
                                     [r(3, 4, 5), r(4, 1) > 0, r(70)]),
        # ---- resampling and distances (lower_core_sample.cpp, lower_core_distance.cpp) ----
        "upsample_bilinear": (Fn(lambda s, x: (F.interpolate(x, size=(7, 9), mode="bilinear"),
                                               F.interpolate(x, scale_factor=2.5, mode="bilinear", align_corners=True))),
                              [r(2, 3, 4, 5)]),
        "grid_sample_modes": (Fn(lambda s, x, g: (F.grid_sample(x, g, align_corners=False),
                                                  F.grid_sample(x, g, mode="nearest", padding_mode="border",
                                                                align_corners=True))),
                              [r(2, 3, 5, 6), 1.2 * torch.rand(2, 4, 7, 2) * 2 - 1.2]),
        "fold_col2im": (Fn(lambda s, x: F.fold(x, (7, 8), (3, 2), dilation=(1, 2), padding=1, stride=(2, 1))),
                        [r(2, 18, 4 * 8)]),
        "cdist_pdist": (Fn(lambda s, a, b: (torch.cdist(a, b), torch.cdist(a, b, p=1.0), torch.cdist(a, b, p=float("inf")),
                                            torch.cdist(a, b, p=3.0), F.pdist(a[0]), F.pdist(a[1], p=1.0))),
                        [r(2, 6, 5), r(2, 4, 5)]),
        # ---- rows accumulated by segment or index (families/index_add: sizes read at run
        # time; empty segments, more rows than segments, negative and repeated indices).
        # Written under families/: graphs a family takes whole, which the loop IR need not
        # lower (repeat_interleave), so the loop-nest tests that read every case here skip them ----
        "families/index_add_segment_mean": (
            Fn(lambda s, v, n: torch.zeros(n.numel(), v.shape[1]).index_add(
                0, torch.repeat_interleave(torch.arange(n.numel()), n), v) / n.clamp(min=1).to(v.dtype)[:, None]),
            [r(11, 5), torch.tensor([3, 0, 4, 1, 0, 3])]),
        "families/index_add_segment_full": (
            Fn(lambda s, v, n: torch.full((7, 2, 3), 1.5).index_add(0, torch.repeat_interleave(torch.arange(n.numel()), n), v)),
            [r(9, 2, 3), torch.tensor([2, 0, 5, 2])]),
        "families/index_add_inplace": (Fn(lambda s, i, src: torch.zeros(6, 4).index_add_(0, i, src)),
                                       [ints(0, 6, 9), r(9, 4)]),
        "families/index_add_table_negative": (Fn(lambda s, x, i, v: x.index_put((i,), v, accumulate=True)),
                                     [r(6, 4), torch.tensor([0, -1, 5, 2, -6, 2, 2, 3]), r(8, 4)]),
        # ---- segment ids of jagged lengths (lower_core_search.cpp): zeros among the
        # lengths; 9 of them (count form) and 100 (binary lifting) ----
        "repeat_interleave_ids": (
            Fn(lambda s, n, m: (torch.repeat_interleave(torch.arange(n.numel()), n),
                                torch.repeat_interleave(torch.arange(m.numel()), m))),
            [torch.tensor([2, 0, 3, 1, 0, 0, 4, 1, 2]), ints(0, 4, 100)]),
        # ---- x[bool mask] (families/masked_select): a comparison, a length mask over the
        # first two dims of a 3-D tensor, an int64 tensor under a bool input ----
        "families/masked_select_compare": (Fn(lambda s, x, y: x[y == 1]), [r(37), ints(0, 2, 37)]),
        "families/masked_select_lengths": (
            Fn(lambda s, d, n: d[torch.arange(d.shape[1])[None, :] < n[:, None]]), [r(5, 6, 3), torch.tensor([2, 0, 6, 1, 4])]),
        "families/masked_select_int_rows": (Fn(lambda s, x, m: x[m]), [ints(-9, 9, 4, 5, 2), r(4, 5) > 0]),
        # ---- searches past 64 boundaries (lower_core_search.cpp, binary lifting): ties on
        # both sides, values outside the table, a batched sequence of 129 ----
        "searchsorted_long_table": (
            Fn(lambda s, b, x, b2, x2: (torch.searchsorted(b, x), torch.searchsorted(b, x, side="right"),
                                        torch.bucketize(x, b, right=True), torch.searchsorted(b2, x2))),
            [torch.sort(ints(-50, 50, 300)).values.float(),
             torch.cat([r(40) * 40, torch.tensor([-50.0, -49.0, 0.0, 49.0, 50.0, 13.0])]),
             torch.sort(r(3, 129), dim=-1).values, r(3, 10)]),
        # ---- index_put's values broadcast across the indices (a [1, 4] row added at 10
        # indices): the loop nest's, not families/index_add's (one value row per index) ----
        "index_put_broadcast_values": (Fn(lambda s, x, i, v: x.index_put((i,), v, accumulate=True)),
                                       [r(6, 4), ints(-6, 6, 10), r(1, 4)]),
        # ---- products whose operands are a permute between two reshapes (an einsum over
        # heads; a transformer's per-head scores): affine only with the vars' ranges ----
        "einsum_heads": (Fn(lambda s, q, k: torch.einsum("bhqd,bhkd->bhqk", q, k)), [r(2, 3, 5, 24), r(2, 3, 7, 24)]),
        "heads_scores": (Fn(lambda s, x, y: x.view(2, 9, 3, 8).transpose(1, 2) @ y.view(2, 11, 3, 8).permute(0, 2, 3, 1)),
                         [r(2, 9, 24), r(2, 11, 24)]),
        # ---- operands no affine map reads (kernel_plan.cpp materializes them): an
        # attention in-projection's rows, permuted (i % 3) * 5 + i // 3 by the transpose to
        # sequence-first before the reshape; a convolution over a channels-last input ----
        "linear_permuted_rows": (Fn(lambda s, x: s.mods[0](x.transpose(0, 1).reshape(15, 8)), nn.Linear(8, 6)),
                                 [r(3, 5, 8)]),
        "conv2d_channels_last_input": (Fn(lambda s, x: s.mods[0](x.permute(0, 3, 1, 2)), nn.Conv2d(4, 5, 3, padding=1)),
                                       [r(2, 6, 7, 4)]),
        # ---- row reductions over contiguous rows of 40 (the tiled draft's reduce_loop =
        # "outer" keeps them as vectorized inner sums: loop_nest_cpp.cpp) ----
        "layer_norm_rows": (Fn(lambda s, x: s.mods[0](x), nn.LayerNorm(40)), [r(6, 40) * 3 + 1]),
        # ---- triangular masks over a product (tiles wholly outside are not multiplied:
        # gemm_cpp.cpp's live bounds), odd sizes so that tiles straddle the diagonal ----
        "mm_tril": (Fn(lambda s, a, b: torch.tril(a @ b)), [r(37, 20), r(20, 29)]),
        "bmm_triu_offset": (Fn(lambda s, a, b: torch.triu(torch.bmm(a, b), diagonal=-3) * 2), [r(2, 23, 9), r(2, 9, 31)]),
        # K = 300 > KC = 256: dead tiles skip a non-last panel too
        "mm_tril_deep": (Fn(lambda s, a, b: torch.tril(a @ b)), [r(64, 300), r(300, 64) / 17]),
        # one GEMM task and K = 1100 >= 2 KC: split K across the threads, epilogue after the sum
        "mm_split_k_relu": (Fn(lambda s, a, b: torch.relu(a @ b)), [r(7, 1100), r(1100, 9) / 33]),
        # a band (both masks: tiles outside either side skipped)
        "mm_band": (Fn(lambda s, a, b: torch.triu(torch.tril(a @ b, diagonal=8), diagonal=-5)), [r(50, 30), r(30, 60)]),
        # ---- transposed convolutions as plain ones over the zero-upsampled input
        # (lower_core_heavy.cpp), grouped and dilated; padding past (K - 1) d keeps the
        # masked transposed sum ----
        "conv_transpose1d_grouped_dilated": (
            Fn(lambda s, x: s.mods[0](x),
               nn.ConvTranspose1d(4, 6, 3, stride=3, padding=1, dilation=2, groups=2, output_padding=1)),
            [r(2, 4, 5)]),
        "conv_transpose1d_wide_pad": (Fn(lambda s, x: s.mods[0](x), nn.ConvTranspose1d(2, 3, 2, stride=2, padding=3)),
                                      [r(2, 2, 8)]),
        # ---- depthwise convolutions in the direct form (conv_cpp.h, ConvRunsDirect) ----
        "conv2d_depthwise_strided_dilated_relu": (
            Fn(lambda s, x: torch.relu(s.mods[0](x)), nn.Conv2d(6, 6, 3, stride=2, padding=2, dilation=2, groups=6)),
            [r(2, 6, 9, 11)]),
        # padding wider than the window: output columns inside the padding alone; multiplier 3
        "conv1d_depthwise_wide_pad": (Fn(lambda s, x: s.mods[0](x), nn.Conv1d(3, 9, 3, stride=3, padding=5, groups=3)),
                                      [r(2, 3, 4)]),
        "conv3d_depthwise_bias_add": (
            Fn(lambda s, x, y: s.mods[0](x) + y, nn.Conv3d(4, 4, (2, 3, 3), padding=(0, 1, 1), groups=4)),
            [r(2, 4, 3, 5, 6), r(2, 4, 2, 5, 6)]),
        # ---- epilogues reading a same-shaped tensor at the convolution's own element: one
        # flat index (ke_own) instead of a division per spatial dim (loop_nest_cpp.cpp) ----
        "conv2d_swish_residual": (
            Fn(lambda s, x: (lambda c: x + c * torch.sigmoid(c))(s.mods[0](x)), nn.Conv2d(5, 5, 3, padding=1)),
            [r(2, 5, 7, 9)]),
        "conv1d_unbatched_residual": (Fn(lambda s, x, y: torch.relu(s.mods[0](x)) - y, nn.Conv1d(4, 6, 3, padding=1)),
                                      [r(4, 11), r(6, 11)]),
        # Convolutions with enough output channels per group for the Triton tl.dot main
        # loop (main_loop_triton.h): groups, stride, padding, dilation, 1d unbatched, 3d.
        "conv2d_grouped_wide": (Fn(lambda s, x: torch.relu(s.mods[0](x)),
                                   nn.Conv2d(8, 32, 3, stride=2, padding=1, groups=2)),
                                [r(2, 8, 9, 13)]),
        "conv1d_unbatched_wide": (Fn(lambda s, x: s.mods[0](x), nn.Conv1d(6, 17, 5, stride=2, padding=3)),
                                  [r(6, 40)]),
        "conv3d_dilated_wide": (Fn(lambda s, x: s.mods[0](x),
                                   nn.Conv3d(3, 16, (2, 3, 3), padding=(1, 0, 1), dilation=(1, 2, 1), bias=False)),
                                [r(2, 3, 5, 8, 6)]),
        # A leading size of 1 (batch 1): the consumer's load of the product simplifies its
        # unit index to 0 and still reads the product's own element, so the epilogue fuses.
        "bmm_unit_batch_residual_relu": (Fn(lambda s, a, b, y: torch.relu(torch.bmm(a, b) + y)),
                                         [r(1, 40, 24), r(1, 24, 36), r(1, 40, 36)]),
        "conv2d_unit_batch_sigmoid": (Fn(lambda s, x: torch.sigmoid(s.mods[0](x)), nn.Conv2d(4, 16, 3, padding=1)),
                                      [r(1, 4, 7, 9)]),
        # relu(x @ w1^T + b1) feeding a second product: the bias add inlines into the relu
        # (kernel_plan.cpp), which becomes the first product's epilogue.
        "linear_relu_linear": (Fn(lambda s, x: s.mods[1](torch.relu(s.mods[0](x))), nn.Linear(24, 40), nn.Linear(40, 16)),
                               [r(5, 24)]),
        # q @ k^T with q and k slices of one in-projection buffer: both operands of the
        # product are the same tensor (one kernel parameter on Triton).
        "self_attention_scores": (Fn(lambda s, x: (lambda q, k: q @ k.transpose(-1, -2))(*s.mods[0](x).chunk(2, dim=-1)),
                                     nn.Linear(16, 64)),
                                  [r(2, 20, 16)]),
        # A 2-layer LSTM unrolled over 8 steps: each step's cell state feeds the next
        # step and that step's hidden state, so inlining it everywhere would recompute
        # the whole chain at every step (kernel_plan.cpp sums the reads); on Triton the
        # steps' kernels differ only in buffers and row offsets and share one form.
        "lstm_two_layer": (Fn(lambda s, x: s.mods[0](x)[0], nn.LSTM(6, 8, num_layers=2, batch_first=True)),
                           [r(2, 8, 6)]),
        # ---- strided transposed convolutions of dilation 1 as one plain convolution per
        # output phase (lower_core_heavy.cpp, PhaseConvolution): a kernel shorter than the
        # stride (a phase with no tap: bias only), mixed strides, groups, output_padding ----
        "conv_transpose2d_short_kernel": (
            Fn(lambda s, x: s.mods[0](x), nn.ConvTranspose2d(3, 4, 2, stride=3, padding=1, output_padding=2)),
            [r(2, 3, 4, 5)]),
        "conv_transpose3d_mixed_stride": (
            Fn(lambda s, x: torch.relu(s.mods[0](x)),
               nn.ConvTranspose3d(4, 6, (3, 2, 3), stride=(2, 1, 3), padding=(1, 0, 2), output_padding=(1, 0, 1),
                                  groups=2)),
            [r(2, 4, 3, 4, 3)]),
        # ---- max pooling windows whose inside is all -inf (ATen gives the first inside
        # position, not a padded one) and a NaN (its position wins) ----
        "max_pool2d_neg_inf_windows": (
            Fn(lambda s, x: F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)),
            [torch.where(torch.arange(2 * 3 * 7 * 8).reshape(2, 3, 7, 8) % 11 == 0, float("nan"),
                         r(2, 3, 7, 8)).index_fill(1, torch.tensor([0]), float("-inf"))]),
        # ---- windows holding several NaNs: pooling's index is the last NaN
        # (`val > max || isnan(val)`), torch.argmax's the first ----
        "max_pool_nan_windows": (
            Fn(lambda s, x: (F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)[1],
                             F.adaptive_max_pool2d(x, (3, 2), return_indices=True)[1],
                             *F.max_pool1d(x.flatten(2), 5, stride=3, return_indices=True))),
            [torch.where(torch.arange(2 * 3 * 7 * 8).reshape(2, 3, 7, 8) % 3 == 0, float("nan"), r(2, 3, 7, 8))]),
        # Element kernels that read a reduction at its own element (ir/epilogue_fusion.h):
        # a reduction that is an output and read by another output, a consumer that
        # reshapes it, an integer one, one that reads it broadcast (not fusable), and a
        # reduction read both ways (the one consumer fused, the reduction stored).
        "reduction_epilogues": (Fn(lambda s, x, y: reduction_epilogues(x, y)), [r(4, 5, 3), r(4, 3)]),
        # A sum read by a product as its operand (problems/chains/embedding_sum_linear): with
        # double accumulators the sum's buffer stays float32, since tl.dot takes no float64.
        "sum_then_linear": (Fn(lambda s, x: s.mods[0](x.sum(dim=1)), nn.Linear(16, 8)), [r(6, 5, 16)]),
        # Channels per group a multiple of 16 (a removed Triton depth order stepped by window
        # position there; still convolutions with padding, dilation, groups, 3-d).
        "conv2d_wide_channels": (Fn(lambda s, x: s.mods[0](x), nn.Conv2d(48, 20, 3, padding=1)), [r(2, 48, 6, 7)]),
        "conv2d_grouped_dilated_wide": (
            Fn(lambda s, x: s.mods[0](x), nn.Conv2d(64, 32, 3, stride=2, padding=2, dilation=2, groups=2)),
            [r(1, 64, 9, 10)]),
        "conv3d_wide_channels_relu": (Fn(lambda s, x: torch.relu(s.mods[0](x)), nn.Conv3d(16, 16, 3, padding=1)),
                                      [r(1, 16, 3, 4, 5)]),
        # One buffer as input and weight.
        "conv_input_is_weight": (Fn(lambda s, x: F.conv2d(x, x, padding=1)), [r(16, 16, 3, 3)]),
        # The C++ packer reads a zero-padded copy of the input (codegen/cpp/conv_cpp.cpp)
        # with one copy per stride: stride 3 (a gather) with padding past a whole window,
        # stride 2 over rows longer than two vectors, and stride 2 without padding, read
        # from the input itself up to its last element but one.
        "conv2d_stride3_pad_past_window": (Fn(lambda s, x: s.mods[0](x), nn.Conv2d(4, 6, 3, stride=3, padding=4)),
                                           [r(2, 4, 10, 11)]),
        "conv2d_stride2_long_rows": (Fn(lambda s, x: s.mods[0](x), nn.Conv2d(3, 5, 3, stride=2, padding=1)),
                                     [r(1, 3, 7, 70)]),
        "conv1d_stride2_unpadded": (Fn(lambda s, x: s.mods[0](x), nn.Conv1d(4, 8, 5, stride=2)), [r(2, 4, 102)]),
        # Adaptive windows [floor(o In / Out), ceil((o + 1) In / Out)) of uneven sizes, values
        # and argmax; with -inf inputs the first of equal maxima must still be taken.
        "adaptive_max_pool3d_indices": (Fn(lambda s, x: F.adaptive_max_pool3d(x, (3, 4, 5), return_indices=True)),
                                        [r(1, 2, 7, 9, 11)]),
        "adaptive_max_pool2d_neg_inf": (
            Fn(lambda s, x: F.adaptive_max_pool2d(x.masked_fill(x > 0.3, float("-inf")), (4, 3), return_indices=True)),
            [r(2, 3, 9, 7)]),
        # float16 / bfloat16 are storage types (lower_core.cpp, RoundThroughHalf): inputs
        # widen to float32, every half-precision op rounds its result as eager does, a
        # half output is stored in its type. A GEMM with bias and GELU (the packed GEMM
        # and its epilogue), a bfloat16 Linear (t + addmm) with ReLU, reductions, an
        # argmax and a softmax over float16, and casts between the half types, float32,
        # int64, int32 and bool (NaN, inf, signed zeros, a bfloat16 subnormal included).
        "half_matmul_bias_gelu": (Fn(lambda s, a, b, c: F.gelu(a @ b + c)),
                                  [r(24, 40).half(), (r(40, 36) / 6).half(), (0.1 * r(36)).half()]),
        "bf16_linear_relu": (Fn(lambda s, x: F.relu(s.mods[0](x)), nn.Linear(32, 20).to(torch.bfloat16)),
                             [r(6, 32).to(torch.bfloat16)]),
        "half_reductions": (Fn(lambda s, x: (x.sum(dim=1), x.mean(dim=-1, keepdim=True), x.amax(dim=0),
                                             x.argmax(dim=1), torch.softmax(x, dim=-1))),
                            [r(5, 7, 33).half()]),
        "bf16_casts": (Fn(lambda s, x, y, i: (x.float() * y, (y * 3).to(torch.bfloat16), x.to(torch.float16),
                                              i.to(torch.bfloat16) + x, x > 0.5,
                                              (y * 50).to(torch.bfloat16).to(torch.int32))),
                       [torch.cat([r(4, 9), torch.tensor([[float("nan"), float("inf"), -float("inf"), 0.0,
                                                           -0.0, 1e-40, 3e38, -3e38, 0.5]])]).to(torch.bfloat16),
                        r(5, 9), ints(-300, 300, 5, 9)]),
        # ---- half-precision embedding bags (families/embedding_bag): float16 mean with an
        # empty bag, bfloat16 sum with per-sample weights and the last offset, float16 max.
        "families/embedding_bag_f16_mean": (
            Fn(lambda s, i, w, o: F.embedding_bag(i, w, o, mode="mean")),
            [ints(0, 50, 37), r(50, 24).half(), torch.tensor([0, 5, 5, 20, 31])]),
        "families/embedding_bag_bf16_weighted": (
            Fn(lambda s, i, w, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p,
                                                     include_last_offset=True)),
            [ints(0, 40, 30), r(40, 20).to(torch.bfloat16), torch.tensor([0, 4, 4, 17, 30]),
             r(30).to(torch.bfloat16)]),
        "families/embedding_bag_f16_max": (
            Fn(lambda s, i, w, o: F.embedding_bag(i, w, o, mode="max")),
            [ints(0, 30, 25), r(30, 33).half(), torch.tensor([0, 3, 9, 9, 16])]),
        # ---- float floor division as eager rounds it (c10::div_floor_floating): 1.0 // 0.1
        # is 9, inf // 2 is NaN, a zero quotient keeps the sign of a / b, x // 0 is x / 0.
        "float_floor_div": (
            Fn(lambda s, a, b: (a // b, torch.div(a, b, rounding_mode="floor"), torch.floor_divide(a, 0.1),
                                torch.div(a.half(), b.half(), rounding_mode="floor"))),
            [torch.cat([5 * r(3, 12), torch.tensor([[1.0, float("inf"), -float("inf"), 5.0, -5.0, 0.0, -0.0, 7.5,
                                                     1e30, 3.0, float("nan"), -0.3]])]),
             torch.cat([r(3, 12), torch.tensor([[0.1, 2.0, 2.0, 0.0, -3.0, -2.0, 2.0, -0.0, 1e-30,
                                                 float("inf"), 1.0, 0.7]])])]),
    }


def col2im_case():
    """aten.col2im as one node (the capture decomposes F.fold into index_put, so this
    core op is written by hand): graph, inputs, eager outputs."""
    x = r(2, 18, 4 * 8)
    args = dict(output_size=[7, 8], kernel_size=[3, 2], dilation=[1, 2], padding=[1, 1], stride=[2, 1])
    out = torch.ops.aten.col2im.default(x, **args)
    graph = {
        "nodes": [
            {"name": "arg0_1", "kind": "placeholder", "abi_index": 0, "shape": list(x.shape), "dtype": "float32"},
            {"name": "col2im", "kind": "call", "target": "aten.col2im.default",
             "args": [{"name": "self", "ref": "arg0_1"}] + [{"name": k, "value": v} for k, v in args.items()],
             "shape": list(out.shape), "dtype": "float32"},
        ],
        "outputs": ["col2im"],
    }
    return graph, [x], [out]


def main():
    torch.manual_seed(0)
    total = 0
    for name, (model, inputs) in cases().items():
        model = model.eval()
        graph, err = capture_graph(model, inputs)
        if err:
            raise SystemExit(f"{name}: {err}")
        with torch.no_grad():
            out = model(*inputs)
        outs = list(out) if isinstance(out, tuple) else [out]
        # The entry takes exactly the graph's inputs: the forward() inputs and the
        # state_dict() tensors it reads (BatchNorm's num_batches_tracked is not read).
        used = sorted({n["abi_index"] for n in graph["nodes"] if n["kind"] in ("placeholder", "parameter")})
        if used != list(range(len(used))):
            raise SystemExit(f"{name}: ABI inputs {used} are not 0..{len(used) - 1}")
        every = inputs + list(model.state_dict().values())
        tensors = {f"in.{k}": every[k].contiguous() for k in used}
        tensors.update({f"out.{k}": t.contiguous() for k, t in enumerate(outs)})
        path = os.path.join(HERE, f"{name}.safetensors")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_file(tensors, path)
        with open(os.path.join(HERE, f"{name}.json"), "w") as f:
            json.dump(graph, f, indent=1)
        total += os.path.getsize(path) + os.path.getsize(os.path.join(HERE, f"{name}.json"))
        print(name, [n["target"] for n in graph["nodes"] if n["kind"] == "call"])
    graph, inputs, outs = col2im_case()
    save_file({"in.0": inputs[0].contiguous(), "out.0": outs[0].contiguous()},
              os.path.join(HERE, "col2im_direct.safetensors"))
    with open(os.path.join(HERE, "col2im_direct.json"), "w") as f:
        json.dump(graph, f, indent=1)
    print("col2im_direct", ["aten.col2im.default"])
    print(f"{len(cases()) + 1} cases, {total} bytes")


if __name__ == "__main__":
    main()
