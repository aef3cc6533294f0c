"""Writes the explicit-attention matcher's test cases (tests/unit/attention_explicit_test.cpp):
for each small model, its captured Core ATen graph (<case>.json, worker format) and one
input set with the eager output (<case>.safetensors: "in.<k>" forward() inputs, "out.0").
Cases named match_* are spellings the matcher reads back as attention
(src/operators/ir/attention_explicit.h); refuse_* are ones it must leave to the loop nest.

Regenerate from the repository root: .venv/bin/python tests/unit/data/attention/make_cases.py
"""

import json
import math
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
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def qkv(b, h, l, s, e, dtype=torch.float32):
    lead = (b, h) if h else (b,)
    return [torch.randn(*lead, l, e, dtype=dtype), torch.randn(*lead, s, e, dtype=dtype),
            torch.randn(*lead, s, e, dtype=dtype)]


def scores(q, k, scale=None):
    s = torch.matmul(q, k.transpose(-2, -1))
    return s if scale is None else s * scale


def attend(s, v, dim=-1):
    return torch.matmul(torch.softmax(s, dim=dim), v)


def causal_triu(q, k, v):
    L, S = q.shape[-2], k.shape[-2]
    drop = torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=1)
    return attend(scores(q, k, 0.3).masked_fill(drop, float("-inf")), v)


def causal_not_tril(q, k, v):
    keep = torch.tril(torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool))
    return attend(scores(q, k, 0.3).masked_fill(~keep, float("-inf")), v)


def causal_where_keep(q, k, v):
    keep = torch.tril(torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool))
    return attend(torch.where(keep, scores(q, k, 0.3), float("-inf")), v)


def causal_float_tril(q, k, v):
    keep = torch.ones(q.shape[-2], k.shape[-2]).tril()
    return attend(scores(q, k, 0.3).masked_fill(keep == 0, float("-inf")), v)


def pad_mask(q, k, v, pad):
    return attend((q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(pad, float("-inf")), v)


def keep_mask(q, k, v, keep):
    return attend(scores(q, k, 0.25).masked_fill(~keep, float("-inf")), v)


def bmm3d(q, k, v):
    return torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1]), dim=-1), v)


def bmm3d_pad_causal(q, k, v, pad):
    L, S = q.shape[-2], k.shape[-2]
    drop = torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=1)
    s = torch.bmm(q, k.transpose(1, 2)) * 0.4
    s = s.masked_fill(pad, float("-inf")).masked_fill(drop, float("-inf"))
    return torch.bmm(torch.softmax(s, dim=-1), v)


def bias_scaled_q(q, k, v, bias):
    return torch.softmax((q * q.shape[-1] ** -0.5) @ k.transpose(-2, -1) + bias, dim=-1) @ v


def unscaled(q, k, v):
    return attend(q @ k.transpose(-2, -1), v)


def scaled_k(q, k, v):
    return attend(q @ (k * 0.5).transpose(-2, -1), v)


def bool_pad(b, l, s, lead_h=True):
    shape = (b, 1, 1, s) if lead_h else (1, l, s)
    pad = torch.rand(*shape) < 0.3
    pad[..., 0] = False
    return pad


def full_rows_pad():
    pad = bool_pad(2, 11, 37).expand(2, 1, 11, 37).clone()
    pad[:, :, 4, :] = True  # query 4 of both batches sees no key
    pad[1, :, 10, :] = True  # the last query of the second
    return pad


