"""Profiling on GPU targets (worker/kernelevolve_worker/ncu_profile.py, gpu_profile.py):
the ncu CSV parser on a recorded-looking sample, ncu's failure modes through fake ncu
executables, and the torch.profiler breakdown of an eager baseline on CPU activity."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from conftest import REPO_ROOT
from kernelevolve_worker import gpu_profile
from kernelevolve_worker.ncu_profile import (NcuParseError, classify_failure, ncu_command, parse_ncu_csv, run_ncu,
                                             summarize_kernels)

SAMPLE = REPO_ROOT / "tests" / "data" / "ncu" / "two_kernels.csv"


def test_parses_each_kernel_of_the_documented_csv() -> None:
    kernels = parse_ncu_csv(SAMPLE.read_text())
    assert [k["name"] for k in kernels] == ["_row_kernel", "_epilogue_kernel"]
    k = kernels[0]
    assert k["duration_us"] == pytest.approx(96.384)  # "96,384" ns
    assert k["dram_throughput_pct"] == pytest.approx(41.52)
    assert k["sm_throughput_pct"] == pytest.approx(23.07)
    assert k["achieved_occupancy_pct"] == pytest.approx(18.75)
    assert k["registers_per_thread"] == 168
    assert (k["block_size"], k["grid_size"]) == (128, 8192)
    assert "lg_throttle" not in k["stalls_pct"]  # "n/a" is no value
    stall_sum = 6.10 + 61.40 + 1.20 + 0.80 + 3.30 + 4.40 + 11.60  # "selected" is not a stall
    assert [s["reason"] for s in k["top_stalls"]] == ["long_scoreboard", "wait", "barrier"]
    assert k["top_stalls"][0]["pct"] == pytest.approx(61.4)
    assert k["top_stalls"][0]["share"] == pytest.approx(61.4 / stall_sum)


def test_sums_durations_and_weights_percentages_by_duration() -> None:
    total = summarize_kernels(parse_ncu_csv(SAMPLE.read_text()))
    d0, d1 = 96.384, 32.128
    assert total["kernels"] == 2
    assert total["duration_us"] == pytest.approx(d0 + d1)
    assert total["dram_throughput_pct"] == pytest.approx((41.52 * d0 + 88.0 * d1) / (d0 + d1))
    assert total["achieved_occupancy_pct"] == pytest.approx((18.75 * d0 + 90.0 * d1) / (d0 + d1))
    assert total["registers_per_thread"] == 168  # the largest
    # long_scoreboard: (61.4 d0 + 20 d1) / (d0 + d1) = 51.05 beats lg_throttle 12.5 and wait 11.2.
    assert [s["reason"] for s in total["top_stalls"]] == ["long_scoreboard", "lg_throttle", "wait"]


def test_time_units_are_converted_to_microseconds() -> None:
    text = ('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","k","gpu__time_duration.sum","usecond","12.5"\n'
            '"1","k2","gpu__time_duration.sum","msecond","0.5"\n')
    kernels = parse_ncu_csv(text)
    assert [k["duration_us"] for k in kernels] == [pytest.approx(12.5), pytest.approx(500.0)]
    assert summarize_kernels([])["duration_us"] is None


def test_output_without_a_table_is_a_parse_error_and_a_one_line_note() -> None:
    out = "==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n"
    with pytest.raises(NcuParseError):
        parse_ncu_csv(out)
    status, note = classify_failure(1, out)
    assert status == "not_permitted" and "ERR_NVGPUCTRPERM" in note and "\n" not in note
    status, note = classify_failure(3, "==ERROR== Failed to profile kernel\nbye\n")
    assert status == "failed" and note == "ncu exited 3: ==ERROR== Failed to profile kernel"


def test_command_profiles_only_between_profiler_start_and_stop() -> None:
    cmd = ncu_command("/opt/ncu", "/r/manifest.json", "/c/k.py", 3)
    assert cmd[:3] == ["/opt/ncu", "--csv", "--print-units"]
    assert cmd[cmd.index("--profile-from-start") + 1] == "off"
    assert cmd[cmd.index("--replay-mode") + 1] == "kernel"
    metrics = cmd[cmd.index("--metrics") + 1]
    assert "launch__registers_per_thread" in metrics
    assert "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct" in metrics
    core_only = ncu_command("/opt/ncu", "/r/manifest.json", "/c/k.py", 3, stalls=False)
    assert "stalled" not in core_only[core_only.index("--metrics") + 1]
    assert cmd[-7:] == [sys.executable, "-m", "kernelevolve_worker.gpu_profile", "/r/manifest.json", "/c/k.py",
                        "--warmup", "3"]


def _fake_ncu(tmp_path: Path, body: str) -> str:
    path = tmp_path / "ncu"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_run_ncu_reads_the_table_a_fake_ncu_prints(tmp_path: Path) -> None:
    tool = _fake_ncu(tmp_path, f"cat '{SAMPLE}'\n")
    result = run_ncu("/m.json", "/c.py", ncu=tool, timeout_s=20)
    assert result["status"] == "ok" and result["note"] == ""
    assert len(result["kernels"]) == 2 and result["total"]["kernels"] == 2


def test_run_ncu_retries_without_stall_metrics_when_ncu_rejects_them(tmp_path: Path) -> None:
    # The fake ncu fails when asked for a stall metric, and prints the table otherwise.
    tool = _fake_ncu(tmp_path, 'case "$*" in *stalled*) echo "==ERROR== Failed to find metric '
                                'smsp__warp_issue_stalled_misc_per_warp_active.pct"; exit 1;; esac\n'
                                f"cat '{SAMPLE}'\n")
    result = run_ncu("/m.json", "/c.py", ncu=tool, timeout_s=20)
    assert result["status"] == "ok" and len(result["kernels"]) == 2
    assert "profiled without them" in result["note"]


def test_run_ncu_failures_are_notes_not_exceptions(tmp_path: Path) -> None:
    missing = run_ncu("/m.json", "/c.py", ncu=str(tmp_path / "no_such_ncu"))
    assert missing["status"] == "unavailable" and "ncu not found" in missing["note"]
    denied = run_ncu("/m.json", "/c.py", ncu=_fake_ncu(tmp_path, "echo '==ERROR== ERR_NVGPUCTRPERM'; exit 1\n"))
    assert denied["status"] == "not_permitted"
    slow = run_ncu("/m.json", "/c.py", ncu=_fake_ncu(tmp_path, "sleep 30\n"), timeout_s=1)
    assert slow["status"] == "timeout" and slow["seconds"] < 10 and "1 s" in slow["note"]


def test_baseline_breakdown_on_cpu_activity_ranks_operators() -> None:
    x = torch.randn(256, 512)
    result = gpu_profile.baseline_breakdown(lambda: torch.softmax(x, dim=1).exp(), calls=3, top=4, cuda=False)
    assert result["activity"] == "cpu" and result["calls"] == 3
    kernels = result["kernels"]
    assert 1 <= len(kernels) <= 4
    assert any("softmax" in k["name"] for k in kernels)
    assert all(k["total_us"] > 0 for k in kernels)
    assert [k["total_us"] for k in kernels] == sorted((k["total_us"] for k in kernels), reverse=True)
    assert sum(k["share"] for k in kernels) <= 1.0 + 1e-9
    assert result["total_us"] >= kernels[0]["total_us"]


def test_profile_baseline_uses_the_prepared_eager_model_and_notes_a_missing_one() -> None:
    x = torch.randn(64, 128)
    runner = SimpleNamespace(eager=torch.nn.GELU(), inputs=[[x]], baseline_inputs=[x], num_forward_inputs=1,
                             device=torch.device("cpu"), _require_prepared=lambda method: None)
    result = gpu_profile.profile_baseline(runner, {"calls": 2, "top": 3})
    assert result["note"] == "" and result["activity"] == "cpu"
    assert any("gelu" in k["name"].lower() for k in result["kernels"])
    runner.eager = None
    assert gpu_profile.profile_baseline(runner, {})["note"] == "no eager baseline to profile"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU exit")
def test_profiled_entry_exits_1_without_a_gpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gpu_profile.main([str(tmp_path / "manifest.json"), str(tmp_path / "k.py")]) == 1
    assert "no CUDA GPU" in capsys.readouterr().err


def test_runner_process_serves_both_profiling_methods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gpu_profile_baseline on the prepared eager model and gpu_ncu (a fake ncu named by
    KERNELEVOLVE_NCU), through a runner process as the C++ side drives it."""
    from conftest import FAST_BASELINE, PROBLEMS_DIR, WorkerProcess
    from kernelevolve_worker.session import WorkerSession
    manifest = WorkerSession().load_problem({
        "path": str(PROBLEMS_DIR / "relu.py"), "overrides": {"batch_size": "4", "dim": "64"}, "seeds": [0],
        "fixtures_dir": str(tmp_path / "fixtures"), "threads": 1, "baseline": FAST_BASELINE})["manifest_path"]
    if not torch.cuda.is_available():
        monkeypatch.setenv("TRITON_INTERPRET", "1")  # inherited by the runner process
    monkeypatch.setenv("KERNELEVOLVE_NCU", _fake_ncu(tmp_path, f"cat '{SAMPLE}'\n"))
    worker = WorkerProcess()
    try:
        worker.call("gpu_prepare", {"manifest_path": manifest, "compile": False})
        breakdown = worker.call("gpu_profile_baseline", {"calls": 2, "top": 2})
        assert breakdown["note"] == "" and breakdown["kernels"], breakdown
        # On CPU the op shows as aten::relu; on CUDA eager relu runs a vectorized
        # elementwise kernel (clamp_min), whose name does not say "relu".
        names = " ".join(k["name"].lower() for k in breakdown["kernels"])
        assert ("relu" in names or "elementwise" in names or "clamp" in names), breakdown
        ncu = worker.call("gpu_ncu", {"manifest_path": manifest, "candidate_path": str(tmp_path / "k.py"),
                                      "timeout_seconds": 30})
        assert ncu["status"] == "ok" and ncu["total"]["kernels"] == 2
    finally:
        worker.close()


