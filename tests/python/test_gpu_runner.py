"""GPU runner (worker/kernelevolve_worker/gpu_runner.py) on small shapes.

Without a GPU these run Triton candidates through TRITON_INTERPRET=1 on CPU tensors
(correctness only). Tests marked ``gpu`` need a CUDA device and are skipped
elsewhere; scripts/gpu_check.sh runs them on the GPU machine.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Iterator

import pytest
import torch

from conftest import FAST_BASELINE, PROBLEMS_DIR, REPO_ROOT, WorkerProcess
from kernelevolve_worker import gpu_checks
from kernelevolve_worker.gpu_checks import compare
from kernelevolve_worker.gpu_runner import GpuRunner
from kernelevolve_worker.protocol import ProblemError
from kernelevolve_worker.session import WorkerSession

HAS_GPU = torch.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (run scripts/gpu_check.sh on one)")
FAST_TIMING = {"warmup_seconds": 0.0, "min_time_seconds": 0.0, "min_repetitions": 2, "max_repetitions": 4,
               "rounds": 2}

SOFTMAX_OK = '''
import torch
import triton
import triton.language as tl

@triton.jit
def _softmax(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=mask)

def kernelevolve_entry(inputs, outputs):
    x, y = inputs[0], outputs[0]
    rows, cols = x.shape
    _softmax[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols))
'''


def _candidate(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def softmax_manifest(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Fixtures of problems/level1/softmax.py at 6 x 50 (a non-power-of-two row)."""
    out = tmp_path_factory.mktemp("softmax_fixtures")
    result = WorkerSession().load_problem({
        "path": str(PROBLEMS_DIR / "softmax.py"), "overrides": {"batch_size": "6", "dim": "50"},
        "seeds": [0, 1], "fixtures_dir": str(out), "threads": 1, "baseline": FAST_BASELINE})
    return result["manifest_path"]


class RunnerProcess:
    """A GPU runner in a worker process of its own (``python -m kernelevolve_worker``),
    prepared for the softmax fixtures: the way the C++ side runs it. In-process runs
    under pytest failed on the H200 with an empty AssertionError at the first launch
    (docs/gpu.md); a runner process, like production, does not share this process's
    Triton and CUDA state."""

    def __init__(self, worker: WorkerProcess, prepared: dict) -> None:
        self.worker = worker
        self.edge_cases = prepared["edge_cases"]

    def run(self, params: dict) -> dict:
        return self.worker.call("gpu_run", params)


@pytest.fixture(scope="module")
def runner(softmax_manifest: str) -> Iterator[RunnerProcess]:
    worker = WorkerProcess(None if HAS_GPU else {"TRITON_INTERPRET": "1"})
    prepared = worker.call("gpu_prepare", {"manifest_path": softmax_manifest, "compile": False})
    assert prepared["seeds"] == 2
    assert list(prepared["phase_seconds"]) == ["fixtures", "baselines", "eager_error"]  # the default multiple 8
    yield RunnerProcess(worker, prepared)
    worker.close()


def test_hello_reports_device_or_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    hello = GpuRunner().hello({})
    assert hello["interpret"] is True
    assert hello["triton_version"]
    assert hello["cuda"] == HAS_GPU


