"""Input sets of different shapes and data-dependent (bounded) outputs: what the worker
writes (fixtures, manifest "set_shapes", size tensors); docs/abi.md."""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
from safetensors.torch import load_file

from conftest import TEST_PROBLEMS_DIR, WorkerProcess, load_params
from kernelevolve_worker.session import WorkerSession


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
    # The graph of every later seed whose inputs have other sizes comes too (the C++
    # side reads those sizes at run time, ir/generalize.h): same ops, other shapes.
    later = [s["input.0"] for s in per_set[1:] if s["input.0"] != per_set[0]["input.0"]]
    assert len(result["shape_graphs"]) == len(later)
    first_values = next(n for n in result["graph"]["nodes"] if n["name"] == "arg0_1")
    for graph, shape in zip(result["shape_graphs"], later):
        assert [n.get("target") for n in graph["nodes"]] == [n.get("target") for n in result["graph"]["nodes"]]
        values = next(n for n in graph["nodes"] if n["name"] == "arg0_1")
        assert values["shape"] == shape and first_values["shape"] == per_set[0]["input.0"]


def test_inputs_of_fixed_sizes_send_no_shape_graphs(worker: WorkerProcess, tmp_path: Path) -> None:
    result = worker.call("load_problem", load_params(TEST_PROBLEMS_DIR / "unique_bounded.py", tmp_path))
    assert result["shape_graphs"] == []


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


# A unique kernel for the Triton runner (the ABI of docs/abi.md; torch ops stand in for
# device code: under TRITON_INTERPRET=1 no kernel origin is checked). DEDUP False keeps
# repeats: its size tensor is wrong.
UNIQUE_CANDIDATE = '''
import torch

def kernelevolve_entry(inputs, outputs):
    ids = inputs[0]
    values = torch.sort(ids).values
    distinct = torch.unique_consecutive(values) if DEDUP else values
    outputs[0][:distinct.numel()] = distinct
    outputs[1].copy_(torch.searchsorted(distinct, ids))
    outputs[2][0] = distinct.numel()
'''


def _runner_result(tmp_path: Path, dedup: bool) -> dict:
    result = WorkerSession().load_problem({
        "path": str(TEST_PROBLEMS_DIR / "unique_bounded.py"), "seeds": [0, 1, 2],
        "fixtures_dir": str(tmp_path / "fx"), "threads": 1,
        "baseline": {"warmup_seconds": 0.0, "min_time_seconds": 0.0, "min_repetitions": 2, "max_repetitions": 3}})
    candidate = tmp_path / "unique_candidate.py"
    candidate.write_text(f"DEDUP = {dedup}\n" + UNIQUE_CANDIDATE, encoding="utf-8")
    # The interpreter with the GPU hidden, GPU machine or not: on a real GPU the torch
    # ops standing in for device code would be rejected by the kernel-origin check.
    hidden = {"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    saved = {name: os.environ.get(name) for name in hidden}
    os.environ.update(hidden)  # inherited by the runner process
    try:
        runner = WorkerProcess()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    try:
        runner.call("gpu_prepare", {"manifest_path": result["manifest_path"], "compile": False})
        return runner.call("gpu_run", {"candidate_path": str(candidate), "warmup_seconds": 0.0,
                                       "min_time_seconds": 0.0, "min_repetitions": 2, "max_repetitions": 3,
                                       "rounds": 1})
    finally:
        runner.close()


def test_triton_runner_compares_a_bounded_output_on_its_reported_prefix(tmp_path: Path) -> None:
    result = _runner_result(tmp_path, dedup=True)
    assert result["status"] == "ok", result
    assert len(result["checks"]) == 9 and all(c["passed"] for c in result["checks"])  # 3 outputs x 3 seeds


def test_triton_runner_fails_a_bounded_output_with_a_wrong_size(tmp_path: Path) -> None:
    result = _runner_result(tmp_path, dedup=False)
    assert result["status"] == "incorrect", result
    assert result["message"].startswith("output.0 differs from the reference on seed 0: shape/dtype mismatch"), \
        result["message"]
