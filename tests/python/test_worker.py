"""The worker over pipes: protocol, load_problem results, fixtures, errors, timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from conftest import (BAD_PROBLEMS_DIR, FAST_BASELINE, PROBLEMS_DIR, REPO_ROOT, TEST_PROBLEMS_DIR, WorkerProcess,
                      load_params, write_problem)


def test_hello_reports_versions_and_pid(worker: WorkerProcess) -> None:
    result = worker.call("hello")
    assert result["torch_version"] == torch.__version__
    assert result["python_version"].startswith("3.")
    assert result["pid"] == worker.proc.pid
    assert result["num_threads"] >= 1


def test_load_relu_writes_fixtures_manifest_and_baseline(worker: WorkerProcess, tmp_path: Path) -> None:
    fixtures = tmp_path / "new" / "fixtures"  # created by the worker
    result = worker.call("load_problem", load_params(PROBLEMS_DIR / "relu.py", fixtures))

    assert result["name"] == "relu"
    assert result["inputs"] == [{"name": "input.0", "role": "input", "shape": [64, 16384], "dtype": "float32"}]
    assert result["outputs"] == [{"name": "output.0", "role": "output", "shape": [64, 16384], "dtype": "float32"}]
    assert result["seeds"] == [0, 1, 2]
    assert result["threads"] == 1
    assert result["memory_check"] == "ok"
    assert result["torch_version"] == torch.__version__
    assert result["reference_tf32"] == {"matmul": False, "conv": True, "rnn": True}  # PyTorch's defaults
    assert result["graph_error"] is None
    assert [n["target"] for n in result["graph"]["nodes"] if n["kind"] == "call"] == ["aten.relu.default"]

    samples = result["baseline_samples_us"]
    assert 3 <= len(samples) <= 5
    assert all(s > 0 for s in samples)

    files = [Path(f) for f in result["fixture_files"]]
    assert files == [fixtures.resolve() / f"seed_{k}.safetensors" for k in range(3)]
    inputs_seen = []
    for seed, file in enumerate(files):
        tensors = load_file(str(file))
        assert set(tensors) == {"input.0", "output.0"}
        torch.testing.assert_close(tensors["output.0"], torch.relu(tensors["input.0"]), rtol=0, atol=0)
        torch.manual_seed(seed)
        torch.testing.assert_close(tensors["input.0"], torch.randn(64, 16384), rtol=0, atol=0)
        with safe_open(str(file), framework="pt") as handle:
            assert handle.metadata() == {"seed": str(seed)}
        inputs_seen.append(tensors["input.0"])
    assert not torch.equal(inputs_seen[0], inputs_seen[1])

    manifest_path = Path(result["manifest_path"])
    assert manifest_path == fixtures.resolve() / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    # Edge-case sets are covered by test_edge_cases.py; here only that all four are listed.
    assert [e["name"] for e in manifest.pop("edge_cases")] == ["zeros", "negative", "large", "tiny"]
    assert manifest.pop("edge_skipped") == []
    assert manifest == {
        "problem": "relu",
        "source_path": str((PROBLEMS_DIR / "relu.py").resolve()),
        "inputs": result["inputs"],
        "outputs": result["outputs"],
        "seeds": [0, 1, 2],
        "files": ["seed_0.safetensors", "seed_1.safetensors", "seed_2.safetensors"],
        "overrides": {},
        "eager_error_multiple": 8.0,  # no EAGER_ERROR_MULTIPLE in relu.py: the default
    }
    assert not [p.name for p in fixtures.iterdir() if ".tmp" in p.name]


def test_override_changes_shape_and_is_recorded(worker: WorkerProcess, tmp_path: Path) -> None:
    params = load_params(PROBLEMS_DIR / "relu.py", tmp_path, overrides={"batch_size": "4", "dim": "32"}, seeds=[5])
    result = worker.call("load_problem", params)
    assert result["inputs"][0]["shape"] == [4, 32]
    assert result["outputs"][0]["shape"] == [4, 32]
    assert load_file(result["fixture_files"][0])["input.0"].shape == (4, 32)
    assert json.loads(Path(result["manifest_path"]).read_text())["overrides"] == {"batch_size": "4", "dim": "32"}


def test_unknown_override_lists_constants(worker: WorkerProcess, tmp_path: Path) -> None:
    params = load_params(PROBLEMS_DIR / "relu.py", tmp_path, overrides={"batchsize": "4"})
    error = worker.request("load_problem", params)["error"]
    assert error["kind"] == "problem_error"
    assert "relu.py" in error["message"] and "'batchsize'" in error["message"]
    assert "batch_size=64, dim=16384" in error["message"]


def test_override_that_empties_every_output_is_refused(worker: WorkerProcess, tmp_path: Path) -> None:
    # --set batch_size=0 used to run on empty tensors and report a speedup.
    params = load_params(PROBLEMS_DIR / "relu.py", tmp_path, overrides={"batch_size": "0"})
    error = worker.request("load_problem", params)["error"]
    assert error["kind"] == "problem_error"
    assert "every output of forward() is empty for seed 0 (after batch_size=0)" in error["message"], error["message"]


EMPTY_LATER_SEED = """
import torch
import torch.nn as nn
OUTPUT_BOUNDS = {0: (64,)}  # x[x > 0] has a data-dependent size (docs/abi.md)
class Model(nn.Module):
    def forward(self, x):
        return x[x > 0]
