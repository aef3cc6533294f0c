"""Checks an exported model_new.py in a fresh process (run by export_test.cpp and by
scripts/check_export_gpu.sh).

Imports model_new from EXPORT_DIR, builds ModelNew(*get_init_inputs()), loads the
state_dict of the problem's Model into it (strict; with --perturb the Model's
floating-point parameters are changed first, so a kernel that ignored them would
fail), feeds get_inputs() and compares with Model within the run's tolerance
(model_new.TOLERANCE), in eager mode and under torch.compile(fullgraph=True), which
fails on any graph break. Prints one "ok ..." line per check; exits 1 on a mismatch.
"""

import argparse
import sys

import torch


def compare(what, got, expected, tolerance):
    """Raises SystemExit(1) unless every output is within |a-b| <= atol + rtol*|b|."""
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    if len(got) != len(expected):
        sys.exit(f"FAIL {what}: {len(got)} outputs, expected {len(expected)}")
    for i, (g, e) in enumerate(zip(got, expected)):
        g, e = g.cpu(), e.cpu()
        if g.shape != e.shape or g.dtype != e.dtype:
            sys.exit(f"FAIL {what}: output {i} is {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}")
        atol, rtol = tolerance[str(e.dtype).removeprefix("torch.")]
        if not torch.allclose(g.double(), e.double(), atol=atol, rtol=rtol, equal_nan=True):
            worst = (g.double() - e.double()).abs().max().item()
            sys.exit(f"FAIL {what}: output {i} differs by up to {worst:.3g} (atol {atol}, rtol {rtol})")
    print(f"ok {what}: {len(got)} output(s) within tolerance")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("export_dir")
    parser.add_argument("--perturb", action="store_true", help="change Model's float parameters first")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda for a triton export")
    args = parser.parse_args()
    sys.path.insert(0, args.export_dir)
    import model_new

    torch.manual_seed(0)
    reference = model_new.Model(*model_new.get_init_inputs())
    if args.perturb:
        with torch.no_grad():
            for p in reference.parameters():
                if p.is_floating_point():
                    p.add_(torch.rand_like(p) * 0.5)
    new = model_new.ModelNew(*model_new.get_init_inputs())
    if list(new.state_dict()) != list(reference.state_dict()):
        sys.exit(f"FAIL state_dict keys {list(new.state_dict())} != {list(reference.state_dict())}")
    new.load_state_dict(reference.state_dict(), strict=True)
    print(f"ok state_dict: {len(reference.state_dict())} entries loaded strictly")
    reference.to(args.device).eval()
    new.to(args.device).eval()
    inputs = [x.to(args.device) if isinstance(x, torch.Tensor) else x for x in model_new.get_inputs()]
    with torch.no_grad():
        expected = reference(*inputs)
        compare("eager", new(*inputs), expected, model_new.TOLERANCE)
        compiled = torch.compile(new, fullgraph=True)
        compare("torch.compile(fullgraph=True)", compiled(*inputs), expected, model_new.TOLERANCE)


if __name__ == "__main__":
    main()
