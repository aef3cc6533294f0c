"""Transformer encoder block (eval mode, no dropout): y = nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, dropout=0.0, batch_first=True)(x), post-norm, ReLU feed-forward.

Inputs: x float32[B, S, D_MODEL]; params: self_attn in_proj float32[3 D_MODEL, D_MODEL] and
out_proj [D_MODEL, D_MODEL] with biases, linear1 [FF, D_MODEL], linear2 [D_MODEL, FF] with
biases, norm1/norm2 weight/bias float32[D_MODEL]; output: float32[B, S, D_MODEL].
ATen ops (Core ATen capture; SDPA kept whole for the attention family):
aten.permute.default, aten.clone.default, aten._unsafe_view.default, aten.mm.default,
aten.add.Tensor, aten.view.default, aten.unsqueeze.default, aten.squeeze.dim,
aten.select.int, aten._scaled_dot_product_flash_attention_for_cpu.default, getitem,
aten.addmm.default, aten.native_layer_norm.default, aten.relu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
S = 32
D_MODEL = 64
NHEAD = 4
FF = 128


class Model(nn.Module):
    """nn.TransformerEncoderLayer, batch_first, dropout 0, in eval mode."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(D_MODEL, NHEAD, dim_feedforward=FF, dropout=0.0, batch_first=True)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)


def get_inputs():
    return [torch.randn(B, S, D_MODEL)]


def get_init_inputs():
    return []
