"""Runs generated Triton modules whose sizes are read at run time under
TRITON_INTERPRET=1 on CPU tensors (tests/integration/triton_runtime_sizes_test.cpp).

Usage: python triton_runtime_sizes_check.py MANIFEST.json
MANIFEST: [{"module": path, "check": "sized_program" | "embedding_bag", ...}, ...]
  sized_program: the module of tests/unit/sized_test_program.h's program plus a column
    sum over the varying dim and a cumsum along it; run at every n of "sizes", refused
    (ValueError) at every n of "refused" and when the inputs disagree on n.
  index_add: {"segments": bool, "mean": bool, "self": bool}; compared with
    torch.index_add (negative and repeated indices; empty segments), at two numbers
    of values, then with an index past the rows, which must not fail.
  embedding_bag: {"mode": 0|1|2, "last": bool, "weighted": bool}; compared with
    torch.nn.functional.embedding_bag on bags of varying length (empty ones included),
    then run with an index past the table, which must not fail or touch other bags.
  case: {"case": path.safetensors}; compared with the recorded eager outputs
    (triton_case_check.check).
  bounded_case: {"case": ...} whose one output has a data-dependent length: run with the
    exact-length output, then at a bound of twice its rows plus the int64 size tensor
    (the prefix and the size must be right), then at a bound one row short (the size
    still says every row, the rows that fit are right, nothing is written past them).
  sort: {"dim", "descending", "k" (-1: sort), "outputs": [0 values | 1 indices, ...]};
    compared with torch.sort(stable=True) (top-k: its first k) on float32 [3, L, 4]
    and [2, 5, L] tensors with ties, -0.0 and NaN, for several L.
  unique: {"outputs": [0 unique | 1 inverse | 2 counts, ...]}; compared with
    torch.unique(sorted=True) on int64 [a, b] ids (negative ones, repeats; empty),
    bounded and exact; a bound one short (sizes say every value, the prefix is right)
    and ids spanning 2^40 values (sizes -1) are reported in the size tensors.
Prints one JSON line per module ({"module", "ok", "error"}); exits 0 when all pass
(triton_case_check.run_manifest).
"""
import importlib.util
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
from triton_case_check import check as check_recorded, ordered, run_manifest  # noqa: E402  (this folder is on sys.path)


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def close(got, want, what):
    if not torch.allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True):
        diff = (got - want).abs().nan_to_num(float("inf")).max().item()
        raise AssertionError(f"{what}: max abs difference {diff}")


def check_sized_program(module, item):
    for n in item["sizes"]:
        x = (torch.arange(n * 4, dtype=torch.float32) % 5 - 1.5).reshape(n, 4)
        lengths = torch.arange(n, dtype=torch.int64) * 3
        outs = [torch.full((n, 4), float("nan")), torch.full((n,), float("nan")),
                torch.full((4,), float("nan")), torch.full((n, 4), float("nan"))]
        module.kernelevolve_entry([x, lengths], outs)
        keep = (torch.arange(n) < n - 1)[:, None]
        close(outs[0], torch.where(keep, x * 2, 0.0) + lengths[:, None].float(), f"n = {n}, y")
        close(outs[1], x.sum(1), f"n = {n}, row sums")
        close(outs[2], x.double().sum(0).float(), f"n = {n}, column sums over the varying dim")
        close(outs[3], x.double().cumsum(0).float(), f"n = {n}, cumsum along the varying dim")
        try:  # inputs that disagree on n: refused before any kernel runs
            module.kernelevolve_entry([x, lengths[:-1] if n > 1 else torch.zeros(2, dtype=torch.int64)], outs)
            raise AssertionError(f"n = {n}: inputs of other lengths were not refused")
        except ValueError:
            pass
    for n in item["refused"]:
        x = torch.zeros(n, 4)
        outs = [torch.zeros(n, 4), torch.zeros(n), torch.zeros(4), torch.zeros(n, 4)]
        try:
            module.kernelevolve_entry([x, torch.zeros(n, dtype=torch.int64)], outs)
            raise AssertionError(f"n = {n} is outside the sizes the input sets showed but was not refused")
        except ValueError as e:
            if "input sets showed" not in str(e):
                raise AssertionError(f"n = {n}: refused with an unclear message: {e}") from e


