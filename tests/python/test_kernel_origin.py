"""Kernel origin (worker/kernelevolve_worker/kernel_origin.py, issue 21).

The name matching is tested on kernel-name lists as torch.profiler records them on an
H100/H200 (torch 2.x, CUDA 12/13): PyTorch's softmax and elementwise kernels, cuBLAS /
cuBLASLt GEMMs (``nvjet_...``, ``sm90_xmma_...``, ``cutlass...``), fills, copies,
memsets and memcpys, Triton kernels (named after their ``@triton.jit`` function) and
nvcc-built ``__global__`` functions (demangled or not). The runner-level tests of the
adversarial candidates under tests/adversarial/triton need a CUDA GPU and are skipped
elsewhere (scripts/check_kernel_origin_gpu.sh runs them through the binary).
"""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Iterator

import pytest
import torch

from conftest import FAST_BASELINE, PROBLEMS_DIR, REPO_ROOT, WorkerProcess
from kernelevolve_worker import kernel_origin as ko
from kernelevolve_worker.candidate_kinds import own_kernels
from kernelevolve_worker.session import WorkerSession

HAS_GPU = torch.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (scripts/check_kernel_origin_gpu.sh runs these there)")
ADVERSARIAL = REPO_ROOT / "tests" / "adversarial" / "triton"

SOFTMAX = ("void (anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
           "(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)")
GELU = ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::"
        "{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::"
        "{lambda(float)#1}, std::array<char*, 2ul>)")
NVJET = "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN"
XMMA = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
CUTLASS = ("void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_f16_128x128_32x3_nn_align8>"
           "(cutlass_80_tensorop_s16816gemm_f16_128x128_32x3_nn_align8::Params)")
FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
        "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")
COPY = ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
        "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::"
        "operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda"
        "(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::"
        "{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<...>)")
MEMSET = "Memset (Device)"
DTOD = "Memcpy DtoD (Device -> Device)"
DTOH = "Memcpy DtoH (Device -> Pageable)"
HTOD = "Memcpy HtoD (Pageable -> Device)"


def test_triton_candidate_with_only_its_kernels_passes() -> None:
    verdict = ko.foreign_kernels(["_softmax", "_softmax", "_tail"], ["_softmax", "_tail"], exact=True)
    assert verdict.foreign == [] and verdict.reason() == ""
    assert verdict.own == ["_softmax", "_tail"]


def test_allocation_fill_and_device_copies_are_allowed() -> None:
    verdict = ko.foreign_kernels(["_mm", FILL, MEMSET, COPY, DTOD], ["_mm"], exact=True)
    assert verdict.foreign == []
    assert sorted(rule for _, rule in verdict.allowed) == ["device copy", "device copy", "fill", "memset"]


@pytest.mark.parametrize("launched, foreign, named", [
    (["_copy", SOFTMAX], [SOFTMAX], "cunn_SoftMaxForward"),                  # torch.softmax in the launcher
    (["_mm_top", NVJET], [NVJET], "nvjet_hsh_256x128"),                      # torch.matmul on half the rows
    (["_mm", XMMA, XMMA], [XMMA], "sm90_xmma_gemm"),                          # torch.mm on a side stream, twice
    (["_mm", CUTLASS], [CUTLASS], "cutlass_80_tensorop"),
    (["_pointwise", GELU], [GELU], "GeluCUDAKernelImpl"),                     # F.gelu
    (["_pointwise", DTOH, HTOD], [DTOH, HTOD], "Memcpy DtoH"),                # work done on the host
])
def test_foreign_kernels_are_named(launched: list[str], foreign: list[str], named: str) -> None:
    own = [n for n in launched if n.startswith("_")]
    verdict = ko.foreign_kernels(launched, own, exact=True)
    assert [n for n, _ in verdict.foreign] == foreign
    assert named in verdict.reason()
    assert "do not come from the candidate" in verdict.reason()


def test_launch_counts_and_long_names_in_the_reason() -> None:
    verdict = ko.foreign_kernels([XMMA, XMMA, GELU], [], exact=True)
    assert verdict.foreign == [(XMMA, 2), (GELU, 1)]
    reason = verdict.reason()
    assert "(x2)" in reason
    assert len(reason) < 600  # template-heavy names are shortened
    assert "..." in reason


def test_a_kernel_named_after_a_library_kernel_claims_nothing() -> None:
    # A @triton.jit or __global__ named like cuBLAS's kernel does not make cuBLAS's launch its own.
    assert ko.foreign_kernels([NVJET], [NVJET], exact=True).foreign == [(NVJET, 1)]
    assert ko.foreign_kernels([XMMA], [XMMA], exact=False).foreign == [(XMMA, 1)]
    assert ko.foreign_kernels([SOFTMAX], ["cunn_SoftMaxForward"], exact=False).foreign == [(SOFTMAX, 1)]
    assert ko.foreign_kernels([GELU], ["vectorized_elementwise_kernel"], exact=False).foreign == [(GELU, 1)]
    # A namespace that merely ends in "at" is not PyTorch's.
    assert ko.foreign_kernels(["flat::scale(float*)"], ["scale"], exact=False).foreign == []


def test_triton_names_must_match_exactly() -> None:
    # A Triton kernel is named after its function: a demangled C++ name with the same
    # base name is someone else's kernel.
    assert ko.foreign_kernels(["void _mm<4>(float*)"], ["_mm"], exact=True).foreign == [("void _mm<4>(float*)", 1)]


