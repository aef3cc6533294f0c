"""Fixtures kept on the device and in memory, never written to disk (issue 22).

KernelBench's default GPU sizes have inputs of several GB: one safetensors file per seed
and edge set, written by the problem worker and read back by the GPU runner, costs tens
of GB of disk and the time to write and read them. With ``KE_FIXTURES=device`` in the
worker's environment the problem worker computes the specs, the graph and the baseline
as ever but writes no tensor file: the manifest says ``"fixtures": "device"`` (its
"files" and edge "file" names stay, naming files that do not exist), and the GPU runner
draws every set again from the problem file: the inputs from the seed
(``get_inputs()`` seeded as the problem worker seeds it), the parameters from
``get_init_inputs()`` seeded with 0, the reference outputs by forward() on the runner's
device, edge sets from the first seed's inputs with their float64 reference. The
inputs are the ones the files would have held, bit for bit; every reference output is
forward() run in float64 and rounded once to the output's dtype (where the model runs in
float64; else the device's own result), which the files' CPU reference matches up to
float32 rounding: a float32 reference computed on the GPU can be further off (CUDA's
cumsum accumulates in float32, the CPU's in double).

GPU targets only: the CPU harness and the queue read fixture files.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from . import edge_cases as edges
from .gpu_checks import EdgeSet, tolerance_for
from . import problem_loader as loader

ENV_VAR = "KE_FIXTURES"
DEVICE_MODE = "device"


def requested_mode(environ: dict[str, str] | None = None) -> str:
    """"files" (unset, empty or "files") or "device", from KE_FIXTURES.

    Raises:
        ValueError: any other value (the message names the variable and the choices).
    """
    raw = (os.environ if environ is None else environ).get(ENV_VAR, "").strip().lower()
    if raw in ("", "files"):
        return "files"
    if raw == DEVICE_MODE:
        return DEVICE_MODE
    raise ValueError(f"{ENV_VAR}={raw!r}: expected 'files' or 'device'")


def on_device(manifest: dict[str, Any]) -> bool:
    """Whether ``manifest`` describes fixtures that exist only as seeds (no files)."""
    return manifest.get("fixtures") == DEVICE_MODE


def generate(manifest: dict[str, Any], device: torch.device) -> tuple[
        list[list[torch.Tensor]], list[list[torch.Tensor]],
        list[EdgeSet], list[tuple[str, str]]]:
    """Draws the fixture sets of ``manifest`` on ``device``.

    Args:
        manifest: a manifest written in device mode (keys source_path, overrides,
            inputs, outputs, seeds, edge_cases).
        device: where the tensors live (a CUDA device; the CPU under TRITON_INTERPRET).
    Returns:
        (inputs per seed, outputs per seed, [EdgeSet] with eager's error measured
        here, on ``device``, [(name, reason)] of the edge sets left out); inputs in the
        manifest's ABI order (forward inputs, then parameters), every tensor contiguous
        on ``device``. An edge set is left out, as the problem worker leaves out one it
        writes to a file (edge_cases.overflow_where_reference_finite), when eager's own
        result is Inf or NaN where the float64 reference is finite (float16 sums at
        x 1e4): no kernel computing as eager does could pass it.
    Raises:
        ProblemError: the problem file fails (import, get_inputs, forward), or gives
            other tensors than the manifest lists (it changed since the load).
    """
    path = manifest["source_path"]
    module = loader.import_problem(path)
    try:
        loader.apply_overrides(module, manifest.get("overrides", {}), path)
        model = loader.build_model(module, path)
        params = dict(loader.abi_parameters(model, path))
        model = model.to(device)
        names = [t["name"] for t in manifest["inputs"]]
        inputs_per_seed, outputs_per_seed = [], []
        first: list[torch.Tensor] = []
        for seed in manifest["seeds"]:
            forward = [t.to(device) for t in loader.make_inputs(module, seed, path)]
            outputs = loader.run_reference(model, forward, path, keep_device=True)
            # The reference of record is forward() in float64, rounded once (as for the
            # edge sets): torch's CUDA kernels accumulate float32 in float32 where its
            # CPU kernels, which made the files' reference, may use double. cumsum of
            # 4096 float32 values on the H200 was 2.6e-4 off the exact sums, which failed
            # every float64-accumulating candidate against atol 1e-4 (2026-12-03).
            outputs = edges.float64_reference(model, forward, outputs)
            if not first:
                first = forward
            inputs_per_seed.append(_abi(names, forward, params, device, manifest, path))
            outputs_per_seed.append(_checked(outputs, manifest, path))
        edge_sets, skipped = [], []
        for entry in manifest.get("edge_cases", []):
            edge = edges.edge_inputs(entry["name"], first)
            outputs = loader.run_reference(model, edge, path, keep_device=True)
            exact = edges.float64_reference(model, edge, outputs)
            overflow = edges.overflow_where_reference_finite(outputs, exact)
            if overflow:
                skipped.append((entry["name"], overflow))
                continue
            overrides = manifest.get("tolerance", {})
            errors = {f"output.{i}": e for i, e in
                      enumerate(edges.reference_error(outputs, exact, lambda d: tolerance_for(d, overrides))) if e > 0}
            edge_sets.append(EdgeSet(entry["name"], entry.get("description", ""),
                                     _abi(names, edge, params, device, manifest, path), _checked(exact, manifest, path),
                                     errors))
        return inputs_per_seed, outputs_per_seed, edge_sets, skipped
    finally:
        loader.forget_problem(module)


def _abi(names: list[str], forward: list[torch.Tensor], params: dict[str, torch.Tensor], device: torch.device,
         manifest: dict[str, Any], path: str) -> list[torch.Tensor]:
    """The ABI inputs in manifest order: "input.<i>" from ``forward``, "param.<key>" from ``params``."""
    result = []
    for name in names:
        if name.startswith("input."):
            index = int(name.removeprefix("input."))
            tensor = forward[index] if index < len(forward) else None
        else:
            tensor = params.get(name)
        if tensor is None:
            raise loader.ProblemError(f"{path}: has no tensor '{name}' any more (the file changed since it was "
                                      "loaded); run again")
        result.append(tensor.to(device).contiguous())
    _same_specs([loader.tensor_spec(n, "", t) for n, t in zip(names, result)], manifest["inputs"], path)
    return result


def _checked(outputs: list[torch.Tensor], manifest: dict[str, Any], path: str) -> list[torch.Tensor]:
    outputs = [t.contiguous() for t in outputs]
    _same_specs([loader.tensor_spec(f"output.{i}", "", t) for i, t in enumerate(outputs)], manifest["outputs"], path)
    return outputs


def _same_specs(got: list[dict[str, Any]], want: list[dict[str, Any]], path: str) -> None:
    """Raises ProblemError unless names, shapes and dtypes match (roles are not compared)."""
    strip = [(s["name"], list(s["shape"]), s["dtype"]) for s in got]
    expected = [(s["name"], list(s["shape"]), s["dtype"]) for s in want]
    if strip != expected:
        raise loader.ProblemError(f"{path}: gives other tensors than when it was loaded ({strip} vs {expected}); "
                                  "the file changed: run again")
