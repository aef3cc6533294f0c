"""Whether the reference's CUDA float32 products run in TF32, as PyTorch's flags say.

Issue 18: a float32 kernel may use TF32 tensor cores (10-bit mantissa inputs, float32
accumulation) only where the reference itself does. PyTorch decides that per process:

    matmuls        torch.backends.cuda.matmul.allow_tf32 (default False), or
                   torch.set_float32_matmul_precision("high" | "medium"), or the newer
                   torch.backends.cuda.matmul.fp32_precision = "tf32"
    convolutions   torch.backends.cudnn.allow_tf32 (default True), or
                   torch.backends.cudnn.conv.fp32_precision = "tf32"
    recurrent      torch.backends.cudnn.allow_tf32, or since torch 2.9
    layers         torch.backends.cudnn.rnn.fp32_precision = "tf32" (nn.RNN / LSTM / GRU,
                   which cuDNN runs whole)

(https://pytorch.org/docs/stable/notes/cuda.html, "TensorFloat-32 (TF32) on Ampere (and
later) devices"). A problem file may set them at import; the worker reads them after
importing it. Only CUDA eager kernels follow them: a CPU reference never uses TF32.
"""

from __future__ import annotations

import torch


def _matmul_tf32() -> bool:
    # The legacy getters refuse once the new API (fp32_precision) set another value
    # than they can express (torch 2.9+): the new API's value is the answer then.
    try:
        if torch.get_float32_matmul_precision() in ("high", "medium"):
            return True
        return bool(torch.backends.cuda.matmul.allow_tf32)
    except RuntimeError:
        return getattr(torch.backends.cuda.matmul, "fp32_precision", "") == "tf32"


def _conv_tf32() -> bool:
    try:
        return bool(torch.backends.cudnn.allow_tf32)
    except RuntimeError:
        conv = getattr(torch.backends.cudnn, "conv", None)
        return getattr(conv, "fp32_precision", "") == "tf32"


def _rnn_tf32() -> bool:
    # torch 2.9+ keeps cuDNN RNNs' own flag (it follows allow_tf32 unless set apart);
    # before, allow_tf32 covered every cuDNN op.
    rnn = getattr(torch.backends.cudnn, "rnn", None)
    precision = getattr(rnn, "fp32_precision", None)
    if precision is not None:
        return precision == "tf32"
    try:
        return bool(torch.backends.cudnn.allow_tf32)
    except RuntimeError:
        return False


def reference_tf32() -> dict[str, bool]:
    """{"matmul": bool, "conv": bool, "rnn": bool}: whether eager PyTorch's CUDA float32
    matmuls (mm, bmm, addmm, linear, ...), cuDNN convolutions and cuDNN recurrent layers
    (nn.RNN / LSTM / GRU) run in TF32 in this process."""
    return {"matmul": _matmul_tf32(), "conv": _conv_tf32(), "rnn": _rnn_tf32()}
