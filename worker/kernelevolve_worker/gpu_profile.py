"""Profiling on GPU targets: the torch profiler breakdown of the eager baseline, and
the process that Nsight Compute profiles.

``python -m kernelevolve_worker.gpu_profile MANIFEST CANDIDATE [--warmup N]`` loads
seed 0 of the fixtures and the candidate exactly as the GPU runner does (ABI inputs in
manifest order, contiguous, on the device; outputs preallocated like the reference),
calls it N times to compile and warm up (a Triton module or a CUDA shared object:
candidate_kinds.py), then once between cudaProfilerStart and cudaProfilerStop inside
the NVTX range "kernelevolve_candidate", so that ``ncu --profile-from-start off`` (ncu_profile.py)
sees only that call's kernels. Its stdout stays empty (ncu's CSV goes there); errors go to stderr with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

import torch

NVTX_RANGE = "kernelevolve_candidate"


def baseline_breakdown(fn: Callable[[], Any], *, calls: int = 5, top: int = 5,
                       cuda: bool | None = None) -> dict[str, Any]:
    """Runs ``fn`` ``calls`` times under torch.profiler and ranks what it spent time in.

    With CUDA (default: torch.cuda.is_available()) the ranking is by the kernels' own
    device time (CUDA activity; only events with device time, i.e. kernels and
    memcpy/memset); without, by the operators' own CPU time (CPU activity only).
    Returns {"activity": "cuda" | "cpu", "calls", "total_us" (all ranked events,
    per call), "kernels": [{"name", "calls" (per profiled call), "total_us" (per
    call), "share" (of total_us)}] (the ``top`` largest, largest first)}.
    """
    from torch.profiler import ProfilerActivity, profile
    use_cuda = torch.cuda.is_available() if cuda is None else cuda
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if use_cuda else [])
    fn()  # warm-up outside the profile (lazy init, allocator)
    if use_cuda:
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        for _ in range(calls):
            fn()
        if use_cuda:
            torch.cuda.synchronize()
    rows: list[tuple[str, int, float]] = []
    for ev in prof.key_averages():
        if use_cuda:
            own = float(getattr(ev, "self_device_time_total", 0.0) or getattr(ev, "self_cuda_time_total", 0.0))
            on_device = getattr(ev, "device_type", None) == torch.autograd.DeviceType.CUDA
            if own <= 0 or not on_device:
                continue  # host-side events can carry their kernels' time too: count kernels only
        else:
            own = float(ev.self_cpu_time_total)
            if own <= 0 or ev.key.startswith("ProfilerStep"):
                continue
        rows.append((ev.key, int(ev.count), own))
    total = sum(r[2] for r in rows)
    rows.sort(key=lambda r: -r[2])
    kernels = [{"name": name, "calls": count / calls, "total_us": own / calls,
                "share": own / total if total > 0 else 0.0} for name, count, own in rows[:top]]
    return {"activity": "cuda" if use_cuda else "cpu", "calls": calls, "total_us": total / calls,
            "kernels": kernels}


def profile_baseline(runner: Any, params: dict[str, Any]) -> dict[str, Any]:
    """gpu_profile_baseline: the eager model of a prepared GpuRunner on seed 0, through
    baseline_breakdown. Params: calls (default 5), top (default 5). Returns its result
    plus "note" ("" when profiled; else why not, e.g. no eager baseline)."""
    from .protocol import get_param
    method = "gpu_profile_baseline"
    runner._require_prepared(method)
    calls = get_param(params, method, "calls", int, 5)
    top = get_param(params, method, "top", int, 5)
    if runner.eager is None:
        return {"activity": "", "calls": 0, "total_us": 0.0, "kernels": [],
                "note": "no eager baseline to profile"}
    fwd = runner.baseline_inputs  # a private copy where forward() writes its inputs
    try:
        with torch.no_grad():
            result = baseline_breakdown(lambda: runner.eager(*fwd), calls=calls, top=top,
                                        cuda=runner.device.type == "cuda")
    except Exception as exc:  # the profiler's failure is a note, never the run's end
        return {"activity": "", "calls": 0, "total_us": 0.0, "kernels": [],
                "note": f"torch.profiler failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"}
    result["note"] = ""
    return result


def ncu_method(params: dict[str, Any]) -> dict[str, Any]:
    """gpu_ncu: ncu_profile.run_ncu on params manifest_path, candidate_path,
    timeout_seconds (default 240), warmup (default 3)."""
    from .ncu_profile import run_ncu
    from .protocol import get_param
    method = "gpu_ncu"
    return run_ncu(get_param(params, method, "manifest_path", str), get_param(params, method, "candidate_path", str),
                   timeout_s=get_param(params, method, "timeout_seconds", (int, float), 240.0),
                   warmup=get_param(params, method, "warmup", int, 3))


def load_seed0(manifest_path: str, device: torch.device) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Seed 0's ABI inputs and empty outputs (shaped as the references; a bounded output
    at its bound, set_shapes.output_buffers), on ``device``, in manifest order, as
    GpuRunner.prepare loads them."""
    from safetensors.torch import load_file
    from . import device_fixtures
    path = Path(manifest_path)
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if device_fixtures.on_device(manifest):  # KE_FIXTURES=device: no files, drawn from seed 0 again
        seed0 = dict(manifest, seeds=manifest["seeds"][:1], edge_cases=[])
        ins, outs, _, _ = device_fixtures.generate(seed0, device)
        return ins[0], [torch.empty_like(t) for t in outs[0]]
    tensors = load_file(str(path.parent / manifest["files"][0]), device=str(device))
    inputs = [tensors[t["name"]].contiguous() for t in manifest["inputs"]]
    refs = [tensors[t["name"]] for t in manifest["outputs"]]
    outputs = [torch.empty(t["shape"], dtype=r.dtype, device=r.device) if "size_output" in t
               else torch.empty_like(r.contiguous()) for t, r in zip(manifest["outputs"], refs)]
    return inputs, outputs


def main(argv: list[str] | None = None) -> int:
    """The process ncu profiles (see the module doc). Returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m kernelevolve_worker.gpu_profile")
    parser.add_argument("manifest")
    parser.add_argument("candidate")
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    from .candidate_kinds import CandidateLoadError, load_candidate
    if not torch.cuda.is_available():
        print("gpu_profile: no CUDA GPU visible", file=sys.stderr)
        return 1
    device = torch.device("cuda", torch.cuda.current_device())
    inputs, outputs = load_seed0(args.manifest, device)
    try:
        _, entry = load_candidate(args.candidate)
    except CandidateLoadError as exc:
        print(f"gpu_profile: {exc.status}: {exc.message}", file=sys.stderr)
        return 1
    with torch.no_grad():
        for _ in range(max(1, args.warmup)):
            entry(inputs, outputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        torch.cuda.nvtx.range_push(NVTX_RANGE)
        entry(inputs, outputs)
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.stdout = sys.stderr  # ncu's CSV owns stdout
    sys.exit(main())