def get_inputs():
    # seed 1: nothing is positive, so its output is empty
    return [torch.randn(64) - (100.0 if torch.initial_seed() == 1 else 0.0)]
def get_init_inputs():
    return []
"""


def test_a_later_seed_with_empty_outputs_is_kept(worker: WorkerProcess, tmp_path: Path) -> None:
    # Only the timed (first) input set must compute something; a later one may be empty.
    path = tmp_path / "empty_later.py"
    path.write_text(EMPTY_LATER_SEED)
    result = worker.call("load_problem", load_params(path, tmp_path / "fixtures"))
    assert result["seeds"] == [0, 1, 2]
    assert load_file(result["fixture_files"][1])["output.0"].numel() == 0


def test_override_of_a_function_is_refused(worker: WorkerProcess, tmp_path: Path) -> None:
    params = load_params(PROBLEMS_DIR / "relu.py", tmp_path, overrides={"get_inputs": "3"})
    error = worker.request("load_problem", params)["error"]
    assert error["kind"] == "problem_error"
    assert "not a constant" in error["message"]


BAD_CASES = [
    ("syntax_error.py", "syntax error at line 9"),
    ("no_get_inputs.py", "no get_inputs() function (KernelBench format needs Model, get_inputs, get_init_inputs)"),
    ("reference_raises.py", "the reference raised RuntimeError"),
    ("too_big.py", "more than the memory budget of 11.7 GB"),
    ("complex_input.py", "input.0 has dtype complex64, which the kernel ABI does not carry"),
    ("seed_changes_dtype.py", "seed 1 gives other tensors, dtypes or numbers of dimensions than the first seed"),
    ("output_bound_too_small.py", "output 0 on seed 0 has shape [8], outside its OUTPUT_BOUNDS entry [3]"),
    ("random_forward.py", "forward() is not deterministic: two calls on the same inputs give different output.0"),
    ("nested_outputs.py", "forward() returned a tuple whose item [1] is itself a tuple (as nn.LSTM's"),
    ("unbounded_data_dependent.py", "on seed 1, whose inputs have the same shapes: its size depends on the input "
                                    "values. Declare a bound for it, e.g. OUTPUT_BOUNDS = {0: ("),
    ("unbounded_data_dependent_edge.py", "output 0 has shape [1000] on the first seed and ["),
]


@pytest.mark.parametrize("file_name, expected", BAD_CASES)
def test_bad_problem_is_a_one_line_problem_error(worker: WorkerProcess, tmp_path: Path, file_name: str,
                                                 expected: str) -> None:
    params = load_params(BAD_PROBLEMS_DIR / file_name, tmp_path / "fx", memory_budget_bytes=11_700_000_000)
    response = worker.request("load_problem", params)
    assert response["ok"] is False
    error = response["error"]
    assert error["kind"] == "problem_error"
    assert file_name in error["message"]
    assert expected in error["message"]
    assert "\n" not in error["message"]
    assert worker.call("hello")["pid"] == worker.proc.pid  # still serving


def test_reference_error_carries_traceback(worker: WorkerProcess, tmp_path: Path) -> None:
    error = worker.request("load_problem", load_params(BAD_PROBLEMS_DIR / "reference_raises.py", tmp_path))["error"]
    assert "Traceback" in error["traceback"] and "reference_raises.py" in error["traceback"]


def test_too_big_reports_sizes_and_a_fitting_override(worker: WorkerProcess, tmp_path: Path) -> None:
    params = load_params(BAD_PROBLEMS_DIR / "too_big.py", tmp_path / "fx", memory_budget_bytes=11_700_000_000)
    message = worker.request("load_problem", params)["error"]["message"]
    assert "one input set needs 80.0 GB (input.0 float32[100000, 100000] 40.0 GB" in message
    assert "module-level constants: batch_size=100000, dim=100000" in message
    assert "--set batch_size=2048" in message
    assert not (tmp_path / "fx").exists()  # refused before anything was materialized
    # The suggested override fits the budget.
    params["overrides"] = {"batch_size": "2048", "dim": "8"}  # dim too, to keep the test fast
    assert worker.call("load_problem", params)["memory_check"] == "ok"


def test_prints_in_problem_do_not_corrupt_the_stream(worker: WorkerProcess, tmp_path: Path) -> None:
    result = worker.call("load_problem", load_params(BAD_PROBLEMS_DIR / "prints_to_stdout.py", tmp_path))
    assert result["outputs"][0]["shape"] == [4, 8]
    assert worker.call("time_baseline", FAST_BASELINE)["samples_us"]
    stderr = worker.stderr_text()
    assert "hello from import" in stderr and "raw write to fd 1" in stderr and "forward called" in stderr


def test_parameters_follow_inputs_in_state_dict_order(worker: WorkerProcess, tmp_path: Path) -> None:
    result = worker.call("load_problem", load_params(TEST_PROBLEMS_DIR / "scaled_linear.py", tmp_path,
                                                     overrides={"batch_size": "2"}))
    names = [s["name"] for s in result["inputs"]]
    assert names == ["input.0", "param.scale", "param.shift", "param.lin.weight", "param.lin.bias"]
    assert [s["role"] for s in result["inputs"]] == ["input"] + ["parameter"] * 4
    assert [s["shape"] for s in result["inputs"]] == [[2, 8], [3], [3], [3, 8], [3]]
    for file in result["fixture_files"]:
        t = load_file(file)
        expected = (t["input.0"] @ t["param.lin.weight"].T + t["param.lin.bias"]) * t["param.scale"] + t["param.shift"]
        torch.testing.assert_close(t["output.0"], expected)
    # Parameters are the same in every seed's file (the model is built once, seeded with 0).
    first, last = load_file(result["fixture_files"][0]), load_file(result["fixture_files"][-1])
    assert torch.equal(first["param.lin.weight"], last["param.lin.weight"])
    # Graph parameter nodes point at their ABI index.
    params = {n["name"]: n for n in result["graph"]["nodes"] if n["kind"] == "parameter"}
    abi_by_shape = sorted((n["abi_index"], n["shape"]) for n in params.values())
    assert abi_by_shape == [(1, [3]), (2, [3]), (3, [3, 8]), (4, [3])]


def test_scalar_inputs_noncontiguous_inputs_and_tuple_outputs(worker: WorkerProcess, tmp_path: Path) -> None:
    result = worker.call("load_problem", load_params(TEST_PROBLEMS_DIR / "scalar_tuple.py", tmp_path, seeds=[0]))
    assert result["inputs"][2] == {"name": "input.2", "role": "input", "shape": [], "dtype": "float32"}
    assert [o["shape"] for o in result["outputs"]] == [[4, 6], [4]]
    t = load_file(result["fixture_files"][0])
    assert t["input.2"].item() == 0.5
    torch.testing.assert_close(t["output.0"], t["input.0"] * 0.5 + t["input.1"])
    torch.testing.assert_close(t["output.1"], t["input.0"].sum(dim=1))
    assert result["graph"]["outputs"] == ["add", "sum_1"]


def test_time_baseline_times_the_last_loaded_problem(worker: WorkerProcess, tmp_path: Path) -> None:
    worker.call("load_problem", load_params(PROBLEMS_DIR / "sigmoid.py", tmp_path, seeds=[0],
                                            overrides={"batch_size": "8", "dim": "64"}))
    samples = worker.call("time_baseline", {"warmup_seconds": 0.0, "min_time_seconds": 0.0,
                                            "min_repetitions": 7, "max_repetitions": 7})["samples_us"]
    assert len(samples) == 7 and all(s > 0 for s in samples)
    capped = worker.call("time_baseline", {"warmup_seconds": 0.0, "min_time_seconds": 100.0,
                                           "min_repetitions": 1, "max_repetitions": 4})["samples_us"]
    assert len(capped) == 4


def test_load_reports_its_phases_and_skips_eager_timing_when_asked(worker: WorkerProcess, tmp_path: Path) -> None:
    params = load_params(PROBLEMS_DIR / "sigmoid.py", tmp_path / "a", seeds=[0, 1],
                         overrides={"batch_size": "8", "dim": "64"})
    timed = worker.call("load_problem", params)["phase_seconds"]
    assert list(timed) == ["import", "references", "fixture_writes", "edge_sets", "capture", "eager_timing"]
    assert all(s >= 0 for s in timed.values())

    # GPU targets time eager on the device: no CPU timing, no samples, no such phase.
    params = {**params, "fixtures_dir": str(tmp_path / "b"), "time_baseline": False}
    untimed = worker.call("load_problem", params)
    assert untimed["baseline_samples_us"] == []
    assert "eager_timing" not in untimed["phase_seconds"]
    assert "references" in untimed["phase_seconds"]
    assert len(untimed["fixture_files"]) == 2


def test_bad_params_are_protocol_errors(worker: WorkerProcess, tmp_path: Path) -> None:
    assert worker.request("load_problem", {"fixtures_dir": str(tmp_path)})["error"]["kind"] == "protocol_error"
    bad_seeds = load_params(PROBLEMS_DIR / "relu.py", tmp_path, seeds=[])
    assert worker.request("load_problem", bad_seeds)["error"]["kind"] == "protocol_error"
    bad_reps = {"min_repetitions": 0}
    assert worker.request("time_baseline", bad_reps)["error"]["kind"] == "protocol_error"


def test_missing_file_is_a_problem_error(worker: WorkerProcess, tmp_path: Path) -> None:
    error = worker.request("load_problem", load_params(tmp_path / "nope.py", tmp_path))["error"]
    assert error["kind"] == "problem_error" and "nope.py: no such problem file" in error["message"]


def test_complex_intermediate_loads_with_its_dtype_in_the_graph(worker: WorkerProcess, tmp_path: Path) -> None:
    """A complex64 intermediate (torch.fft) is no input error: the problem loads, the
    graph names the node's dtype, and the C++ side turns it into unsupported_dtype."""
    path = REPO_ROOT / "tests" / "data" / "problems" / "fft_real_part.py"
    result = worker.call("load_problem", load_params(path, tmp_path / "fx"))
    assert [s["dtype"] for s in result["inputs"] + result["outputs"]] == ["float32", "float32"]
    complex_nodes = [n for n in result["graph"]["nodes"] if n["dtype"] == "complex64"]
    assert [(n["name"], n["target"]) for n in complex_nodes] == [("_fft_r2c", "aten._fft_r2c.default")]


