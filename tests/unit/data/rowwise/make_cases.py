"""Writes the rowwise template's test cases: for each small model, its captured
graph (<case>.json, worker format) and one input set with the eager outputs
(<case>.safetensors: "in.<k>" ABI inputs, "out.<k>" outputs).

Regenerate from the repository root: .venv/bin/python tests/unit/data/rowwise/make_cases.py
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


def cases():
    bn = nn.BatchNorm2d(6)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(0.5, 1.5)
    bn.bias.data.uniform_(-0.5, 0.5)
    ln = nn.LayerNorm(24)
    ln.weight.data.uniform_(0.5, 1.5)
    ln.bias.data.uniform_(-0.5, 0.5)
    gn = nn.GroupNorm(4, 8)
    gn.weight.data.uniform_(0.5, 1.5)
    gn.bias.data.uniform_(-0.5, 0.5)
    rms = nn.RMSNorm(20)
    rms.weight.data.uniform_(0.5, 1.5)
    return {
        "sum_mid_dim": (Fn(lambda s, x: x.sum(dim=1)), [r(6, 37, 5)]),
        "mean_keepdim": (Fn(lambda s, x: x.mean(dim=(2, 3), keepdim=True)), [r(4, 6, 7, 9)]),
        "max_dim_both": (Fn(lambda s, x: torch.max(x, dim=1)), [r(5, 33, 4)]),
        "argmin_last": (Fn(lambda s, x: torch.argmin(x, dim=-1)), [r(7, 45)]),
        "prod_dim": (Fn(lambda s, x: torch.prod(x, dim=1)), [1 + 0.1 * r(6, 20)]),
        "norms": (Fn(lambda s, x: (torch.norm(x, p=1, dim=1), torch.norm(x, p="fro"),
                                   torch.linalg.vector_norm(x, ord=float("inf"), dim=1))),
                  [r(9, 31)]),
        "var_std": (Fn(lambda s, x: (torch.var(x, dim=-1), torch.std(x, dim=-1, unbiased=False))),
                    [r(8, 50)]),
        "softmax_mid": (Fn(lambda s, x: torch.softmax(x, dim=1)), [3 * r(3, 17, 10)]),
        "log_softmax_first": (Fn(lambda s, x: torch.log_softmax(x, dim=0)), [3 * r(19, 6)]),
        "layer_norm_affine": (Fn(lambda s, x: s.mods[0](x), ln), [r(4, 10, 24)]),
        "layer_norm_2d": (Fn(lambda s, x: F.layer_norm(x, [6, 7])), [r(5, 6, 7)]),
        "rms_norm_weight": (Fn(lambda s, x: s.mods[0](x), rms), [r(6, 20)]),
        "group_norm": (Fn(lambda s, x: s.mods[0](x), gn), [r(3, 8, 5, 4)]),
        "instance_norm": (Fn(lambda s, x: F.instance_norm(x)), [r(3, 4, 6, 5)]),
        "batch_norm_eval": (Fn(lambda s, x: s.mods[0](x), bn.eval()), [r(4, 6, 5, 3)]),
        "losses": (Fn(lambda s, a, b: (F.mse_loss(a, b), F.huber_loss(a, b, delta=0.5),
                                       F.smooth_l1_loss(a, b, beta=2.0, reduction="sum"),
                                       F.mse_loss(a, b, reduction="none"))),
                   [r(7, 13), r(7, 13)]),
        "kl_div": (Fn(lambda s, a, b: F.kl_div(torch.log(a), b, reduction="batchmean")),
                   [torch.softmax(r(6, 9), -1), torch.softmax(r(6, 9), -1)]),
        "hinge": (Fn(lambda s, a, b: torch.mean(torch.clamp(1 - a * b, min=0))), [r(40), r(40).sign()]),
        "cross_entropy": (Fn(lambda s, a, t: F.cross_entropy(a, t)),
                          [3 * r(16, 11), torch.randint(0, 11, (16,))]),
        "full_sum_chunks": (Fn(lambda s, x: x.sum()), [r(3, 5000)]),
        "swish_bias_layer_norm": (Fn(lambda s, x, b: F.layer_norm(x * torch.sigmoid(x) + b, [24])),
                                  [r(5, 24), r(24)]),
        "scale_clamp_sum": (Fn(lambda s, x: torch.clamp(x * 1.7, -1, 1).sum(dim=1)), [r(4, 12, 6)]),
        "residual_rms_norm": (Fn(lambda s, x, y: (lambda z: z * torch.rsqrt(z.pow(2).mean(-1, keepdim=True) + 1e-6))(x + y)),
                              [r(6, 32), r(6, 32)]),
        "layer_norm_gelu": (Fn(lambda s, x: F.gelu(F.layer_norm(x, [24]))), [r(5, 24)]),
    }


def main():
    torch.manual_seed(0)
    for name, (model, inputs) in cases().items():
        model = model.eval()
        graph, err = capture_graph(model, inputs)
        if err:
            raise SystemExit(f"{name}: {err}")
        with torch.no_grad():
            out = model(*inputs)
        outs = list(out) if isinstance(out, tuple) else [out]
        tensors = {f"in.{k}": t.contiguous() for k, t in enumerate(inputs + list(model.state_dict().values()))}
        tensors.update({f"out.{k}": t.contiguous() for k, t in enumerate(outs)})
        save_file(tensors, os.path.join(HERE, f"{name}.safetensors"))
        with open(os.path.join(HERE, f"{name}.json"), "w") as f:
            json.dump(graph, f, indent=1)
        print(name, [n["target"] for n in graph["nodes"] if n["kind"] == "call"])


if __name__ == "__main__":
    main()
