# ReLU, any float dtype: y = max(x, 0). Recorded Triton answer of the fake LLM server.
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x > 0, x, 0.0), mask=mask)


def kernelevolve_entry(inputs, outputs):
    x, y = inputs[0], outputs[0]
    n = x.numel()
    _relu[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
