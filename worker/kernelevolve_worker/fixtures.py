"""Fixture files: one safetensors file per seed plus manifest.json.

Layout of ``fixtures_dir``::

    seed_<k>.safetensors   every ABI tensor of seed k under its ABI name
                           ("input.0", "param.<key>", "output.0"), metadata {"seed": "<k>"}
    edge_<name>.safetensors  the same for edge-case set <name> (edge_cases.py),
                           metadata {"edge_case": "<name>"}
    manifest.json          {"problem", "source_path", "inputs", "outputs", "seeds",
                            "files" (relative names), "overrides",
                            "tolerance" (only when the problem declares TOLERANCE),
                            "edge_cases" [{"name", "file", "description"}],
                            "edge_skipped" [{"name", "reason"}],
                            "set_shapes" [{ABI name: shape}] (one per file, only when
                            the seeds' shapes differ or an output is bounded: set_shapes.py)}

Files are written to a temporary name in the same folder and renamed into place
(os.replace), so a reader never sees a half-written file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import torch
from safetensors.torch import save_file

MANIFEST_NAME = "manifest.json"


def seed_file_name(seed: int) -> str:
    """"seed_<k>.safetensors"."""
    return f"seed_{seed}.safetensors"


def _write_atomically(target: Path, write: Callable[[Path], None]) -> None:
    """Calls ``write(tmp)`` on a temporary path beside ``target``, then renames it over
    ``target``. The temporary file is removed if ``write`` fails."""
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def _unshared(tensors: list[tuple[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """name -> contiguous CPU tensor; a tensor whose storage was already seen (an output
    aliasing an input, tied weights) is cloned, since safetensors refuses shared storage."""
    seen: set[int] = set()
    result: dict[str, torch.Tensor] = {}
    for name, tensor in tensors:
        if name in result:
            raise ValueError(f"duplicate fixture tensor name '{name}'")
        tensor = tensor.detach().contiguous()
        storage = tensor.untyped_storage().data_ptr()
        if storage in seen and tensor.numel() > 0:
            tensor = tensor.clone()
        seen.add(tensor.untyped_storage().data_ptr())
        result[name] = tensor
    return result


def write_seed_file(fixtures_dir: Path, seed: int, tensors: list[tuple[str, torch.Tensor]]) -> Path:
    """Writes ``fixtures_dir/seed_<seed>.safetensors`` holding ``tensors`` by name.

    Args:
        fixtures_dir: existing folder.
        seed: the seed, stored as metadata {"seed": "<seed>"}.
        tensors: (ABI name, tensor) pairs, ABI order; any dtype safetensors supports.
    Returns:
        The absolute path written.
    Raises:
        OSError: the file cannot be written.
    """
    return write_fixture_file(fixtures_dir, seed_file_name(seed), tensors, {"seed": str(seed)})


def write_fixture_file(fixtures_dir: Path, file_name: str, tensors: list[tuple[str, torch.Tensor]],
                       metadata: dict[str, str]) -> Path:
    """Writes ``fixtures_dir/file_name`` (safetensors) holding ``tensors`` by name, with
    ``metadata``; used for seed files and edge-case files (edge_cases.py).

    Returns:
        The absolute path written.
    Raises:
        OSError: the file cannot be written.
    """
    target = (fixtures_dir / file_name).resolve()
    named = _unshared(tensors)
    _write_atomically(target, lambda tmp: save_file(named, str(tmp), metadata=metadata))
    return target


def write_manifest(fixtures_dir: Path, manifest: dict[str, Any]) -> Path:
    """Writes ``fixtures_dir/manifest.json`` (indented JSON, trailing newline).

    Returns:
        The absolute path written.
    Raises:
        OSError: the file cannot be written.
    """
    target = (fixtures_dir / MANIFEST_NAME).resolve()
    text = json.dumps(manifest, indent=2, allow_nan=False) + "\n"
    _write_atomically(target, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return target


def build_manifest(problem: str, source_path: Path, inputs: list[dict[str, Any]],
                   outputs: list[dict[str, Any]], seeds: list[int],
                   overrides: dict[str, Any],
                   tolerance: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """The manifest document.

    Args:
        problem: file stem ("relu").
        source_path: the problem file (stored absolute).
        inputs: ABI input specs {"name", "role": "input"|"parameter", "shape", "dtype"}.
        outputs: ABI output specs {"name", "role": "output", "shape", "dtype"}.
        seeds: one fixture file per seed, same order.
        overrides: the --set values as given.
        tolerance: per-dtype {"atol", "rtol"} overrides from the problem's TOLERANCE;
            written as "tolerance" only when non-empty.
    """
    manifest = {
        "problem": problem,
        "source_path": str(source_path.resolve()),
        "inputs": inputs,
        "outputs": outputs,
        "seeds": list(seeds),
        "files": [seed_file_name(s) for s in seeds],
        "overrides": dict(overrides),
    }
    if tolerance:
        manifest["tolerance"] = {dtype: dict(value) for dtype, value in tolerance.items()}
    return manifest