def test_redirect_log_sends_later_prints_to_the_new_file(fresh_worker: WorkerProcess, tmp_path: Path) -> None:
    # Issue 22: a pooled worker serves the next run, whose log is another file.
    log = tmp_path / "logs" / "next_run.log"
    log.parent.mkdir()
    result = fresh_worker.call("redirect_log", {"path": str(log)})
    assert result["path"] == str(log) and result["pid"] == fresh_worker.proc.pid
    loaded = fresh_worker.call("load_problem", load_params(BAD_PROBLEMS_DIR / "prints_to_stdout.py", tmp_path))
    assert loaded["outputs"][0]["shape"] == [4, 8]  # the protocol stream is intact
    text = log.read_text()
    assert "hello from import" in text and "raw write to fd 1" in text
    assert "hello from import" not in fresh_worker.stderr_text()


def test_redirect_log_to_an_unwritable_path_is_a_protocol_error(worker: WorkerProcess, tmp_path: Path) -> None:
    response = worker.request("redirect_log", {"path": str(tmp_path / "no" / "such" / "dir" / "w.log")})
    assert response["ok"] is False and response["error"]["kind"] == "protocol_error"
    assert "cannot open" in response["error"]["message"]
    assert worker.call("hello")["pid"] == worker.proc.pid  # still serving, old log kept