def check_embedding_bag(module, item):
    gen = torch.Generator().manual_seed(7)
    rows, dim = 50, 40  # dim not a power of two: masked columns
    weight = torch.randn(rows, dim, generator=gen)
    lengths = torch.tensor([3, 0, 1, 17, 0, 5, 2], dtype=torch.int64)  # empty bags, a bag > 16
    n = int(lengths.sum())
    indices = torch.randint(0, rows, (n,), generator=gen)
    starts = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]])
    offsets = torch.cat([starts, torch.tensor([n])]) if item["last"] else starts
    psw = torch.rand(n, generator=gen) if item["weighted"] else None
    if item["mode"] == 2:
        weight[indices[4], 3] = float("nan")  # max propagates NaN
    want = F.embedding_bag(indices, weight, offsets, mode=["sum", "mean", "max"][item["mode"]],
                           per_sample_weights=psw, include_last_offset=item["last"])
    inputs = [indices, weight, offsets] + ([psw] if item["weighted"] else [])
    out = torch.full_like(want, float("nan"))
    module.kernelevolve_entry(inputs, [out])
    close(out, want, "embedding_bag")
    # An index past the table: the kernel reads no row for it (PyTorch raises), and the
    # other bags stay right.
    bad = indices.clone()
    bad[0] = rows + 1000
    out.fill_(float("nan"))
    module.kernelevolve_entry([bad] + inputs[1:], [out])
    close(out[1:], want[1:], "embedding_bag with an index past the table, other bags")


def check_index_add(module, item):
    gen = torch.Generator().manual_seed(3)
    rows, width = 9, 40
    for n_segments_or_values in (23, 5):
        base = torch.randn(rows, width, generator=gen) if item["self"] else torch.zeros(rows, width)
        if item["segments"]:
            lengths = torch.randint(0, 6, (rows,), generator=gen)
            lengths[2] = 0
            n = int(lengths.sum())
            index = torch.repeat_interleave(torch.arange(rows), lengths)
            inputs = [torch.randn(n, width, generator=gen), lengths]
        else:
            n = n_segments_or_values
            index = torch.randint(-rows, rows, (n,), generator=gen)
            inputs = [torch.randn(n, width, generator=gen), index]
        want = base.index_add(0, index % rows, inputs[0].double().float())
        if item["mean"]:
            want = want / lengths.clamp(min=1).float()[:, None]
        if item["self"]:
            inputs.append(base)
        out = torch.full((rows, width), float("nan"))
        module.kernelevolve_entry(inputs, [out])
        close(out, want, f"index_add with {n} value rows")
    if not item["segments"]:  # an index past the rows: no read or write past a tensor
        inputs[1] = inputs[1].clone()
        inputs[1][0] = rows + 100
        module.kernelevolve_entry(inputs, [out])


def check_bounded_case(module, item):
    error = check_recorded(item["module"], item["case"])
    if error:
        raise AssertionError(f"exact-length output: {error}")
    tensors = load_file(item["case"])
    inputs, (want,) = ordered(tensors, "in."), ordered(tensors, "out.")
    rows = want.shape[0]
    bounded = torch.full((2 * rows + 3, *want.shape[1:]), -7).to(want.dtype)
    size = torch.full((want.dim(),), -1, dtype=torch.int64)
    module.kernelevolve_entry(inputs, [bounded, size])
    if size.tolist() != list(want.shape):
        raise AssertionError(f"size tensor {size.tolist()}, expected {list(want.shape)}")
    if not torch.equal(bounded[:rows], want):
        raise AssertionError("the bounded output's prefix differs from eager's rows")
    if rows > 0:
        short = torch.full((rows, *want.shape[1:]), -7).to(want.dtype)
        module.kernelevolve_entry(inputs, [short[:rows - 1], size])
        if size.tolist() != list(want.shape):
            raise AssertionError(f"a bound one row short: size tensor {size.tolist()}, expected {list(want.shape)}")
        if not torch.equal(short[:rows - 1], want[:rows - 1]) or not torch.equal(short[rows - 1], torch.full_like(want[0], -7)):
            raise AssertionError("a bound one row short: the rows that fit differ or a row past the bound was written")


