"""Runs generated Triton candidate modules against recorded eager outputs, under
TRITON_INTERPRET=1 on CPU tensors (no GPU needed).

Usage: python triton_case_check.py MANIFEST.json
MANIFEST: [{"module": "path/to/candidate.py", "case": "path/to/case.safetensors"}, ...]
where the safetensors file holds "in.<k>" (ABI inputs) and "out.<k>" (eager outputs).
Prints one JSON line per module ({"module", "ok", "error"}) and exits 0 when all pass.
"""
import importlib.util
import json
import os
import sys
import traceback

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402


def ordered(tensors, prefix):
    keys = sorted((int(k[len(prefix):]), k) for k in tensors if k.startswith(prefix))
    return [tensors[k].contiguous() for _, k in keys]


def check(module_path, case_path):
    spec = importlib.util.spec_from_file_location(os.path.basename(module_path)[:-3], module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tensors = load_file(case_path)
    inputs = ordered(tensors, "in.")
    expected = ordered(tensors, "out.")
    outputs = [torch.full_like(e, float("nan")) if e.is_floating_point() else torch.full_like(e, -7)
               for e in expected]
    module.kernelevolve_entry(inputs, outputs)
    for k, (got, want) in enumerate(zip(outputs, expected)):
        if want.is_floating_point():
            # Two units in the last place of a half type (float16 2^-10, bfloat16
            # 2^-7): a float32 sum in another order may round to the neighbouring value.
            tol = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}.get(want.dtype, 1e-4)
            if not torch.allclose(got, want, rtol=tol, atol=tol, equal_nan=True):
                diff = (got - want).abs().nan_to_num(float("inf")).max().item()
                return f"output {k}: max abs difference {diff}"
        elif not torch.equal(got, want):
            return f"output {k}: {int((got != want).sum())} of {want.numel()} elements differ"
    return ""


def run_manifest(check_item):
    """Runs ``check_item(item)`` (an error text, "" when right) on every item of the
    manifest named by sys.argv[1]; prints one JSON line per item and exits 1 when any
    failed. An item that raises is a failure, reported with its traceback."""
    manifest = json.load(open(sys.argv[1]))
    failures = 0
    for item in manifest:
        try:
            error = check_item(item)
        except Exception:
            error = traceback.format_exc(limit=3)
        failures += bool(error)
        print(json.dumps({"module": item["module"], "ok": not error, "error": error}), flush=True)
    sys.exit(1 if failures else 0)


def main():
    run_manifest(lambda item: check(item["module"], item["case"]))


if __name__ == "__main__":
    main()
