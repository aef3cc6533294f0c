"""Control for the kernel-origin check: an honest Triton matmul (problems/gpu_gemm/matmul.py).
It allocates a scratch with torch.zeros (a fill kernel: allowed) and uses only its own kernel."""
import torch
import triton
import triton.language as tl


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, M, N, K, row0,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = row0 + pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
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


def matmul_rows(a, b, c, row0, row1):
    """c[row0:row1] = a[row0:row1] @ b with the Triton kernel."""
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(row1 - row0, 64), triton.cdiv(N, 64))
    _mm[grid](a, b, c, row1, N, K, row0, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)


def kernelevolve_entry(inputs, outputs):
    a, b = inputs
    scratch = torch.zeros(16, device=a.device)  # allocation and a fill: allowed
    del scratch
    matmul_rows(a, b, outputs[0], 0, a.shape[0])