def test_release_forgets_the_problem_and_the_worker_serves_the_next(worker: WorkerProcess, tmp_path: Path) -> None:
    # Issue 22: a pooled worker frees the finished run's problem before it idles.
    worker.call("load_problem", load_params(PROBLEMS_DIR / "relu.py", tmp_path / "a"))
    assert worker.call("release")["released"] == ["problem"]
    response = worker.request("time_baseline", FAST_BASELINE)
    assert response["ok"] is False and "no problem loaded" in response["error"]["message"]
    assert worker.call("release")["released"] == []
    result = worker.call("load_problem", load_params(PROBLEMS_DIR / "softmax.py", tmp_path / "b"))
    assert result["name"] == "softmax"
    assert worker.call("time_baseline", FAST_BASELINE)["samples_us"]


def _reference_tf32_in_own_worker(source: Path, tmp_path: Path) -> dict[str, bool]:
    """load_problem's "reference_tf32" from a worker of its own: the flags are per
    process, read after the problem's import."""
    own = WorkerProcess()
    try:
        return own.call("load_problem", load_params(source, tmp_path / "fixtures"))["reference_tf32"]
    finally:
        own.close()


def test_a_problem_that_turns_tf32_on_says_so(tmp_path: Path) -> None:
    source = write_problem(tmp_path / "tf32_linear.py", "a, b", "a @ b", "[torch.randn(4, 8), torch.randn(8, 3)]",
                           "torch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = False\n")
    assert _reference_tf32_in_own_worker(source, tmp_path) == {"matmul": True, "conv": False, "rnn": False}