HAS_GPU = torch.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (scripts/gpu_level1.sh runs it on one)")

RELU_TRITON = '''
import triton
import triton.language as tl

@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)

def kernelevolve_entry(inputs, outputs):
    n = inputs[0].numel()
    _relu[(triton.cdiv(n, 1024),)](inputs[0], outputs[0], n, BLOCK=1024)
'''


@gpu
def test_baseline_breakdown_on_cuda_ranks_kernels_not_operators() -> None:
    x = torch.randn(1024, 4096, device="cuda")
    result = gpu_profile.baseline_breakdown(lambda: torch.softmax(x, dim=1), calls=3, top=3)
    assert result["activity"] == "cuda" and result["kernels"], result
    assert not any(k["name"].startswith("aten::") for k in result["kernels"]), result
    assert result["kernels"][0]["calls"] == pytest.approx(1.0)


@gpu
def test_ncu_on_a_triton_candidate_gives_metrics_or_a_note(tmp_path: Path) -> None:
    """Real ncu when the machine has it: metrics for the one relu kernel, or a one-line
    note (no ncu, no permission to the counters)."""
    from conftest import FAST_BASELINE, PROBLEMS_DIR
    from kernelevolve_worker.session import WorkerSession
    manifest = WorkerSession().load_problem({
        "path": str(PROBLEMS_DIR / "relu.py"), "overrides": {"batch_size": "256", "dim": "4096"}, "seeds": [0],
        "fixtures_dir": str(tmp_path / "fixtures"), "threads": 1, "baseline": FAST_BASELINE})["manifest_path"]
    candidate = tmp_path / "relu_candidate.py"
    candidate.write_text(RELU_TRITON)
    result = run_ncu(manifest, str(candidate), timeout_s=180)
    print("ncu:", result["status"], result["note"], result["total"])  # the figures, in the pytest log
    if result["status"] != "ok":
        assert result["status"] in {"unavailable", "not_permitted"}, result
        assert result["note"] and "\n" not in result["note"]
        return
    assert len(result["kernels"]) == 1 and "_relu" in result["kernels"][0]["name"]
    k = result["kernels"][0]
    assert k["duration_us"] > 0 and k["registers_per_thread"] > 0 and k["grid_size"] == 1024
    assert 0 < k["dram_throughput_pct"] <= 100 and k["top_stalls"]
