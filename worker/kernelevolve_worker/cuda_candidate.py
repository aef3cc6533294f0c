"""Loading a CUDA C++ candidate: a shared object built by nvcc that exports the
native ABI entry point (docs/abi.md, docs/gpu.md "CUDA C++")::

    extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs,
                                      DLTensor* outputs, int32_t num_outputs);

``load_candidate`` returns the same ``kernelevolve_entry(inputs, outputs)`` callable
that triton_candidate.py produces: it builds DLPack ``DLTensor`` structs from the
torch tensors (dense row-major, ``strides`` NULL, ``byte_offset`` 0, device kDLCUDA
with the tensor's device index, or kDLCPU for CPU tensors) and calls the entry.

Stream rule: the entry launches its kernels on the legacy default stream (stream 0,
``<<<grid, block>>>`` with no stream argument, no ``--default-stream per-thread``)
and does not synchronize. The runner keeps torch's current stream at the default
stream, which is that same legacy stream, so the candidate's work is ordered with
the runner's snapshot of the outputs; work put on any other stream is caught by the
runner's side-stream check.

Return codes: 0 ok; 1 wrong number of tensors; 2 a tensor has an unexpected dtype
or device (or no data); 3 shapes or element counts differ; 4 a tensor is not dense
row-major; 1000 + e: the CUDA runtime reported error e (``cudaGetLastError()`` after
the launch); any other non-zero code is the candidate's own. Each becomes a
``runtime_error``; codes 1000 + e for the sticky CUDA errors (illegal address,
launch failure, ...) also mark the runner's CUDA context as lost.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from .triton_candidate import ENTRY_NAME, CandidateLoadError

KDL_CPU = 1
KDL_CUDA = 2
# DLDataTypeCode (dlpack.h): kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4. bool travels
# as an 8-bit unsigned integer, as on the CPU (docs/abi.md "Dtypes").
_DTYPES: dict[torch.dtype, tuple[int, int]] = {
    torch.float32: (2, 32), torch.float64: (2, 64), torch.float16: (2, 16), torch.bfloat16: (4, 16),
    torch.int8: (0, 8), torch.int16: (0, 16), torch.int32: (0, 32), torch.int64: (0, 64),
    torch.uint8: (1, 8), torch.bool: (1, 8),
}
CUDA_ERROR_BASE = 1000
# cudaError_t values (CUDA runtime API, driver_types.h) named in messages; the
# sticky ones leave the context unusable ("sticky" in the CUDA programming guide).
_CUDA_ERRORS: dict[int, tuple[str, bool]] = {
    1: ("cudaErrorInvalidValue", False), 2: ("cudaErrorMemoryAllocation", False),
    9: ("cudaErrorInvalidConfiguration", False), 98: ("cudaErrorInvalidDeviceFunction", False),
    209: ("cudaErrorNoKernelImageForDevice", False), 222: ("cudaErrorUnsupportedPtxVersion", False),
    35: ("cudaErrorInsufficientDriver", False), 701: ("cudaErrorLaunchOutOfResources", False),
    700: ("cudaErrorIllegalAddress", True), 702: ("cudaErrorLaunchTimeout", True),
    710: ("cudaErrorAssert", True), 715: ("cudaErrorIllegalInstruction", True),
    716: ("cudaErrorMisalignedAddress", True), 717: ("cudaErrorInvalidAddressSpace", True),
    718: ("cudaErrorInvalidPc", True), 719: ("cudaErrorLaunchFailure", True),
}
_ABI_CODES = {1: "wrong number of tensors", 2: "a tensor has an unexpected dtype or device, or no data",
              3: "tensor shapes or element counts differ", 4: "a tensor is not dense row-major"}


class DLDevice(ctypes.Structure):
    """dlpack.h DLDevice."""
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    """dlpack.h DLDataType."""
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    """dlpack.h DLTensor."""
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class EntryError(RuntimeError):
    """A non-zero return code of a CUDA candidate's entry.

    Attributes:
        code: the return code. status: "runtime_error". sticky: True for a sticky
        CUDA error (the runner must be replaced).
    """

    def __init__(self, code: int) -> None:
        self.code = code
        self.status = "runtime_error"
        self.sticky = False
        if code in _ABI_CODES:
            text = f"kernel returned {code} ({_ABI_CODES[code]})"
        elif code >= CUDA_ERROR_BASE:
            name, self.sticky = _CUDA_ERRORS.get(code - CUDA_ERROR_BASE, (f"cudaError {code - CUDA_ERROR_BASE}", False))
            text = f"kernel returned {code}: the CUDA runtime reported {name} ({code - CUDA_ERROR_BASE}) after the launch"
            if self.sticky:
                text += "; sticky CUDA error: this process's CUDA context is lost"
        else:
            text = f"kernel returned {code}"
        super().__init__(text)


class TensorArray:
    """A ctypes array of DLTensor describing ``tensors``, with the shape arrays it
    points to kept alive. The tensors must outlive it (their memory is borrowed)."""

    def __init__(self, tensors: Sequence[torch.Tensor]) -> None:
        self.array = (DLTensor * max(1, len(tensors)))()
        self._shapes: list[Any] = []
        for k, t in enumerate(tensors):
            self._fill(self.array[k], t, k)

    def _fill(self, d: DLTensor, t: torch.Tensor, k: int) -> None:
        if t.dtype not in _DTYPES:
            raise TypeError(f"tensor {k}: dtype {t.dtype} has no DLPack mapping here")
        if not t.is_contiguous():
            raise ValueError(f"tensor {k}: not contiguous (the ABI passes dense row-major tensors only)")
        if t.device.type == "cuda":
            d.device = DLDevice(KDL_CUDA, t.device.index if t.device.index is not None else 0)
        elif t.device.type == "cpu":
            d.device = DLDevice(KDL_CPU, 0)
        else:
            raise ValueError(f"tensor {k}: device {t.device} is neither cuda nor cpu")
        shape = (ctypes.c_int64 * max(1, t.dim()))(*t.shape)
        self._shapes.append(shape)
        code, bits = _DTYPES[t.dtype]
        d.data = t.data_ptr() if t.numel() else None
        d.ndim = t.dim()
        d.dtype = DLDataType(code, bits, 1)
        d.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        d.strides = None  # dense row-major
        d.byte_offset = 0


def _key(tensors: Sequence[torch.Tensor]) -> tuple[Any, ...]:
    return tuple((t.data_ptr(), t.dtype, tuple(t.shape), t.device) for t in tensors)


class CudaCandidate:
    """A loaded shared object and its entry point, as a ``(inputs, outputs)`` callable.

    Marshalled arrays are cached by (data pointer, dtype, shape, device) of every
    tensor, so repeated timed calls on the same buffers skip rebuilding them. The
    structs depend on nothing else, so a key stays valid even when its buffer is
    freed and another one lands at the same address; no tensor is kept alive.
    """

    _CACHE_LIMIT = 64

    def __init__(self, path: str, library: ctypes.CDLL, fn: Any) -> None:
        self.path = path
        self.library = library
        self.fn = fn
        self._cache: dict[tuple[Any, ...], TensorArray] = {}

    def _marshal(self, tensors: Sequence[torch.Tensor]) -> TensorArray:
        key = _key(tensors)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if len(self._cache) >= self._CACHE_LIMIT:
            self._cache.clear()
        array = TensorArray(tensors)
        self._cache[key] = array
        return array

    def __call__(self, inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor]) -> None:
        ins, outs = self._marshal(inputs), self._marshal(outputs)
        rc = self.fn(ins.array, len(inputs), outs.array, len(outputs))
        if rc != 0:
            raise EntryError(int(rc))


def load_candidate(path: str) -> tuple[CudaCandidate, Callable[..., Any]]:
    """Loads the shared object at ``path`` (RTLD_NOW | RTLD_LOCAL) and binds its entry.

    Returns:
        (candidate, launcher): the launcher is the candidate itself.
    Raises:
        CandidateLoadError: "compile_error" when the file is missing or cannot be
            loaded (undefined symbols, wrong architecture); "rejected_by_check" when it
            does not export ``kernelevolve_entry``.
    """
    file = Path(path)
    if not file.is_file():
        raise CandidateLoadError("compile_error", f"candidate file {path} does not exist")
    try:
        library = ctypes.CDLL(str(file.resolve()), mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as exc:
        raise CandidateLoadError("compile_error", f"cannot load {path}: {exc}") from exc
    try:
        fn = getattr(library, ENTRY_NAME)
    except AttributeError as exc:
        raise CandidateLoadError("rejected_by_check",
                                 f"{path} does not export extern \"C\" {ENTRY_NAME}") from exc
    fn.argtypes = [ctypes.POINTER(DLTensor), ctypes.c_int32, ctypes.POINTER(DLTensor), ctypes.c_int32]
    fn.restype = ctypes.c_int
    candidate = CudaCandidate(path, library, fn)
    return candidate, candidate


def is_cuda_candidate(path: str) -> bool:
    """True for a shared-object candidate (``.so``), which this module loads."""
    return path.endswith(".so")