def test_tf32_set_through_the_new_api_is_read_without_error(tmp_path: Path) -> None:
    # torch 2.9+: the legacy getters refuse once fp32_precision set a value they cannot
    # express; the flags are then read from the new API (fresh-clone review).
    source = write_problem(tmp_path / "new_api.py", "x", "torch.relu(x)", "[torch.randn(4, 8)]",
                           "torch.backends.cuda.matmul.fp32_precision = 'tf32'\n"
                           "torch.backends.cudnn.rnn.fp32_precision = 'ieee'\n")
    assert _reference_tf32_in_own_worker(source, tmp_path) == {"matmul": True, "conv": True, "rnn": False}


def test_a_problem_files_torch_settings_do_not_reach_the_next_problem(worker: WorkerProcess, tmp_path: Path) -> None:
    # bench loads many problems in one worker: float64 by default and TF32 matmuls set by
    # one file at import must not change how the next one draws inputs or reports TF32.
    first = write_problem(tmp_path / "a_float64_tf32.py", "x", "x * 2", "[torch.randn(4, 8)]",
                          "torch.set_default_dtype(torch.float64)\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    second = write_problem(tmp_path / "b_plain.py", "x", "x * 2", "[torch.randn(4, 8)]")
    a = worker.call("load_problem", load_params(first, tmp_path / "fa"))
    assert a["inputs"][0]["dtype"] == "float64" and a["reference_tf32"]["matmul"] is True
    b = worker.call("load_problem", load_params(second, tmp_path / "fb"))
    assert b["inputs"][0]["dtype"] == "float32"
    assert b["reference_tf32"] == {"matmul": False, "conv": True, "rnn": True}
