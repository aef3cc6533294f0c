"""Nsight Compute (ncu) profiling of one candidate call, and the parsing of its CSV.

``run_ncu`` runs ``ncu ... python -m kernelevolve_worker.gpu_profile MANIFEST CANDIDATE``
(gpu_profile.py loads seed 0 and the candidate exactly as the runner does, warms up,
then calls the candidate once between cudaProfilerStart/Stop) with
``--profile-from-start off``, so only the candidate's kernels of that one call are
profiled, and parses the CSV into per-kernel metrics plus their sum.

Metric names (Nsight Compute Profiling Guide, "Metrics Structure" and "Warp Stall
Reasons", https://docs.nvidia.com/nsight-compute/ProfilingGuide; the nvprof
transition table of the CLI manual, https://docs.nvidia.com/nsight-compute/NsightComputeCli,
"Metric Comparison": achieved_occupancy -> sm__warps_active.avg.pct_of_peak_sustained_active,
stall_memory_dependency -> smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct, ...).
CSV layout (the CLI's default "details" page with --csv): one row per (kernel, metric)
with the columns "ID", "Kernel Name", "Block Size", "Grid Size", "Metric Name",
"Metric Unit", "Metric Value" among others.

Failures never raise: a missing ncu, missing permission to the GPU performance counters
(ERR_NVGPUCTRPERM), a timeout or any other failure gives {"status": ..., "note": one line}.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import subprocess
import sys
from typing import Any

# The headline metrics and the keys they become (values in percent unless named).
CORE_METRICS = {
    "gpu__time_duration.sum": "duration_us",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_throughput_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "launch__registers_per_thread": "registers_per_thread",
    "launch__block_size": "block_size",
    "launch__grid_size": "grid_size",
}
# Warp stall reasons (Profiling Guide, "Warp Stall Reasons"; present from Volta on): the
# share of active warps' cycles spent in each state. Should ncu reject any of these names
# on some GPU, run_ncu retries with CORE_METRICS alone.
STALL_PREFIX = "smsp__warp_issue_stalled_"
STALL_SUFFIX = "_per_warp_active.pct"
STALL_REASONS = ("barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle",
                 "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
                 "not_selected", "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait")
STALL_METRICS = tuple(f"{STALL_PREFIX}{r}{STALL_SUFFIX}" for r in STALL_REASONS)
# "selected" is the warp issuing an instruction, not a stall.
NOT_STALLS = {"selected"}
TOP_STALLS = 3

_TIME_UNITS_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
                  "second": 1e6, "s": 1e6}


class NcuParseError(ValueError):
    """The ncu output holds no CSV table with the expected columns."""


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if not text or text.lower() in {"n/a", "nan"}:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _csv_rows(text: str) -> list[dict[str, str]]:
    """The rows of the CSV table in ``text`` (ncu's own ==PROF== lines and the
    application's output around it are skipped)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith('"') and '"Metric Name"' in line and '"Kernel Name"' in line), None)
    if start is None:
        raise NcuParseError("no CSV header with \"Kernel Name\" and \"Metric Name\" in the ncu output")
    body = [line for line in lines[start:] if line.startswith('"')]
    reader = csv.DictReader(io.StringIO("\n".join(body)))
    return [row for row in reader if row.get("Metric Name")]


def _top_stalls(stalls: dict[str, float]) -> list[dict[str, Any]]:
    """The TOP_STALLS largest stall reasons with their percent and their share of all
    stall cycles (percent / sum of every reason but "selected")."""
    real = {k: v for k, v in stalls.items() if k not in NOT_STALLS and v > 0}
    total = sum(real.values())
    ranked = sorted(real.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_STALLS]
    return [{"reason": k, "pct": v, "share": v / total if total > 0 else 0.0} for k, v in ranked]


def parse_ncu_csv(text: str) -> list[dict[str, Any]]:
    """Per-kernel metrics from ncu's ``--csv`` details output, in launch (ID) order.

    Each kernel: {"id", "name", "duration_us", "dram_throughput_pct",
    "sm_throughput_pct", "achieved_occupancy_pct", "registers_per_thread",
    "block_size", "grid_size", "stalls_pct": {reason: pct}, "top_stalls": [{"reason",
    "pct", "share"}]}; a metric ncu did not report is None. Durations are converted to
    microseconds from the row's unit. Raises NcuParseError when there is no table.
    """
    kernels: dict[str, dict[str, Any]] = {}
    for row in _csv_rows(text):
        kid = row.get("ID", "").strip()
        k = kernels.setdefault(kid, {"id": int(kid) if kid.isdigit() else len(kernels),
                                     "name": row.get("Kernel Name", ""), "stalls_pct": {},
                                     **{key: None for key in CORE_METRICS.values()}})
        name, unit = row["Metric Name"].strip(), row.get("Metric Unit", "").strip()
        value = _number(row.get("Metric Value", ""))
        if value is None:
            continue
        if name in CORE_METRICS:
            if CORE_METRICS[name] == "duration_us":
                value *= _TIME_UNITS_US.get(unit, 1e-3)  # ncu reports base units (ns) by default
            k[CORE_METRICS[name]] = value
        elif name.startswith(STALL_PREFIX) and name.endswith(STALL_SUFFIX):
            k["stalls_pct"][name[len(STALL_PREFIX):-len(STALL_SUFFIX)]] = value
    result = sorted(kernels.values(), key=lambda k: k["id"])
    for k in result:
        k["top_stalls"] = _top_stalls(k["stalls_pct"])
    return result


def summarize_kernels(kernels: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole call: durations summed; percentages and stall reasons weighted by each
    kernel's duration (plain mean when no duration is known); registers the maximum."""
    total: dict[str, Any] = {"kernels": len(kernels), "duration_us": None, "dram_throughput_pct": None,
                             "sm_throughput_pct": None, "achieved_occupancy_pct": None,
                             "registers_per_thread": None, "top_stalls": []}
    if not kernels:
        return total
    durations = [k["duration_us"] or 0.0 for k in kernels]
    weights = durations if sum(durations) > 0 else [1.0] * len(kernels)
    if sum(durations) > 0:
        total["duration_us"] = sum(durations)
    for key in ("dram_throughput_pct", "sm_throughput_pct", "achieved_occupancy_pct"):
        pairs = [(k[key], w) for k, w in zip(kernels, weights) if k[key] is not None]
        if pairs and sum(w for _, w in pairs) > 0:
            total[key] = sum(v * w for v, w in pairs) / sum(w for _, w in pairs)
    regs = [k["registers_per_thread"] for k in kernels if k["registers_per_thread"] is not None]
    total["registers_per_thread"] = max(regs) if regs else None
    stalls: dict[str, float] = {}
    for k, w in zip(kernels, weights):
        for reason, pct in k["stalls_pct"].items():
            stalls[reason] = stalls.get(reason, 0.0) + pct * w / sum(weights)
    total["top_stalls"] = _top_stalls(stalls)
    return total


def ncu_command(ncu: str, manifest: str, candidate: str, warmup: int, stalls: bool = True) -> list[str]:
    """The ncu command line: the core metrics (plus the stall reasons unless ``stalls``
    is false), CSV on stdout, kernel replay, profiling only between
    cudaProfilerStart/Stop."""
    metrics = ",".join([*CORE_METRICS, *(STALL_METRICS if stalls else ())])
    return [ncu, "--csv", "--print-units", "base", "--target-processes", "all", "--profile-from-start", "off",
            "--replay-mode", "kernel", "--metrics", metrics,
            sys.executable, "-m", "kernelevolve_worker.gpu_profile", manifest, candidate, "--warmup", str(warmup)]


def classify_failure(returncode: int, output: str) -> tuple[str, str]:
    """(status, one-line note) for an ncu run that gave no table."""
    if "ERR_NVGPUCTRPERM" in output:
        return ("not_permitted", "ncu: no permission to the GPU performance counters (ERR_NVGPUCTRPERM; "
                "see https://developer.nvidia.com/ERR_NVGPUCTRPERM)")
    if "No kernels were profiled" in output:
        return "failed", "ncu: no kernels were profiled (the candidate launched none between profiler start/stop)"
    tail = [line.strip() for line in output.splitlines() if line.strip()]
    last = next((line for line in reversed(tail) if "ERROR" in line or "Error" in line), tail[-1] if tail else "")
    return "failed", f"ncu exited {returncode}: {last[:200]}"


def _metric_rejected(output: str) -> bool:
    """Whether ncu refused a metric name (then a retry without the stall reasons may work)."""
    low = output.lower()
    return "metric" in low and any(k in low for k in ("failed to find", "not found", "invalid", "unknown"))


def _run_once(cmd: list[str], env: dict[str, str], timeout_s: float) -> tuple[int | None, str]:
    """(exit status, stdout + stderr) of one ncu run; status None after a timeout, when
    ncu's whole process group (the profiled process included) has been killed."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, env=env)
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, ""
    return proc.returncode, output


def run_ncu(manifest: str, candidate: str, *, timeout_s: float = 240.0, warmup: int = 3,
            ncu: str | None = None) -> dict[str, Any]:
    """Profiles one call of ``candidate`` on seed 0 of ``manifest``.

    Returns {"status": "ok" | "unavailable" | "not_permitted" | "timeout" | "failed",
    "note": one line ("" when ok; says so when the stall reasons had to be left out),
    "tool": "ncu", "kernels": [...] (parse_ncu_csv), "total": summarize_kernels(...),
    "seconds"}. ``timeout_s`` bounds the whole (a retry included). Never raises for
    ncu's failures.
    """
    import time
    tool = ncu or os.environ.get("KERNELEVOLVE_NCU") or shutil.which("ncu")
    result: dict[str, Any] = {"status": "unavailable", "note": "", "tool": "ncu", "kernels": [],
                              "total": summarize_kernels([]), "seconds": 0.0}
    if not tool or not os.path.exists(tool):
        result["note"] = "ncu not found on PATH (install Nsight Compute or set KERNELEVOLVE_NCU): no profile"
        return result
    env = os.environ.copy()  # the profiled process imports this package from the same folder
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    start = time.monotonic()
    note = ""
    code, output = _run_once(ncu_command(tool, manifest, candidate, warmup), env, timeout_s)
    if code is not None and code != 0 and _metric_rejected(output):
        note = "ncu rejected the stall-reason metrics on this GPU: profiled without them"
        left = timeout_s - (time.monotonic() - start)
        code, output = _run_once(ncu_command(tool, manifest, candidate, warmup, stalls=False), env, max(left, 1.0))
    result["seconds"] = time.monotonic() - start
    if code is None:
        result.update(status="timeout", note=f"ncu did not finish within {timeout_s:.0f} s: no profile")
        return result
    try:
        kernels = parse_ncu_csv(output)
    except NcuParseError:
        kernels = []
    if not kernels:
        status, failure = classify_failure(code, output)
        result.update(status=status, note=failure)
        return result
    result.update(status="ok", note=note, kernels=kernels, total=summarize_kernels(kernels))
    return result
