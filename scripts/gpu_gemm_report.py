#!/usr/bin/env python3
"""Figures of the gemm set (issue 6) for scripts/gpu_gemm.sh.

  gpu_gemm_report.py mm --size S --out FILE
      times torch.mm alone on S^3 per 16-bit dtype (CUDA events, L2 flushed before
      every call, median of 30 after warm-up; the GPU runner's Clock) and writes
      {"size", "tflops": {dtype}, "median_us": {dtype}}.
  gpu_gemm_report.py summary --size S --mm FILE RUN_DIR...
      reads each run's result.json and best_kernel.py and prints, per problem: the
      best kernel's time and TFLOP/s (2 S^3 / kernel-only median), torch.mm's TFLOP/s
      in the same dtype, their ratio (the issue asks >= 0.7), the eager chain
      (matmul then epilogue, timed interleaved with the kernel by the runner) and
      torch.compile, and the fused kernel's speedup over the eager chain (drop-in
      latency over eager; > 1 = the fused chain wins). Writes gemm_summary.json
      beside the mm file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "worker"))

TARGET_RATIO = 0.7  # issue 6: kernel >= 70% of torch.mm's throughput


def time_mm(size: int, out: Path) -> None:
    import torch
    from kernelevolve_worker.gpu_peaks import matmul_flops, median, tflops
    from kernelevolve_worker.gpu_timing import Clock
    device = torch.device("cuda", torch.cuda.current_device())
    clock = Clock(device)
    result = {"size": size, "tflops": {}, "median_us": {}, "device": torch.cuda.get_device_name(device)}
    for name, dtype in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        a = (torch.randn(size, size, device=device) / 1.0).to(dtype)
        b = (torch.randn(size, size, device=device) / size ** 0.5).to(dtype)
        c = torch.empty(size, size, device=device, dtype=dtype)
        for _ in range(5):
            torch.mm(a, b, out=c)
        clock.synchronize()
        us = median(clock.time_calls(lambda: torch.mm(a, b, out=c), 30))
        result["median_us"][name] = us
        result["tflops"][name] = tflops(matmul_flops(size, size, size), us)
        print(f"torch.mm {size}^3 {name}: {us:.1f} us = {result['tflops'][name]:.0f} TFLOP/s")
    out.write_text(json.dumps(result, indent=2) + "\n")


def _median(stats: dict | None) -> float:
    return float((stats or {}).get("median") or 0.0)


def summarize(size: int, mm_file: Path, runs: list[Path]) -> int:
    mm = json.loads(mm_file.read_text())
    flops = 2.0 * size ** 3
    rows = []
    for run in runs:
        row = {"problem": run.name, "status": "missing"}
        rows.append(row)
        try:
            r = json.loads((run / "result.json").read_text())
        except (OSError, ValueError) as exc:
            row["error"] = str(exc)
            continue
        best, g = r.get("best") or {}, r.get("gpu") or {}
        row["status"] = r.get("status")
        kernel_text = (run / "best_kernel.py").read_text() if (run / "best_kernel.py").exists() else ""
        found = re.search(r"(float16|bfloat16|float32) operands", kernel_text)
        dtype = found.group(1) if found else "float16"
        kernel_us = _median(best.get("kernel_only_us"))
        dropin_us = _median(best.get("latency_us"))
        eager_us = _median(g.get("paired_eager_us")) or _median(g.get("eager_us"))
        compile_us = _median(g.get("paired_torch_compile_us")) or _median(g.get("torch_compile_us"))
        mm_tflops = mm["tflops"].get(dtype, 0.0)
        kernel_tflops = flops / (kernel_us * 1e-6) / 1e12 if kernel_us > 0 else 0.0
        row.update(dtype=dtype, knobs=best.get("knobs"), kernel_us=kernel_us, dropin_us=dropin_us,
                   kernel_tflops=kernel_tflops, torch_mm_tflops=mm_tflops,
                   ratio_vs_torch_mm=kernel_tflops / mm_tflops if mm_tflops else 0.0,
                   eager_chain_us=eager_us, torch_compile_us=compile_us,
                   eager_chain_tflops=flops / (eager_us * 1e-6) / 1e12 if eager_us else 0.0,
                   fused_speedup_vs_eager=eager_us / dropin_us if dropin_us else 0.0,
                   speedup_vs_torch_compile=compile_us / dropin_us if dropin_us else 0.0,
                   roofline=(best.get("roofline") or {}), peak_gflops=g.get("peak_gflops"),
                   matmul_peak_tflops=g.get("matmul_peak_tflops"))
    print(f"\ngemm set at {size}^3 on {mm.get('device', '?')} (TFLOP/s = 2 S^3 / kernel-only median)")
    print(f"{'problem':<24}{'dtype':<10}{'kernel us':>10}{'TFLOP/s':>9}{'torch.mm':>9}{'ratio':>7}"
          f"{'eager us':>10}{'fused/eager':>12}{'compile us':>11}{'vs compile':>11}  knobs")
    ok = True
    for row in rows:
        if "kernel_us" not in row or not row["kernel_us"]:
            print(f"{row['problem']:<24}status {row['status']} {row.get('error', '')}")
            ok = False
            continue
        passed = row["ratio_vs_torch_mm"] >= TARGET_RATIO
        ok = ok and passed
        print(f"{row['problem']:<24}{row['dtype']:<10}{row['kernel_us']:>10.1f}{row['kernel_tflops']:>9.0f}"
              f"{row['torch_mm_tflops']:>9.0f}{row['ratio_vs_torch_mm']:>6.2f}{'' if passed else '!'}"
              f"{row['eager_chain_us']:>10.1f}{row['fused_speedup_vs_eager']:>11.2f}x{row['torch_compile_us']:>11.1f}"
              f"{row['speedup_vs_torch_compile']:>10.2f}x  {json.dumps(row['knobs'])}")
    print(f"ratio = kernel TFLOP/s / torch.mm TFLOP/s (same dtype), target >= {TARGET_RATIO} ('!' below); "
          "fused/eager = eager chain / kernel drop-in latency (> 1: the fused chain wins)")
    (mm_file.parent / "gemm_summary.json").write_text(json.dumps({"size": size, "torch_mm": mm, "rows": rows},
                                                                 indent=2) + "\n")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_mm = sub.add_parser("mm")
    p_mm.add_argument("--size", type=int, default=4096)
    p_mm.add_argument("--out", type=Path, required=True)
    p_sum = sub.add_parser("summary")
    p_sum.add_argument("--size", type=int, default=4096)
    p_sum.add_argument("--mm", type=Path, required=True)
    p_sum.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "mm":
        time_mm(args.size, args.out)
        return 0
    return summarize(args.size, args.mm, args.runs)


if __name__ == "__main__":
    sys.exit(main())