@pytest.mark.parametrize("launched", [
    "relu_kernel",                                             # extern "C" __global__
    "void relu_kernel<4>(float const*, float*, long)",         # demangled template
    "kecu::relu_kernel(float const*, float*, long)",           # namespaced
    "_Z11relu_kernelPKfPfl",                                   # still mangled
])
def test_cuda_global_names_match_demangled_or_mangled(launched: str) -> None:
    assert ko.foreign_kernels([launched], ["relu_kernel"]).foreign == []


def test_cuda_kernel_names_from_source() -> None:
    source = """
    // __global__ void commented_out(float* x) {}
    /* __global__ void also_commented() {} */
    __global__ void relu_kernel(const float* x, float* y, long n) {}
    template <int V> __global__ void __launch_bounds__(256) vec_kernel(const float* x) {}
    extern "C" __global__ void plain(float* y) {}
    static __global__ void helper_kernel() {}
    """
    names = ko.cuda_kernel_names(source)
    assert names == ["relu_kernel", "vec_kernel", "plain", "helper_kernel"]
    assert "commented_out" not in names and "also_commented" not in names


def test_triton_kernel_names_unwrap_autotune() -> None:
    triton = pytest.importorskip("triton")
    import triton.language as tl

    @triton.jit
    def _plain(x_ptr, BLOCK: tl.constexpr):
        pass

    @triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=[])
    @triton.jit
    def _tuned(x_ptr, BLOCK: tl.constexpr):
        pass

    module = types.SimpleNamespace(_plain=_plain, _tuned=_tuned, helper=len, torch=torch)
    assert sorted(ko.triton_kernel_names(module)) == ["_plain", "_tuned"]


def test_own_kernels_reads_the_cu_source_beside_the_shared_object(tmp_path: Path) -> None:
    from kernelevolve_worker.cuda_candidate import CudaCandidate
    (tmp_path / "abc.cu").write_text("__global__ void k1(float* y) {}\n__global__ void k2() {}\n")
    handle = CudaCandidate(str(tmp_path / "abc.so"), None, None)
    names, exact, source = own_kernels(handle, str(tmp_path / "abc.so"))
    assert names == ["k1", "k2"] and exact is False and "k1" in source
    assert own_kernels(handle, str(tmp_path / "missing.so")) == ([], False, "")


def test_source_naming_the_profiler_is_suspicious() -> None:
    assert ko.SUSPICIOUS_SOURCE.search("if torch.autograd._profiler_enabled(): ...")
    assert ko.SUSPICIOUS_SOURCE.search("import torch.profiler")
    assert not ko.SUSPICIOUS_SOURCE.search((ADVERSARIAL / "ok_matmul.py").read_text())


def test_base_name() -> None:
    assert ko.base_name("void relu_kernel<4, (anonymous namespace)::X>(float const*)") == "relu_kernel"
    assert ko.base_name("_softmax") == "_softmax"
    assert ko.base_name("ns::inner::k(int)") == "k"


# --- the adversarial candidates through a runner process (GPU only) ---

def _manifest(tmp_path_factory: pytest.TempPathFactory, path: Path, overrides: dict[str, str]) -> str:
    out = tmp_path_factory.mktemp(path.stem)
    result = WorkerSession().load_problem({"path": str(path), "overrides": overrides, "seeds": [0],
                                           "fixtures_dir": str(out), "threads": 1, "baseline": FAST_BASELINE})
    return result["manifest_path"]


@pytest.fixture(scope="module")
def worker() -> Iterator[WorkerProcess]:
    if not HAS_GPU:
        pytest.skip("needs a CUDA GPU")
    w = WorkerProcess()
    yield w
    w.close()


@gpu
@pytest.mark.parametrize("problem, overrides, candidate, status, named", [
    (PROBLEMS_DIR / "softmax.py", {"batch_size": "64", "dim": "1000"}, "softmax_torch.py", "rejected_by_check",
     "softmax_warp_forward"),  # PyTorch's softmax kernel, as the H200 run named it
    (PROBLEMS_DIR / "softmax.py", {"batch_size": "64", "dim": "1000"}, "ok_softmax.py", "ok", ""),
    (REPO_ROOT / "problems" / "gpu_gemm" / "matmul.py", {"M": "256", "N": "256", "K": "256"},
     "matmul_half_torch.py", "rejected_by_check", "do not come from the candidate"),
    (REPO_ROOT / "problems" / "gpu_gemm" / "matmul.py", {"M": "256", "N": "256", "K": "256"},
     "matmul_side_stream_mm.py", "rejected_by_check", "do not come from the candidate"),
    (REPO_ROOT / "problems" / "gpu_gemm" / "matmul.py", {"M": "256", "N": "256", "K": "256"},
     "ok_matmul.py", "ok", ""),
])
def test_adversarial_candidates_on_the_gpu(worker: WorkerProcess, tmp_path_factory: pytest.TempPathFactory,
                                           problem: Path, overrides: dict[str, str], candidate: str, status: str,
                                           named: str) -> None:
    manifest = _manifest(tmp_path_factory, problem, overrides)
    worker.call("gpu_prepare", {"manifest_path": manifest, "compile": False})
    result = worker.call("gpu_run", {"candidate_path": str(ADVERSARIAL / candidate), "measure": False})
    assert result["status"] == status, result
    assert named in result["message"]
    assert result["kernel_origin"]["checked"] is True or status != "ok"
