"""The GPU matmul peak (worker/kernelevolve_worker/gpu_peaks.py): its arithmetic and
parameter checks here; the measurement itself where a CUDA GPU is."""

import pytest
import torch

from kernelevolve_worker import gpu_peaks
from kernelevolve_worker.protocol import ProtocolError


def test_matmul_flops_counts_two_per_multiply_add():
    assert gpu_peaks.matmul_flops(4096, 4096, 4096) == 2 * 4096 ** 3
    assert gpu_peaks.matmul_flops(2, 3, 5) == 60


def test_median_odd_even_and_empty():
    assert gpu_peaks.median([5.0, 1.0, 3.0]) == 3.0
    assert gpu_peaks.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(ValueError):
        gpu_peaks.median([])


def test_tflops_of_a_known_time():
    # 2 * 8192^3 FLOP in 1.1 ms is 1000 TFLOP/s, the order of an H200's float16 peak.
    flops = gpu_peaks.matmul_flops(8192, 8192, 8192)
    assert gpu_peaks.tflops(flops, 1099.5) == pytest.approx(1000.0, rel=1e-3)
    assert gpu_peaks.tflops(flops, 0.0) == 0.0


def test_parse_dtypes_accepts_known_names_only():
    assert gpu_peaks.parse_dtypes(["float16", "tf32"], "m") == ["float16", "tf32"]
    for bad in (["float8"], [], "float16", ["float16", "float16"], [1]):
        with pytest.raises(ProtocolError):
            gpu_peaks.parse_dtypes(bad, "m")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU answer")
def test_without_a_gpu_the_method_says_why():
    with pytest.raises(ProtocolError, match="no CUDA GPU"):
        gpu_peaks.matmul_peak({})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_measures_positive_throughput_on_the_gpu():
    result = gpu_peaks.matmul_peak({"size": 1024, "dtypes": ["float16", "float32"], "repetitions": 3})
    assert set(result["tflops"]) == {"float16", "float32"}
    assert all(v > 0 for v in result["tflops"].values())
    assert len(result["samples_us"]["float16"]) == 3
    assert result["tflops"]["float16"] > result["tflops"]["float32"]


def test_the_runner_serves_the_method():
    from kernelevolve_worker.gpu_runner import GpuRunner
    assert GpuRunner().methods()["gpu_matmul_peak"] is gpu_peaks.matmul_peak