def cases():
    return {
        "match_causal_triu": (causal_triu, qkv(1, 2, 21, 21, 8)),
        "match_causal_not_tril": (causal_not_tril, qkv(2, 1, 13, 29, 12)),
        "match_causal_where_keep": (causal_where_keep, qkv(1, 2, 29, 13, 8)),
        "match_causal_float_tril": (causal_float_tril, qkv(1, 2, 17, 17, 20)),
        "match_pad_mask": (pad_mask, qkv(2, 3, 11, 37, 16) + [bool_pad(2, 11, 37)]),
        "match_keep_mask": (keep_mask, qkv(2, 2, 9, 19, 8) + [torch.rand(9, 19) > 0.3]),
        "match_bmm3d": (bmm3d, qkv(3, 0, 23, 41, 20)),
        "match_bmm3d_pad_causal": (bmm3d_pad_causal, qkv(2, 0, 19, 19, 8) + [bool_pad(2, 19, 19, False)]),
        "match_bias_scaled_q": (bias_scaled_q, qkv(2, 2, 15, 15, 8) + [torch.randn(1, 2, 15, 15)]),
        "match_unscaled": (unscaled, qkv(1, 2, 10, 14, 4)),
        "match_scaled_k": (scaled_k, qkv(1, 2, 10, 14, 4)),
        "refuse_softmax_dim2": (lambda q, k, v: attend(scores(q, k, 0.3), v, dim=-2), qkv(1, 2, 12, 12, 8)),
        "refuse_fill_minus_1e9": (
            lambda q, k, v: attend(scores(q, k, 0.3).masked_fill(
                torch.triu(torch.ones(12, 12, dtype=torch.bool), 1), -1e9), v), qkv(1, 2, 12, 12, 8)),
        "refuse_triu_diagonal_0": (
            lambda q, k, v: attend(scores(q, k, 0.3).masked_fill(
                torch.triu(torch.ones(12, 12, dtype=torch.bool), 0), float("-inf")), v), qkv(1, 2, 12, 12, 8)),
        "refuse_tril_diagonal_1": (
            lambda q, k, v: attend(scores(q, k, 0.3).masked_fill(
                ~torch.tril(torch.ones(12, 12, dtype=torch.bool), 1), float("-inf")), v), qkv(1, 2, 12, 12, 8)),
        "refuse_scale_after_mask": (
            lambda q, k, v: attend(scores(q, k).masked_fill(
                torch.triu(torch.ones(12, 12, dtype=torch.bool), 1), float("-inf")) * 0.3, v), qkv(1, 2, 12, 12, 8)),
        "refuse_dropout": (lambda q, k, v: torch.matmul(
            F.dropout(torch.softmax(scores(q, k, 0.3), dim=-1), 0.1, training=True), v), qkv(1, 2, 12, 12, 8)),
        "refuse_broadcast_heads": (lambda q, k, v: attend(scores(q, k, 0.3), v),
                                   [torch.randn(1, 4, 12, 8), torch.randn(1, 1, 12, 8), torch.randn(1, 1, 12, 8)]),
        "refuse_scaled_v": (lambda q, k, v: attend(scores(q, k, 0.3), v * 2.0), qkv(1, 2, 12, 12, 8)),
        "refuse_relu_after": (lambda q, k, v: torch.relu(attend(scores(q, k, 0.3), v)), qkv(1, 2, 12, 12, 8)),
        "refuse_float64": (lambda q, k, v: attend(scores(q, k, 0.3), v), qkv(1, 2, 12, 12, 8, torch.float64)),
        "refuse_value_head_size": (lambda q, k, v: attend(scores(q, k, 0.3), v),
                                   [torch.randn(1, 2, 12, 8), torch.randn(1, 2, 12, 8), torch.randn(1, 2, 12, 6)]),
        # Rows with every key masked: eager's softmax over a row of -inf is NaN (0 / 0),
        # unlike SDPA's 0, and the fused kernel must give the same.
        "match_pad_full_rows": (pad_mask, qkv(2, 3, 11, 37, 16) + [full_rows_pad()]),
    }


def main():
    torch.manual_seed(0)
    total = 0
    for name, (fn, inputs) in cases().items():
        model = Fn(fn).eval()
        graph, err = capture_graph(model, inputs)
        if err:
            raise SystemExit(f"{name}: {err}")
        with torch.no_grad():
            out = model(*inputs)
        tensors = {f"in.{k}": t.contiguous() for k, t in enumerate(inputs)}
        tensors["out.0"] = out.contiguous()
        path = os.path.join(HERE, f"{name}.safetensors")
        if name.startswith("match_"):  # refusals need only their graph
            save_file(tensors, path)
            total += os.path.getsize(path)
        with open(os.path.join(HERE, f"{name}.json"), "w") as f:
            json.dump(graph, f, indent=1)
        total += os.path.getsize(os.path.join(HERE, f"{name}.json"))
        print(name, [n["target"].removeprefix("aten.") for n in graph["nodes"] if n["kind"] == "call"])
    print(f"{len(cases())} cases, {total} bytes")


if __name__ == "__main__":
    main()
