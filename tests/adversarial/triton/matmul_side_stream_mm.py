"""Adversarial (kernel origin): a correct Triton matmul, plus torch.mm on a side
stream (problems/gpu_gemm/matmul.py). Must be rejected_by_check naming the cuBLAS
kernel, although the Triton kernel alone is right."""
import torch
import triton
import triton.language as tl

_side = None


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, M, N, K,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :],
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def kernelevolve_entry(inputs, outputs):
    global _side
    a, b = inputs
    c = outputs[0]
    M, K = a.shape
    N = b.shape[1]
    _mm[(triton.cdiv(M, 64), triton.cdiv(N, 64))](a, b, c, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    if _side is None:
        _side = torch.cuda.Stream()
    with torch.cuda.stream(_side):
        torch.mm(a, b)  # result unused: the point is the foreign launch on another stream
