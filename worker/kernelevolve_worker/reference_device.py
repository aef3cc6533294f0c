"""Where the problem worker runs the reference: the CPU (default) or a CUDA GPU.

For GPU-sized problems the CPU reference can cost more than the whole search: a
float16 torch.mm runs on PyTorch's scalar CPU fallback at ~3 GFLOP/s (measured on
this build VM, one or two threads alike), so one 4096^3 call takes ~45 s and a load
(seeds, edge sets, graph capture, baseline timing) about a dozen of them. With
``KE_REFERENCE_DEVICE=cuda`` in the worker's environment (scripts/gpu_gemm.sh sets
it), the worker keeps generating inputs on the CPU (``get_inputs``, seeded as ever)
but runs forward() on the GPU for the seeds' and edge sets' references, the graph
capture and the eager baseline timing; the outputs come back to the CPU for the
fixtures. A graph whose GPU trace records a device-specific op (attention on a CUDA
backend's kernel, an LSTM on cuDNN) is traced again on the CPU
(graph_capture.capture_portable_graph). Edge sets keep their float64 reference on the CPU (edge_cases.py). Without
a visible GPU the setting falls back to the CPU, and says so.

The reference then carries cuBLAS's rounding instead of the CPU's; both accumulate
16-bit products in float32, so the difference stays far below the float16 and
bfloat16 tolerances.
"""

from __future__ import annotations

import copy
import os
from typing import Any

import torch

from . import problem_loader as loader
from .protocol import ProtocolError

ENV_VAR = "KE_REFERENCE_DEVICE"


def requested_device(environ: dict[str, str] | None = None) -> str:
    """"cpu" or "cuda", from KE_REFERENCE_DEVICE (unset or empty: "cpu").

    Raises:
        ProtocolError: any other value.
    """
    raw = (os.environ if environ is None else environ).get(ENV_VAR, "").strip().lower()
    if raw in ("", "cpu"):
        return "cpu"
    if raw == "cuda":
        return "cuda"
    raise ProtocolError(f"{ENV_VAR}={raw!r}: expected 'cpu' or 'cuda'")


class _Synchronized(torch.nn.Module):
    """forward() followed by a device synchronize, so wall-clock timing sees the work."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *args: Any) -> Any:
        result = self.inner(*args)
        torch.cuda.synchronize()
        return result


class ReferenceRunner:
    """Runs the reference model on the chosen device; inputs and outputs stay CPU tensors
    for the caller."""

    def __init__(self, model: torch.nn.Module, environ: dict[str, str] | None = None) -> None:
        want = requested_device(environ)
        self.note = ""
        self.device: torch.device | None = None
        if want == "cuda" and not torch.cuda.is_available():
            self.note = f"{ENV_VAR}=cuda but no CUDA GPU is visible: the reference runs on the CPU"
        elif want == "cuda":
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.model = model if self.device is None else copy.deepcopy(model).to(self.device)

    def inputs(self, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        """``inputs`` on the reference device (the same list on the CPU)."""
        return inputs if self.device is None else [t.to(self.device) for t in inputs]

    def run(self, inputs: list[torch.Tensor], path: str) -> list[torch.Tensor]:
        """loader.run_reference on the device; the outputs as CPU tensors."""
        return loader.run_reference(self.model, self.inputs(inputs), path, to_cpu=self.device is not None)

    def timed_model(self) -> torch.nn.Module:
        """The model to time: on a GPU each call ends with a synchronize."""
        return self.model if self.device is None else _Synchronized(self.model)

    def close(self) -> None:
        """Frees the device copy of the model (the CPU model is the caller's)."""
        if self.device is not None:
            self.model = None  # type: ignore[assignment]
            torch.cuda.empty_cache()
