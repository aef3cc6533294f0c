"""CUDA C++ candidates in the GPU runner (worker/kernelevolve_worker/cuda_candidate.py)
without a GPU: host-only shared objects built with g++ export the same
``kernelevolve_entry`` and are called through the same ctypes path with kDLCPU
tensors, so the DLTensor marshalling, the return-code meanings and the runner's
dispatch on ``.so`` files are checked here; the nvcc path runs on the GPU machine
(tests/gpu/cuda_gpu_test.cpp)."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest
import torch

from conftest import FAST_BASELINE, PROBLEMS_DIR, WorkerProcess
from kernelevolve_worker.candidate_kinds import classify_exception, load_candidate
from kernelevolve_worker.cuda_candidate import KDL_CPU, DLTensor, EntryError, TensorArray
from kernelevolve_worker.session import WorkerSession

CXX = shutil.which("g++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="needs g++ to build host-only test kernels")
DLPACK_INCLUDE = os.environ.get("KE_DLPACK_INCLUDE_DIR", "/usr/include")
FAST_TIMING = {"warmup_seconds": 0.0, "min_time_seconds": 0.0, "min_repetitions": 2, "max_repetitions": 4,
               "rounds": 2}

# Writes what it sees into outputs[0] (int64[16]) unless inputs[1] (int64 scalar)
# asks for a return code.
DESCRIBE = r'''
#include <dlpack/dlpack.h>
#include <cstdint>
extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,
                                  DLTensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const int64_t mode = *static_cast<const int64_t*>(inputs[1].data);
  if (mode != 0) return static_cast<int>(mode);
  const DLTensor& x = inputs[0];
  int64_t* out = static_cast<int64_t*>(outputs[0].data);
  out[0] = num_inputs; out[1] = x.ndim; out[2] = x.shape[0]; out[3] = x.shape[1];
  out[4] = x.dtype.code; out[5] = x.dtype.bits; out[6] = x.dtype.lanes;
  out[7] = x.device.device_type; out[8] = x.device.device_id;
  out[9] = x.strides == nullptr; out[10] = static_cast<int64_t>(x.byte_offset);
  out[11] = reinterpret_cast<int64_t>(x.data);
  out[12] = inputs[1].ndim; out[13] = inputs[1].dtype.code; out[14] = inputs[1].dtype.bits;
  out[15] = outputs[0].shape[0];
  return 0;
}
'''

RELU = r'''
#include <dlpack/dlpack.h>
#include <cstdint>
extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,
                                  DLTensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1) return 1;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : SLOPE * x[i];
  return RC;
}
'''


def _build(tmp_path: Path, name: str, source: str, defines: tuple[str, ...] = ()) -> str:
    src = tmp_path / f"{name}.cpp"
    src.write_text(source, encoding="utf-8")
    out = tmp_path / f"{name}.so"
    subprocess.run([CXX, "-std=c++17", "-O1", "-shared", "-fPIC", f"-I{DLPACK_INCLUDE}", *defines, "-o", str(out),
                    str(src)], check=True, capture_output=True)
    return str(out)


def test_dltensor_layout_matches_dlpack_h() -> None:
    # dlpack.h on x86-64: data 0, device 8, ndim 16, dtype 20, shape 24, strides 32, byte_offset 40.
    assert ctypes.sizeof(DLTensor) == 48
    assert [DLTensor.data.offset, DLTensor.device.offset, DLTensor.ndim.offset, DLTensor.dtype.offset,
            DLTensor.shape.offset, DLTensor.strides.offset, DLTensor.byte_offset.offset] == [0, 8, 16, 20, 24, 32, 40]


def test_struct_fields_from_cpu_tensors() -> None:
    x = torch.zeros(3, 5, dtype=torch.bfloat16)
    b = torch.ones(4, dtype=torch.bool)
    array = TensorArray([x, b])
    d = array.array[0]
    assert d.data == x.data_ptr() and d.ndim == 2 and [d.shape[0], d.shape[1]] == [3, 5]
    assert (d.dtype.code, d.dtype.bits, d.dtype.lanes) == (4, 16, 1)
    assert (d.device.device_type, d.device.device_id) == (KDL_CPU, 0)
    assert not d.strides and d.byte_offset == 0
    assert (array.array[1].dtype.code, array.array[1].dtype.bits) == (1, 8)
    with pytest.raises(ValueError, match="not contiguous"):
        TensorArray([torch.zeros(4, 4).t()])


@needs_cxx
def test_entry_sees_the_dltensor_fields(tmp_path: Path) -> None:
    _, entry = load_candidate(_build(tmp_path, "describe", DESCRIBE))
    x = torch.randn(6, 7)[1:]  # a view with a storage offset: data_ptr() points at row 1
    out = torch.full((16,), -1, dtype=torch.int64)
    entry([x, torch.tensor(0, dtype=torch.int64)], [out])
    assert out.tolist() == [2, 2, 5, 7, 2, 32, 1, KDL_CPU, 0, 1, 0, x.data_ptr(), 0, 0, 64, 16]
    entry([x, torch.tensor(0, dtype=torch.int64)], [out])  # cached arrays: same answer
    assert out[11].item() == x.data_ptr()


@needs_cxx
@pytest.mark.parametrize("code, text, sticky", [
    (4, "kernel returned 4 (a tensor is not dense row-major)", False),
    (1009, "cudaErrorInvalidConfiguration (9)", False),
    (1700, "cudaErrorIllegalAddress (700)", True),
    (77, "kernel returned 77", False),
])
def test_return_codes_have_their_abi_meaning(tmp_path: Path, code: int, text: str, sticky: bool) -> None:
    _, entry = load_candidate(_build(tmp_path, "codes", DESCRIBE))
    with pytest.raises(EntryError) as info:
        entry([torch.zeros(2, 2), torch.tensor(code, dtype=torch.int64)], [torch.zeros(16, dtype=torch.int64)])
    assert text in str(info.value)
    assert classify_exception(info.value) == ("runtime_error", sticky)


@needs_cxx
def test_load_failures_are_statuses(tmp_path: Path) -> None:
    from kernelevolve_worker.candidate_kinds import CandidateLoadError
    no_entry = _build(tmp_path, "noentry", 'extern "C" int other() { return 0; }\n')
    with pytest.raises(CandidateLoadError) as info:
        load_candidate(no_entry)
    assert info.value.status == "rejected_by_check"
    (tmp_path / "garbage.so").write_bytes(b"not an ELF file")
    with pytest.raises(CandidateLoadError) as info:
        load_candidate(str(tmp_path / "garbage.so"))
    assert info.value.status == "compile_error" and "cannot load" in info.value.message


@pytest.fixture(scope="module")
def relu_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    """A runner process prepared for relu 4 x 33 fixtures (TRITON_INTERPRET=1 without a
    GPU: CPU tensors, so host-only shared objects can run)."""
    out = tmp_path_factory.mktemp("relu_fixtures")
    manifest = WorkerSession().load_problem({
        "path": str(PROBLEMS_DIR / "leaky_relu.py"), "overrides": {"batch_size": "4", "dim": "33"},
        "seeds": [0, 1], "fixtures_dir": str(out), "threads": 1, "baseline": FAST_BASELINE})["manifest_path"]
    worker = WorkerProcess({"TRITON_INTERPRET": "1"})
    worker.call("gpu_prepare", {"manifest_path": manifest, "compile": False})
    yield worker
    worker.close()


@needs_cxx
@pytest.mark.skipif(torch.cuda.is_available(), reason="host-only kernels cannot read GPU tensors")
@pytest.mark.parametrize("defines, status, text", [
    (("-DSLOPE=0.01f", "-DRC=0"), "ok", "ok"),
    (("-DSLOPE=0.02f", "-DRC=0"), "incorrect", "output.0 differs from the reference on seed 0"),
    (("-DSLOPE=0.01f", "-DRC=1009"), "runtime_error", "cudaErrorInvalidConfiguration"),
])
def test_runner_dispatches_shared_objects(relu_runner: WorkerProcess, tmp_path: Path, defines: tuple[str, ...],
                                          status: str, text: str) -> None:
    path = _build(tmp_path, "leaky", RELU, defines)
    result = relu_runner.call("gpu_run", {"candidate_path": path, **FAST_TIMING})
    assert result["status"] == status, result
    assert text in result["message"]
    assert result["cuda_error"] is False
    if status == "ok":
        assert len(result["samples_us"]["candidate"]) >= 2