def sort_reference(x, item):
    values, indices = torch.sort(x, dim=item["dim"], descending=item["descending"], stable=True)
    if item["k"] >= 0:
        values = values.narrow(item["dim"], 0, item["k"])
        indices = indices.narrow(item["dim"], 0, item["k"])
    return [values, indices]


def check_sort(module, item):
    gen = torch.Generator().manual_seed(5)
    for length in (1, 7, 33, 64):
        if item["k"] > length:
            continue
        shape = [3, length, 4] if item["dim"] == 1 else [2, 5, length]
        x = torch.round(torch.randn(shape, generator=gen) * 4) / 4  # ties
        flat = x.view(-1)
        flat[::11] = -0.0
        flat[3::13] = float("nan")
        want = sort_reference(x, item)
        outs = [torch.full_like(want[o], float("nan")) if o == 0 else torch.full_like(want[o], -7)
                for o in item["outputs"]]
        module.kernelevolve_entry([x], outs)
        for o, got in zip(item["outputs"], outs):
            if o == 0:
                close(got, want[0], f"L = {length}: values")
            elif not torch.equal(got, want[1]):
                raise AssertionError(f"L = {length}: {int((got != want[1]).sum())} indices differ")


def check_unique(module, item):
    gen = torch.Generator().manual_seed(11)
    which = item["outputs"]
    for shape in ((6, 50), (3, 7), (0, 4)):
        x = torch.randint(-40, 60, shape, generator=gen) * 3
        uniq, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
        want = [uniq, inverse, counts]
        exact = [torch.full_like(want[o], -7) for o in which]
        module.kernelevolve_entry([x], exact)
        for o, got in zip(which, exact):
            if not torch.equal(got, want[o]):
                raise AssertionError(f"{shape}: output {o} (exact length) differs")
        bound = x.numel() + 5
        outs = [torch.full_like(want[o], -7) if o == 1 else torch.full((bound,), -7, dtype=torch.int64)
                for o in which]
        sizes = [torch.full((1,), -1, dtype=torch.int64) for o in which if o != 1]
        module.kernelevolve_entry([x], outs + sizes)
        for o, got in zip(which, outs):
            if not torch.equal(got if o == 1 else got[:uniq.numel()], want[o]):
                raise AssertionError(f"{shape}: output {o} (bounded) differs")
        if any(int(s) != uniq.numel() for s in sizes):
            raise AssertionError(f"{shape}: size tensors {[int(s) for s in sizes]}, expected {uniq.numel()}")
        if sizes and uniq.numel() > 0:  # a bound one short: sizes say every value, the prefix fits
            short = [torch.full_like(want[o], -7) if o == 1 else torch.full((uniq.numel() - 1,), -7, dtype=torch.int64)
                     for o in which]
            module.kernelevolve_entry([x], short + sizes)
            if any(int(s) != uniq.numel() for s in sizes):
                raise AssertionError(f"{shape}, a bound one short: size tensors {[int(s) for s in sizes]}")
            for o, got in zip(which, short):
                if not torch.equal(got, want[o] if o == 1 else want[o][:uniq.numel() - 1]):
                    raise AssertionError(f"{shape}, a bound one short: output {o} differs")
    if any(o != 1 for o in which):  # ids spanning 2^40 values: more than the table holds
        wide = torch.tensor([[0, 1 << 40]], dtype=torch.int64)
        outs = [torch.empty((1, 2), dtype=torch.int64) if o == 1 else torch.empty(2, dtype=torch.int64) for o in which]
        sizes = [torch.zeros(1, dtype=torch.int64) for o in which if o != 1]
        module.kernelevolve_entry([wide], outs + sizes)
        if any(int(s) != -1 for s in sizes):
            raise AssertionError(f"ids spanning 2^40 values: size tensors {[int(s) for s in sizes]}, expected -1")


def check_item(item):
    if item["check"] == "case":
        return check_recorded(item["module"], item["case"])
    module = load(item["module"])
    {"sized_program": check_sized_program, "embedding_bag": check_embedding_bag, "index_add": check_index_add,
     "bounded_case": check_bounded_case, "sort": check_sort, "unique": check_unique}[item["check"]](module, item)
    return ""


if __name__ == "__main__":
    run_manifest(check_item)