def test_without_gpu_or_interpreter_prepare_fails_clearly(softmax_manifest: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if HAS_GPU:
        pytest.skip("a GPU is present")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(Exception, match="no CUDA GPU is visible"):
        GpuRunner().prepare({"manifest_path": softmax_manifest})


def test_correct_triton_softmax_passes_and_is_timed(runner: RunnerProcess, tmp_path: Path) -> None:
    result = runner.run({"candidate_path": _candidate(tmp_path, "ok", SOFTMAX_OK), **FAST_TIMING})
    assert result["status"] == "ok", result
    assert result["correct"] is True
    assert len(result["checks"]) == 2 + runner.edge_cases and all(c["passed"] for c in result["checks"])
    assert {c["edge_case"] for c in result["checks"]} >= {"", "large"}
    samples = result["samples_us"]
    assert len(samples["candidate"]) >= 2 and len(samples["eager"]) == len(samples["candidate"])
    assert (result["timing_note"] == "") == HAS_GPU


def test_wrong_result_is_incorrect(runner: RunnerProcess, tmp_path: Path) -> None:
    source = SOFTMAX_OK.replace("e / tl.sum(e, axis=0)", "e / (tl.sum(e, axis=0) + 0.01)")
    result = runner.run({"candidate_path": _candidate(tmp_path, "bad", source), **FAST_TIMING})
    assert result["status"] == "incorrect"
    assert result["correct"] is False
    assert result["message"].startswith("output.0 differs from the reference on seed 0: "), result["message"]
    assert " elements outside atol=0.0001 rtol=0.0001 (max abs error " in result["message"]


def test_edge_case_sets_are_checked(runner: RunnerProcess, tmp_path: Path) -> None:
    # Without the max subtraction exp() overflows on the "large" edge case (inputs x 1e4),
    # though every seed passes.
    source = SOFTMAX_OK.replace("x = x - tl.max(x, axis=0)", "x = x * 1.0")
    result = runner.run({"candidate_path": _candidate(tmp_path, "naive", source), **FAST_TIMING})
    assert result["status"] == "incorrect", result["message"]
    assert "edge case 'large'" in result["message"]
    assert any(c["edge_case"] == "large" and not c["passed"] for c in result["checks"])
    assert all(c["passed"] for c in result["checks"] if not c["edge_case"])


def test_unwritten_tail_is_caught_by_nan_prefill(runner: RunnerProcess, tmp_path: Path) -> None:
    source = SOFTMAX_OK.replace("_softmax[(rows,)]", "_softmax[(rows - 1,)]")
    result = runner.run({"candidate_path": _candidate(tmp_path, "tail", source), **FAST_TIMING})
    assert result["status"] == "incorrect"
    assert "NaN where reference is finite" in result["message"]


def test_mutated_input_is_rejected(runner: RunnerProcess, tmp_path: Path) -> None:
    source = SOFTMAX_OK.replace("    x, y = inputs[0], outputs[0]", "    x, y = inputs[0], outputs[0]\n    x.mul_(1.0001)")
    result = runner.run({"candidate_path": _candidate(tmp_path, "mutate", source), **FAST_TIMING})
    assert result["status"] == "rejected_by_check"
    assert "mutated input input.0" in result["message"]


def test_result_cached_across_calls_is_rejected(runner: RunnerProcess, tmp_path: Path) -> None:
    source = SOFTMAX_OK + textwrap.dedent('''
        _cache = {}
        _real = kernelevolve_entry
        def kernelevolve_entry(inputs, outputs):
            key = inputs[0].shape
            if key in _cache and len(_cache) > 0 and _cache.get("calls", 0) > 2:
                outputs[0].copy_(_cache[key])
                return
            _real(inputs, outputs)
            _cache[key] = outputs[0].clone()
            _cache["calls"] = _cache.get("calls", 0) + 1
        ''')
    result = runner.run({"candidate_path": _candidate(tmp_path, "reuse", source), **FAST_TIMING})
    assert result["correct"] is False, result
    # Which check sees it first depends on how many calls come before the cache serves
    # (seed 0 is called twice): a stale result on a later set is simply wrong there.
    assert (result["status"] == "incorrect" or "after timing" in result["message"]
            or "reused from an earlier call" in result["message"]), result


def test_a_candidate_wrong_on_a_second_call_with_the_same_buffers_is_incorrect(runner: RunnerProcess,
                                                                               tmp_path: Path) -> None:
    # Right on the first call with a set of buffers, stale on the next (what a broken
    # per-buffer cache, e.g. a CUDA graph replaying the wrong thing, would do): every
    # other check uses fresh buffers, so only seed 0's second call sees it.
    source = SOFTMAX_OK + textwrap.dedent('''
        _seen = set()
        _real = kernelevolve_entry
        def kernelevolve_entry(inputs, outputs):
            key = (inputs[0].data_ptr(), outputs[0].data_ptr())
            if key in _seen:
                return  # leaves the outputs as they are
            _seen.add(key)
            _real(inputs, outputs)
        ''')
    result = runner.run({"candidate_path": _candidate(tmp_path, "per_buffer", source), **FAST_TIMING})
    assert result["status"] == "incorrect", result
    assert "on seed 0" in result["message"] and "on a second call with the same buffers" in result["message"]


@pytest.mark.parametrize("source, status, text", [
    ("def kernelevolve_entry(:\n", "compile_error", "syntax error"),
    ("import no_such_module_kernelevolve\n", "compile_error", "import failed"),
    ("def launch(inputs, outputs):\n    pass\n", "rejected_by_check", "kernelevolve_entry"),
    ("def kernelevolve_entry(inputs, outputs):\n    raise ValueError('boom')\n", "runtime_error", "boom"),
])
def test_candidate_failures_are_statuses(runner: RunnerProcess, tmp_path: Path, source: str, status: str,
                                         text: str) -> None:
    result = runner.run({"candidate_path": _candidate(tmp_path, "fail", source), **FAST_TIMING})
    assert result["status"] == status
    assert text in result["message"]
    assert result["cuda_error"] is False


def test_compare_follows_the_cpu_tolerance_rule() -> None:
    ref = torch.tensor([1.0, float("nan"), float("inf"), 0.0])
    ok = compare(ref.clone(), ref, 0, "output.0", {})
    assert ok["passed"] and ok["mismatches"] == 0
    off = compare(torch.tensor([1.0 + 3e-4, float("nan"), float("inf"), 0.0]), ref, 1, "output.0", {})
    assert not off["passed"] and off["first_mismatch"] == 0 and off["seed_index"] == 1
    loose = compare(torch.tensor([1.0 + 3e-4, float("nan"), float("inf"), 0.0]), ref, 0, "output.0",
                    {"float32": {"atol": 1e-3, "rtol": 0.0}})
    assert loose["passed"]
    nan = compare(torch.tensor([float("nan"), float("nan"), float("inf"), 0.0]), ref, 0, "output.0", {})
    assert nan["note"] == "NaN where reference is finite"


def test_an_input_set_widens_each_elements_tolerance_by_a_multiple_of_eagers_error_there() -> None:
    ref = torch.tensor([0.0, 5e8, 3.0])
    scale = torch.tensor([0.0, 10.0, 10.0])  # eager_error.element_error_scale: none at the first element
    off = torch.tensor([0.0, 5e8, 3.0 + 0.75 * 80.0])  # 0.75 x (8 x 10) at the third
    assert not compare(off, ref, 0, "output.0", {})["passed"]
    assert compare(off, ref, 0, "output.0", {}, scale, 8.0)["passed"]  # EAGER_ERROR_MULTIPLE = 8
    assert not compare(off, ref, 0, "output.0", {}, scale, 0.0)["passed"]  # 0: off
    assert not compare(torch.tensor([0.0, 5e8, 3.0 + 1.5 * 80.0]), ref, 0, "output.0", {}, scale, 8.0)["passed"]
    exact_there = compare(torch.tensor([1e-3, 5e8, 3.0]), ref, 0, "output.0", {}, scale, 8.0)
    assert not exact_there["passed"] and exact_there["first_mismatch"] == 0  # no allowance where eager is exact
    errors = {"output.0": 10.0}
    assert gpu_checks.allowance_note(errors, scale, 8.0, 1e-4, "output.0") == (
        "; the tolerance at each element adds 8 x eager PyTorch's own rounding error there (at most 80 on this set)")
    assert gpu_checks.allowance_note(errors, None, 0.0, 1e-4, "output.0").startswith(
        "; eager PyTorch's own float32 result is up to 10 off the float64 reference on this set, outside this "
        "tolerance too: leave the set out with EDGE_CASES, or remove EAGER_ERROR_MULTIPLE = 0")
    assert gpu_checks.allowance_note(errors, None, 8.0, 1e-4, "output.0").endswith(
        "too: leave the set out with EDGE_CASES in the problem file (docs/fitness.md)")
    assert gpu_checks.allowance_note(errors, None, 0.0, 20.0, "output.0") == ""  # eager within the tolerance
    assert gpu_checks.allowance_note({}, None, 8.0, 1e-4, "output.1") == ""


def test_eagers_own_error_on_the_device_is_measured_for_every_set(softmax_manifest: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # An eager model off by 0.5 on this device (as cuDNN's TF32 convolutions are off the
    # float64 reference): every seed and edge set records it, and the edge sets keep the
    # larger of it and the manifest's figure.
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    runner = GpuRunner()
    runner.prepare({"manifest_path": softmax_manifest, "compile": False})
    # Measured at prepare (the default EAGER_ERROR_MULTIPLE 8); eager here is the
    # reference's own computation, far inside the tolerance: no allowance.
    assert len(runner.seed_errors) == len(runner.seed_allowances) == len(runner.inputs)
    assert all(e.get("output.0", 0.0) < 1e-5 for e in runner.seed_errors)
    assert runner.seed_allowances == [{}] * len(runner.inputs)
    exact = runner.eager

    class OffByHalf(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return exact(x) + 0.5

    runner.eager = OffByHalf()
    shape = runner.outputs[0][0].shape
    runner.edges = [e._replace(reference_error={"output.0": 2.0} if e.name == "large" else {},
                               allowance={"output.0": torch.full(shape, 3.0)} if e.name == "large" else {})
                    for e in runner.edges]
    runner._measure_eager_errors()
    assert [e["output.0"] for e in runner.seed_errors] == pytest.approx([0.5] * len(runner.inputs), abs=1e-6)
    # Every run of it is off by 0.5 at every element: so is the per-element scale (the
    # moved runs vary far less than that, so they move the inputs by TF32's unit, which
    # changes this softmax by about 1e-3).
    for allowance in runner.seed_allowances:
        assert torch.allclose(allowance["output.0"], torch.full(shape, 0.5), atol=1e-2)
    for edge in runner.edges:
        assert edge.reference_error["output.0"] == (2.0 if edge.name == "large" else pytest.approx(0.5, abs=1e-6))
        # The file's allowance (3.0 on "large") and the device's (0.5), element-wise the larger.
        assert torch.allclose(edge.allowance["output.0"], torch.full(shape, 3.0 if edge.name == "large" else 0.5),
                              atol=1e-2)


def test_compare_in_chunks_gives_the_whole_outputs_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 22: a 1.6e9-element output went out of GPU memory in float64 temporaries of
    # its whole size; the comparison now goes chunk by chunk, with the same answer.
    gen = torch.Generator().manual_seed(7)
    ref = torch.randn(1000, generator=gen)
    ref[[3, 500]] = float("nan")
    ref[700] = float("inf")
    out = ref.clone()
    out[[40, 41, 650]] += 1e-2            # tolerance failures; the first is element 40
    out[999] = float("nan")               # NaN where the reference is finite (last chunk)
    out[3] = 0.0                          # finite where the reference is NaN (first chunk)
    whole = compare(out, ref, 0, "output.0", {})
    monkeypatch.setattr(gpu_checks, "CHUNK_ELEMENTS", 64)
    chunked = compare(out, ref, 0, "output.0", {})
    assert chunked == whole
    assert chunked["mismatches"] == 5 and chunked["first_mismatch"] == 3
    assert chunked["note"] == "NaN where reference is finite"
    assert chunked["max_abs_error"] == pytest.approx(1e-2, rel=1e-3)
    ints = torch.arange(300)
    changed = ints.clone()
    changed[[130, 290]] = -1
    int_check = compare(changed, ints, 0, "output.0", {})
    assert int_check["mismatches"] == 2 and int_check["first_mismatch"] == 130


@gpu
def test_side_stream_work_is_rejected(runner: RunnerProcess, tmp_path: Path) -> None:
    source = SOFTMAX_OK.replace("def kernelevolve_entry(inputs, outputs):", "def _inner(inputs, outputs):") + \
        textwrap.dedent('''
        _side = torch.cuda.Stream()
        def kernelevolve_entry(inputs, outputs):
            _side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(_side):
                torch.cuda._sleep(50_000_000)
                _inner(inputs, outputs)
        ''')
    result = runner.run({"candidate_path": _candidate(tmp_path, "side", source), **FAST_TIMING})
    assert result["status"] == "rejected_by_check", result
    assert "another stream" in result["message"]


@gpu
def test_illegal_address_is_a_sticky_cuda_error(softmax_manifest: str, tmp_path: Path,
                                                fresh_worker: WorkerProcess) -> None:
    # In a worker process of its own: a sticky error ruins the process's CUDA context.
    source = SOFTMAX_OK.replace("x = tl.load(x_ptr + row * n_cols + offs",
                                "x = tl.load(x_ptr + row * n_cols + offs * 100000000")
    fresh_worker.call("gpu_prepare", {"manifest_path": softmax_manifest, "compile": False})
    result = fresh_worker.call("gpu_run", {"candidate_path": _candidate(tmp_path, "illegal", source),
                                           **FAST_TIMING})
    assert result["status"] == "runtime_error", result
    assert result["cuda_error"] is True
    after = fresh_worker.request("gpu_run", {"candidate_path": _candidate(tmp_path, "after", SOFTMAX_OK)})
    assert after["ok"] is False
    assert "sticky CUDA error" in after["error"]["message"]


def test_second_prepare_of_the_same_problem_reuses_its_baseline_models(runner: RunnerProcess,
                                                                        softmax_manifest: str) -> None:
    # Issue 22: a pooled runner serves the same problem again (compare, bench): no second
    # import and torch.compile of the model.
    again = runner.worker.call("gpu_prepare", {"manifest_path": softmax_manifest, "compile": False})
    assert again["seeds"] == 2
    assert any("reused from an earlier gpu_prepare" in note for note in again["notes"]), again["notes"]
    timed = runner.worker.call("gpu_time_baselines", {"min_time_seconds": 0.01, "min_repetitions": 2,
                                                      "max_repetitions": 5, "rounds": 1})
    assert timed["samples_us"]["eager"]


def test_release_frees_the_prepared_problem_until_the_next_prepare(runner: RunnerProcess,
                                                                   softmax_manifest: str) -> None:
    assert "gpu_fixtures" in runner.worker.call("release")["released"]
    response = runner.worker.request("gpu_time_baselines", {"min_time_seconds": 0.01})
    assert response["ok"] is False and "no problem prepared" in response["error"]["message"]
    again = runner.worker.call("gpu_prepare", {"manifest_path": softmax_manifest, "compile": False})
    assert again["seeds"] == 2  # serves the next run (the fixture stays prepared for later tests)


def test_device_fixtures_write_no_file_and_match_the_files_bit_for_bit(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 22: KE_FIXTURES=device (KernelBench's several-GB inputs): the problem worker
    # writes the manifest only; the runner draws every set again on its device.
    from kernelevolve_worker import device_fixtures
    params = {"path": str(PROBLEMS_DIR / "softmax.py"), "overrides": {"batch_size": "6", "dim": "50"},
              "seeds": [0, 1], "threads": 1, "baseline": FAST_BASELINE}
    files = WorkerSession().load_problem(dict(params, fixtures_dir=str(tmp_path / "files")))
    monkeypatch.setenv("KE_FIXTURES", "device")
    memory = WorkerSession().load_problem(dict(params, fixtures_dir=str(tmp_path / "device")))
    assert memory["fixtures"] == "device" and memory["fixture_files"] == []
    assert sorted(p.name for p in (tmp_path / "device").iterdir()) == ["manifest.json"]
    assert memory["inputs"] == files["inputs"] and memory["outputs"] == files["outputs"]
    manifest = json.loads((tmp_path / "device" / "manifest.json").read_text())
    assert device_fixtures.on_device(manifest)
    assert [e["name"] for e in manifest["edge_cases"]] == [
        e["name"] for e in json.loads((tmp_path / "files" / "manifest.json").read_text())["edge_cases"]]
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the runner on CPU tensors (a GPU when there is one)
    from_files, from_seeds = GpuRunner(), GpuRunner()
    from_files.prepare({"manifest_path": files["manifest_path"], "compile": False})
    prepared = from_seeds.prepare({"manifest_path": str(tmp_path / "device" / "manifest.json"), "compile": False})
    assert any("drawn on the device" in n for n in prepared["notes"])
    assert len(from_seeds.edges) == len(from_files.edges) > 0
    # Eager's own error is measured where each set is drawn; both name the same outputs.
    assert all(set(a.reference_error) <= {"output.0"} and set(b.reference_error) <= {"output.0"}
               for a, b in zip(from_files.edges, from_seeds.edges))
    inputs = list(zip(from_files.inputs, from_seeds.inputs)) + [(a[2], b[2]) for a, b in
                                                                  zip(from_files.edges, from_seeds.edges)]
    outputs = list(zip(from_files.outputs, from_seeds.outputs)) + [(a[3], b[3]) for a, b in
                                                                    zip(from_files.edges, from_seeds.edges)]
    for ours, theirs in inputs:  # drawn from the same seeds: the same bits
        for a, b in zip(ours, theirs):
            assert b.device == from_seeds.device and a.dtype == b.dtype and torch.equal(a.cpu(), b.cpu())
    for ours, theirs in outputs:  # float64 references rounded once: the CPU's up to float32 rounding
        for a, b in zip(ours, theirs):
            assert a.dtype == b.dtype
            torch.testing.assert_close(b.cpu(), a.cpu(), rtol=1e-5, atol=1e-6)
    softmax64 = torch.softmax(from_seeds.inputs[0][0].double(), dim=1).to(torch.float32)
    assert torch.equal(from_seeds.outputs[0][0], softmax64.to(from_seeds.outputs[0][0].device))


def test_device_fixtures_leave_out_an_edge_set_where_eager_overflows_and_profile_from_seed_0(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A float16 row sum at x 1e4 overflows float16 in eager where the float64 reference,
    # rounded once, is finite: the runner leaves that set out with a note, as the problem
    # worker does for the sets it writes to files. The profiler's seed-0 inputs come
    # from the same drawing (gpu_profile.load_seed0).
    from conftest import write_problem
    from kernelevolve_worker import device_fixtures, gpu_profile
    source = write_problem(tmp_path / "rowsum_f16.py", "x", "x.sum(-1) / 512",
                           "[torch.randn(8, 512).to(torch.float16)]")
    monkeypatch.setenv("KE_FIXTURES", "device")
    loaded = WorkerSession().load_problem({"path": str(source), "overrides": {}, "seeds": [0, 1], "threads": 1,
                                           "baseline": FAST_BASELINE, "fixtures_dir": str(tmp_path / "fx")})
    manifest = json.loads(Path(loaded["manifest_path"]).read_text())
    assert "large" in [e["name"] for e in manifest["edge_cases"]]  # the worker draws nothing itself
    inputs, outputs, edge_sets, skipped = device_fixtures.generate(manifest, torch.device("cpu"))
    assert len(inputs) == len(outputs) == 2
    assert [name for name, _ in skipped] == ["large"]
    assert "eager PyTorch's own float16 output.0 is Inf or NaN" in skipped[0][1]
    assert "large" not in [e.name for e in edge_sets] and "zeros" in [e.name for e in edge_sets]
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    prepared = GpuRunner().prepare({"manifest_path": loaded["manifest_path"], "compile": False})
    assert any(n.startswith("edge case 'large' left out: eager PyTorch's own float16") for n in prepared["notes"])
    ins, outs = gpu_profile.load_seed0(loaded["manifest_path"], torch.device("cpu"))
    assert torch.equal(ins[0], inputs[0][0]) and outs[0].shape == outputs[0][0].shape


@pytest.mark.parametrize("problem, why", [("last_k_events.py", "data-dependent size (OUTPUT_BOUNDS)"),
                                          ("embedding_bag_sum.py", "inputs of other shapes under seed 1")])
def test_device_fixtures_refuse_what_the_runner_cannot_redraw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           problem: str, why: str) -> None:
    # Shapes that vary per seed or bounded outputs: the runner would compare every drawn
    # set with the first seed's specs, so the load says so in one line instead.
    monkeypatch.setenv("KE_FIXTURES", "device")
    with pytest.raises(ProblemError, match=r"KE_FIXTURES=device draws fixed-shape problems only") as caught:
        WorkerSession().load_problem({"path": str(REPO_ROOT / "problems" / "recsys" / problem), "seeds": [0, 1],
                                      "threads": 1, "fixtures_dir": str(tmp_path), "baseline": FAST_BASELINE})
    assert why in str(caught.value)


def test_unknown_fixtures_mode_is_a_protocol_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KE_FIXTURES", "ram")
    with pytest.raises(Exception, match="KE_FIXTURES='ram': expected 'files' or 'device'"):
        WorkerSession().load_problem({"path": str(PROBLEMS_DIR / "relu.py"), "seeds": [0], "threads": 1,
                                      "fixtures_dir": str(tmp_path), "baseline": FAST_BASELINE,
                                      "overrides": {"batch_size": "2", "dim": "8"}})


# Reads and writes past the buffers (guarded_buffers.py): every checked call's inputs and
# outputs have poisoned guards before and after them.
RELU_OK = '''
import torch
import triton
import triton.language as tl

@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)

def kernelevolve_entry(inputs, outputs):
    x, y = inputs[0], outputs[0]
    n = x.numel()
    _relu[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
'''


@pytest.fixture(scope="module")
def relu_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunnerProcess]:
    """A runner prepared for problems/level1/relu.py at 2 x 50 (100 elements: the one
    program of 128 lanes has 28 lanes past the end)."""
    out = tmp_path_factory.mktemp("relu_fixtures")
    manifest = WorkerSession().load_problem({
        "path": str(PROBLEMS_DIR / "relu.py"), "overrides": {"batch_size": "2", "dim": "50"},
        "seeds": [0, 1], "fixtures_dir": str(out), "threads": 1, "baseline": FAST_BASELINE})["manifest_path"]
    worker = WorkerProcess(None if HAS_GPU else {"TRITON_INTERPRET": "1"})
    prepared = worker.call("gpu_prepare", {"manifest_path": manifest, "compile": False})
    assert prepared["seeds"] == 2
    yield RunnerProcess(worker, prepared)
    worker.close()


def test_correct_candidate_passes_with_guarded_buffers(relu_runner: RunnerProcess, tmp_path: Path) -> None:
    result = relu_runner.run({"candidate_path": _candidate(tmp_path, "relu_ok", RELU_OK), **FAST_TIMING})
    assert result["status"] == "ok", result
    assert result["correct"] is True
    assert len(result["checks"]) == 2 + relu_runner.edge_cases and all(c["passed"] for c in result["checks"])


def test_unmasked_read_past_an_input_is_incorrect_every_time(relu_runner: RunnerProcess, tmp_path: Path) -> None:
    # y[i] = relu(x[i]) + 0 * x[i + 1], the + 1 read unmasked: x[n] is past the input.
    # From plain allocations it read whatever followed (finite: y passes by chance); from
    # the guard it reads NaN, and 0 * NaN is NaN, on every seed and every run.
    source = RELU_OK.replace(
        "    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)",
        "    after = tl.load(x_ptr + offs + 1)\n"
        "    tl.store(y_ptr + offs, tl.maximum(x, 0.0) + 0.0 * after, mask=mask)")
    assert "after = tl.load(x_ptr + offs + 1)" in source
    path = _candidate(tmp_path, "relu_peek", source)
    for _ in range(3):
        result = relu_runner.run({"candidate_path": path, **FAST_TIMING})
        assert result["status"] == "incorrect", result
        assert result["correct"] is False
        assert "NaN where reference is finite" in result["message"]
        seeds = [c for c in result["checks"] if not c["edge_case"]]
        assert len(seeds) == 2
        for c in seeds:  # only y[n - 1] read past the end
            assert not c["passed"] and c["mismatches"] == 1 and c["first_mismatch"] == 99


def test_write_one_past_an_output_is_rejected(relu_runner: RunnerProcess, tmp_path: Path) -> None:
    # The store's mask is off by one: lane n writes y[n] = relu(0) = 0, past the output.
    # Every element of y is right, so only the guard sees it.
    source = RELU_OK.replace("tl.maximum(x, 0.0), mask=mask)", "tl.maximum(x, 0.0), mask=offs <= n)")
    assert "mask=offs <= n" in source
    result = relu_runner.run({"candidate_path": _candidate(tmp_path, "relu_past", source), **FAST_TIMING})
    assert result["status"] == "rejected_by_check", result
    assert result["correct"] is False
    assert result["message"] == "wrote outside output.0: 4 byte(s) past its end changed (seed check)"


def test_write_before_an_output_is_rejected(relu_runner: RunnerProcess, tmp_path: Path) -> None:
    source = RELU_OK.replace("tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)",
                             "tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)\n"
                             "    tl.store(y_ptr + offs - 2, x * 0.0, mask=offs < 2)")
    result = relu_runner.run({"candidate_path": _candidate(tmp_path, "relu_before", source), **FAST_TIMING})
    assert result["status"] == "rejected_by_check", result
    assert result["message"] == "wrote outside output.0: 8 byte(s) before its start changed (seed check)"


def test_warm_up_waits_for_each_call_before_reading_the_clock() -> None:
    """Clock.estimate_us synchronizes after every warm-up call: GPU launches return at
    once, and an unsynchronized loop queued up to 1000 GPU-sized calls (minutes of
    device work for an 8 x 4096^3 batched matmul) inside its 0.05 s of wall time."""
    from kernelevolve_worker.gpu_timing import Clock

    events: list[str] = []

    class Recording(Clock):
        def synchronize(self) -> None:
            events.append("sync")

    clock = Recording(torch.device("cpu"))
    clock.estimate_us(lambda: events.append("call"), warmup_seconds=0.0)
    warm_up = events[:events.index("sync") + 3]  # the 2 warm-up calls, each then a sync
    assert warm_up == ["call", "sync", "call", "sync"]


# A reference that writes its input in place, not idempotently: eager timed on the
# pristine set would move it (x + 1 a hundred times) and every candidate would then be
# checked against references of other inputs (gpu_runner._baseline_inputs).
ADD_IN_PLACE_PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        x.add_(1.0)
        return x * 2.0

def get_inputs():
    return [torch.randn(4, 32)]

def get_init_inputs():
    return []
'''

ADD_TIMES_TWO = RELU_OK.replace("tl.maximum(x, 0.0)", "(x + 1.0) * 2.0")


def test_a_reference_writing_its_input_is_timed_on_a_copy(tmp_path: Path) -> None:
    problem = tmp_path / "add_in_place.py"
    problem.write_text(ADD_IN_PLACE_PROBLEM, encoding="utf-8")
    manifest = WorkerSession().load_problem({
        "path": str(problem), "seeds": [0, 1], "fixtures_dir": str(tmp_path / "fixtures"), "threads": 1,
        "baseline": FAST_BASELINE})["manifest_path"]
    worker = WorkerProcess(None if HAS_GPU else {"TRITON_INTERPRET": "1"})
    try:
        assert worker.call("gpu_prepare", {"manifest_path": manifest, "compile": False})["seeds"] == 2
        timed = worker.call("gpu_time_baselines", dict(FAST_TIMING))
        assert len(timed["samples_us"]["eager"]) >= 2
        for _ in range(2):  # eager is timed beside the candidate in every run too
            result = worker.call("gpu_run", {"candidate_path": _candidate(tmp_path, "add2", ADD_TIMES_TWO),
                                             **FAST_TIMING})
            assert result["status"] == "ok" and result["correct"] is True, result["message"]
    finally:
        worker.close()


def test_a_reference_raising_while_timed_is_the_problems_error(tmp_path: Path) -> None:
    # forward() adds 1 to its input in place and raises once an element passes 4: the
    # references (on copies of randn inputs) load, and eager timed on its private copy
    # drifts there in a few calls. That is the problem file's fault ("problem_error",
    # exit 2 in the CLI), not an internal error of the runner.
    problem = tmp_path / "raises_later.py"
    problem.write_text(ADD_IN_PLACE_PROBLEM.replace(
        "        x.add_(1.0)\n",
        "        if bool((x > 4).any()):\n            raise ValueError('input drifted')\n        x.add_(1.0)\n"),
        encoding="utf-8")
    manifest = WorkerSession().load_problem({
        "path": str(problem), "seeds": [0], "fixtures_dir": str(tmp_path / "fixtures"), "threads": 1,
        "baseline": FAST_BASELINE, "time_baseline": False})["manifest_path"]
    worker = WorkerProcess(None if HAS_GPU else {"TRITON_INTERPRET": "1"})
    try:
        worker.call("gpu_prepare", {"manifest_path": manifest, "compile": False})
        response = worker.request("gpu_time_baselines", dict(FAST_TIMING))
        assert not response["ok"]
        assert response["error"]["kind"] == "problem_error", response
        message = response["error"]["message"]
        assert "the reference raised ValueError: input drifted (while timing the baseline)" in message
    finally:
        worker.close()
