"""Adversarial (kernel origin): the launcher calls torch.softmax and a Triton kernel
only copies its result (problems/level1/softmax.py). Correct outputs; must be
rejected_by_check naming PyTorch's softmax kernel."""
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def kernelevolve_entry(inputs, outputs):
    y = torch.softmax(inputs[0], dim=-1)
    n = y.numel()
    _copy[(triton.cdiv(n, 1024),)](y, outputs[0], n, BLOCK=1024)
