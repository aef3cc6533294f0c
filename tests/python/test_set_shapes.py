"""Input sets of different shapes and data-dependent (bounded) outputs: what the worker
writes (fixtures, manifest "set_shapes", size tensors); docs/abi.md."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from conftest import TEST_PROBLEMS_DIR, WorkerProcess, load_params


def test_jagged_inputs_of_other_lengths_per_seed_are_accepted(worker: WorkerProcess, tmp_path: Path) -> None:
    result = worker.call("load_problem", load_params(TEST_PROBLEMS_DIR / "jagged_segment_sum.py", tmp_path))
    manifest = json.loads(Path(result["manifest_path"]).read_text())
    per_set = manifest["set_shapes"]
    assert len(per_set) == 3
    totals = []
    for file, shapes in zip(result["fixture_files"], per_set):
        tensors = load_file(file)
        assert {name: list(t.shape) for name, t in tensors.items()} == shapes
        lengths = tensors["input.1"]
        assert shapes["input.0"] == [int(lengths.sum()), 4]
        assert shapes["output.0"] == [6, 4]
        expected = torch.stack([part.sum(0) for part in torch.split(tensors["input.0"], lengths.tolist())])
        torch.testing.assert_close(tensors["output.0"], expected)
        totals.append(shapes["input.0"][0])
    assert len(set(totals)) > 1, f"the seeds should give different total lengths, got {totals}"
    # "inputs"/"outputs" keep the first seed's shapes; no size tensors without OUTPUT_BOUNDS.
    assert manifest["inputs"][0]["shape"] == per_set[0]["input.0"]
    assert [o["name"] for o in manifest["outputs"]] == ["output.0"]


def test_bounded_output_crosses_at_its_bound_with_a_size_tensor(worker: WorkerProcess, tmp_path: Path) -> None:
    result = worker.call("load_problem", load_params(TEST_PROBLEMS_DIR / "unique_bounded.py", tmp_path))
    assert result["outputs"] == [
        {"name": "output.0", "role": "output", "shape": [12], "dtype": "int64", "size_output": "output.0.size"},
        {"name": "output.1", "role": "output", "shape": [12], "dtype": "int64"},
        {"name": "output.0.size", "role": "output", "shape": [1], "dtype": "int64"},
    ]
    manifest = json.loads(Path(result["manifest_path"]).read_text())
    assert manifest["outputs"] == result["outputs"]
    for file, shapes in zip(result["fixture_files"], manifest["set_shapes"]):
        tensors = load_file(file)
        unique = torch.unique(tensors["input.0"], sorted=True)
        assert torch.equal(tensors["output.0"], unique)
        assert tensors["output.0.size"].tolist() == [unique.numel()]
        assert shapes["output.0"] == [unique.numel()]
        assert shapes["output.0.size"] == [1]
