"""Checks and times Triton candidate files with the GPU runner, no C++ build needed.

    PYTHONPATH=worker python3 scripts/gpu_bench.py PROBLEM.py CANDIDATE.py... \
        [--set NAME=VALUE ...] [--seeds 2] [--min-time 0.3] [--out results.json]

Writes the problem's fixtures (the worker's load_problem, reference on the CPU), then
for each candidate: status, kernel-only median and 95% interval (µs, CUDA events, L2
flushed before every call), effective bandwidth (inputs + outputs bytes per call /
median) and the speedups over eager PyTorch and torch.compile timed interleaved with
it; and the device copy bandwidth. Prints one line per candidate and a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from kernelevolve_worker.gpu_runner import GpuRunner
from kernelevolve_worker.session import WorkerSession


def median(samples: list[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("problem")
    parser.add_argument("candidates", nargs="+")
    parser.add_argument("--set", action="append", default=[], dest="sets")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--min-time", type=float, default=0.3)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    overrides = dict(s.split("=", 1) for s in args.sets)
    fixtures = Path(tempfile.mkdtemp(prefix="ke_gpu_bench_"))
    loaded = WorkerSession().load_problem({
        "path": args.problem, "overrides": overrides, "seeds": list(range(args.seeds)),
        "fixtures_dir": str(fixtures), "threads": 4,
        "baseline": {"warmup_seconds": 0.0, "min_time_seconds": 0.0, "min_repetitions": 1, "max_repetitions": 1}})
    nbytes = sum(4 * max(1, _numel(t["shape"])) for t in loaded["inputs"] + loaded["outputs"])
    runner = GpuRunner()
    hello = runner.hello({})
    prep = runner.prepare({"manifest_path": loaded["manifest_path"]})
    bandwidth = runner.bandwidth({}) if hello["cuda"] else {"copy_gbps": 0.0}
    print(f"device {hello['device_name']} L2 {hello['l2_bytes'] >> 20} MiB, copy {bandwidth['copy_gbps']:.0f} GB/s, "
          f"notes {prep['notes']}; {nbytes / 1e6:.1f} MB moved per call")
    rows = []
    timing = {"min_time_seconds": args.min_time, "max_repetitions": 2000, "rounds": 10}
    for path in args.candidates:
        r = runner.run({"candidate_path": path, **timing})
        s = r["samples_us"]
        row = {"candidate": Path(path).name, "status": r["status"], "message": r["message"][:200]}
        if s.get("candidate"):
            k = sorted(s["candidate"])
            row.update(kernel_us=median(k), p10_us=k[len(k) // 10], n=len(k),
                       gbps=nbytes / median(k) / 1e3, eager_us=median(s.get("eager", [])),
                       compile_us=median(s.get("compile", [])))
            row["vs_eager"] = row["eager_us"] / row["kernel_us"]
            row["vs_compile"] = row["compile_us"] / row["kernel_us"]
            print(f"{row['candidate']:28s} ok  {row['kernel_us']:9.2f} us {row['gbps']:7.0f} GB/s  "
                  f"eager {row['eager_us']:9.2f} ({row['vs_eager']:.2f}x)  compile {row['compile_us']:9.2f} "
                  f"({row['vs_compile']:.2f}x)")
        else:
            print(f"{row['candidate']:28s} {r['status']}: {row['message']}")
        rows.append(row)
    summary = {"device": hello["device_name"], "copy_gbps": bandwidth["copy_gbps"], "bytes_per_call": nbytes,
               "problem": args.problem, "overrides": overrides, "results": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    sys.exit(main())
