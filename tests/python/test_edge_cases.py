"""Edge-case input sets (worker/kernelevolve_worker/edge_cases.py): the files load_problem
writes beside the seed fixtures, the manifest's "edge_cases"/"edge_skipped", and the
EDGE_CASES / INPUT_DOMAIN declarations a problem file may make."""

from __future__ import annotations

import json
import math
import types
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from conftest import BAD_PROBLEMS_DIR, PROBLEMS_DIR, TEST_PROBLEMS_DIR, WorkerProcess, load_params, write_problem
from kernelevolve_worker import edge_cases as edges
from kernelevolve_worker.protocol import ProblemError

ALL_SETS = ["zeros", "negative", "large", "tiny"]
TRANSFORMS = {
    "zeros": torch.zeros_like,
    "negative": lambda x: -x.abs(),
    "large": lambda x: x * 1e4,
    "tiny": lambda x: x * 1e-30,
}
DESCRIPTIONS = {
    "zeros": "every float input element 0",
    "negative": "float inputs replaced by -|x|",
    "large": "float inputs scaled by 10000",
    "tiny": "float inputs scaled by 1e-30",
}


def load(worker: WorkerProcess, path: Path, fixtures: Path, **extra: Any) -> tuple[dict, dict]:
    """load_problem (asserting ok) -> (result, manifest)."""
    result = worker.call("load_problem", load_params(path, fixtures, **extra))
    return result, json.loads(Path(result["manifest_path"]).read_text())


def edge_files_on_disk(fixtures: Path) -> list[str]:
    return sorted(p.name for p in fixtures.glob("edge_*"))


def skipped_reasons(manifest: dict) -> dict[str, str]:
    return {entry["name"]: entry["reason"] for entry in manifest["edge_skipped"]}


def test_default_problem_gets_all_four_sets(worker: WorkerProcess, tmp_path: Path) -> None:
    result, manifest = load(worker, PROBLEMS_DIR / "relu.py", tmp_path, seeds=[0, 1],
                            overrides={"batch_size": "3", "dim": "16"})
    assert manifest["edge_cases"] == [
        {"name": n, "file": f"edge_{n}.safetensors", "description": DESCRIPTIONS[n]} for n in ALL_SETS]
    assert manifest["edge_skipped"] == []
    # Edge files sit beside the seed files but are not seed fixtures.
    assert manifest["files"] == ["seed_0.safetensors", "seed_1.safetensors"]
    assert [Path(f).name for f in result["fixture_files"]] == manifest["files"]
    assert edge_files_on_disk(tmp_path) == sorted(f"edge_{n}.safetensors" for n in ALL_SETS)

    seed_input = load_file(result["fixture_files"][0])["input.0"]
    for name in ALL_SETS:
        file = tmp_path / f"edge_{name}.safetensors"
        tensors = load_file(str(file))
        assert set(tensors) == {"input.0", "output.0"}
        assert tensors["input.0"].dtype == torch.float32 and tensors["input.0"].shape == (3, 16)
        assert torch.equal(tensors["input.0"], TRANSFORMS[name](seed_input)), name
        assert torch.equal(tensors["output.0"], torch.relu(tensors["input.0"])), name
        with safe_open(str(file), framework="pt") as handle:
            assert handle.metadata() == {"edge_case": name}
    # The sets really reach the corners they are named for.
    assert load_file(str(tmp_path / "edge_large.safetensors"))["input.0"].abs().max() > 1e3
    assert 0 < load_file(str(tmp_path / "edge_tiny.safetensors"))["input.0"].abs().max() < 1e-28
    assert (load_file(str(tmp_path / "edge_negative.safetensors"))["output.0"] == 0).all()


def test_integer_bool_inputs_and_params_are_kept(worker: WorkerProcess, tmp_path: Path) -> None:
    result, manifest = load(worker, TEST_PROBLEMS_DIR / "edge_mixed.py", tmp_path, seeds=[0])
    assert [e["name"] for e in manifest["edge_cases"]] == ALL_SETS
    seed = load_file(result["fixture_files"][0])
    assert seed["input.1"].dtype == torch.int64 and seed["input.2"].dtype == torch.bool
    for name in ALL_SETS:
        edge = load_file(str(tmp_path / f"edge_{name}.safetensors"))
        assert set(edge) == set(seed)
        assert torch.equal(edge["input.0"], TRANSFORMS[name](seed["input.0"])), name
        for kept in ("input.1", "input.2", "param.weight"):
            assert edge[kept].dtype == seed[kept].dtype and torch.equal(edge[kept], seed[kept]), (name, kept)
        scaled = torch.where(edge["input.2"], edge["input.0"] * edge["param.weight"], torch.zeros(()))
        torch.testing.assert_close(edge["output.0"], scaled.gather(1, edge["input.1"]), rtol=0, atol=0)


def test_sets_are_built_from_the_first_seed(worker: WorkerProcess, tmp_path: Path) -> None:
    result, _ = load(worker, PROBLEMS_DIR / "relu.py", tmp_path, seeds=[5, 6],
                     overrides={"batch_size": "2", "dim": "8"})
    first = load_file(result["fixture_files"][0])["input.0"]
    assert torch.equal(load_file(str(tmp_path / "edge_negative.safetensors"))["input.0"], -first.abs())


def test_empty_edge_cases_writes_no_set(worker: WorkerProcess, tmp_path: Path) -> None:
    _, manifest = load(worker, TEST_PROBLEMS_DIR / "edge_none.py", tmp_path)
    assert manifest["edge_cases"] == [] and manifest["edge_skipped"] == []
    assert edge_files_on_disk(tmp_path) == []


def test_edge_cases_subset_is_kept_in_its_order(worker: WorkerProcess, tmp_path: Path) -> None:
    _, manifest = load(worker, TEST_PROBLEMS_DIR / "edge_subset.py", tmp_path)
    assert [e["name"] for e in manifest["edge_cases"]] == ["tiny", "large"]
    assert manifest["edge_skipped"] == []
    assert edge_files_on_disk(tmp_path) == ["edge_large.safetensors", "edge_tiny.safetensors"]


def test_input_domain_skips_sets_that_leave_it(worker: WorkerProcess, tmp_path: Path) -> None:
    # Declared under its ABI name "input.1"; the reason names the forward() argument 'p'.
    _, manifest = load(worker, TEST_PROBLEMS_DIR / "edge_domain.py", tmp_path)
    assert [e["name"] for e in manifest["edge_cases"]] == ["zeros", "tiny"]
    reasons = skipped_reasons(manifest)
    assert sorted(reasons) == ["large", "negative"]
    assert reasons["negative"].startswith("'p' reaches -") and "below its INPUT_DOMAIN [0, 1]" in reasons["negative"]
    assert reasons["large"].startswith("'p' reaches ") and "above its INPUT_DOMAIN [0, 1]" in reasons["large"]
    assert edge_files_on_disk(tmp_path) == ["edge_tiny.safetensors", "edge_zeros.safetensors"]
    for name in ("zeros", "tiny"):
        p = load_file(str(tmp_path / f"edge_{name}.safetensors"))["input.1"]
        assert 0.0 <= p.min() and p.max() <= 1.0


def test_kl_div_keeps_only_the_sets_inside_its_probability_domain(worker: WorkerProcess, tmp_path: Path) -> None:
    _, manifest = load(worker, PROBLEMS_DIR / "kl_div.py", tmp_path, seeds=[0],
                       overrides={"batch_size": "2", "dim": "16"})
    assert [e["name"] for e in manifest["edge_cases"]] == ["tiny"]
    reasons = skipped_reasons(manifest)
    assert sorted(reasons) == ["large", "negative", "zeros"]
    assert all(r.startswith("'predictions' reaches ") for r in reasons.values()), reasons
    assert math.isfinite(load_file(str(tmp_path / "edge_tiny.safetensors"))["output.0"].item())


def test_reference_raising_on_a_set_skips_it(worker: WorkerProcess, tmp_path: Path) -> None:
    result, manifest = load(worker, TEST_PROBLEMS_DIR / "edge_reference_asserts.py", tmp_path)
    assert result["fixture_files"]  # the load itself succeeded
    assert [e["name"] for e in manifest["edge_cases"]] == ["zeros", "negative", "tiny"]
    assert manifest["edge_skipped"] == [
        {"name": "large", "reason": "the reference raised AssertionError: input out of range"}]
    assert "edge_large.safetensors" not in edge_files_on_disk(tmp_path)
    assert worker.call("hello")["pid"] == worker.proc.pid


def test_set_where_eager_overflows_float16_is_skipped(worker: WorkerProcess, tmp_path: Path) -> None:
    """x * 1e4 in float16: a row sum of 64 such inputs overflows 65504 in eager (Inf, then
    Inf / 64) where the float64 reference of the mean, rounded once, is finite; the set
    is left out, naming why, and the other sets stay."""
    source = write_problem(tmp_path / "half_rowsum.py", "x", "x.sum(dim=-1, keepdim=True) / 64",
                           "[(torch.randn(8, 64) + 2).half()]")
    _, manifest = load(worker, source, tmp_path / "fx")
    assert [e["name"] for e in manifest["edge_cases"]] == ["zeros", "negative", "tiny"]
    reason = skipped_reasons(manifest)["large"]
    assert reason.startswith("eager PyTorch's own float16 output.0 is Inf or NaN at "), reason
    assert "where the float64 reference is finite" in reason
    # The same model in float32 keeps every set: eager stays finite there.
    source32 = write_problem(tmp_path / "rowsum32.py", "x", "x.sum(dim=-1, keepdim=True) / 64",
                             "[torch.randn(8, 64) + 2]")
    _, manifest32 = load(worker, source32, tmp_path / "fx32")
    assert [e["name"] for e in manifest32["edge_cases"]] == list(ALL_SETS)


def test_set_with_other_output_shape_is_skipped(worker: WorkerProcess, tmp_path: Path) -> None:
    _, manifest = load(worker, TEST_PROBLEMS_DIR / "edge_data_dependent.py", tmp_path)
    assert [e["name"] for e in manifest["edge_cases"]] == ["negative", "large", "tiny"]
    assert skipped_reasons(manifest) == {
        "zeros": "the reference gives other outputs on it (output.0 float32[0], not output.0 float32[24] "
                 "as on the seeds)"}


def test_no_float_input_skips_every_set(worker: WorkerProcess, tmp_path: Path) -> None:
    _, manifest = load(worker, TEST_PROBLEMS_DIR / "edge_int_only.py", tmp_path)
    assert manifest["edge_cases"] == []
    assert skipped_reasons(manifest) == {n: "no floating-point input to transform" for n in ALL_SETS}
    assert edge_files_on_disk(tmp_path) == []


BAD_DECLARATIONS = [
    ("edge_cases_unknown.py", "EDGE_CASES names unknown set(s) ['huge']; expected a list drawn from "
                              "['zeros', 'negative', 'large', 'tiny'] (or [] for none)"),
    ("edge_cases_not_a_list.py", "EDGE_CASES = 'large'; expected a list drawn from"),
    ("edge_cases_repeated.py", "EDGE_CASES repeats a name: ['tiny', 'large', 'tiny']"),
    ("input_domain_unknown_key.py", "INPUT_DOMAIN key 'y' names no input; known: ['input.0', 'x']"),
    ("input_domain_bad_range.py", "INPUT_DOMAIN['x'] = (1.0, 0.0); expected e.g. INPUT_DOMAIN = {"),
    ("input_domain_not_a_dict.py", "INPUT_DOMAIN is a list; expected e.g."),
]


@pytest.mark.parametrize("file_name, expected", BAD_DECLARATIONS)
def test_malformed_declaration_is_a_problem_error_naming_the_file(worker: WorkerProcess, tmp_path: Path,
                                                                  file_name: str, expected: str) -> None:
    response = worker.request("load_problem", load_params(BAD_PROBLEMS_DIR / file_name, tmp_path))
    assert response["ok"] is False
    error = response["error"]
    assert error["kind"] == "problem_error"
    assert error["message"].startswith(f"{BAD_PROBLEMS_DIR / file_name}: ")
    assert expected in error["message"]
    assert "\n" not in error["message"]
    assert not (tmp_path / "manifest.json").exists()
    if file_name.startswith("edge_cases_"):  # checked before any reference run or file
        assert not tmp_path.exists() or not list(tmp_path.iterdir())
    assert worker.call("hello")["pid"] == worker.proc.pid  # still serving


# --- edge_cases.py functions directly (no worker) ---

def module_with(**names: Any) -> types.ModuleType:
    module = types.ModuleType("declared")
    module.__dict__.update(names)
    return module


@pytest.mark.parametrize("bounds", [(0.0, float("nan")), (True, 1.0), ("0", 1.0), (0.0,), (0.0, 1.0, 2.0), 0.5])
def test_input_domain_rejects_bad_bounds(bounds: Any) -> None:
    with pytest.raises(ProblemError, match=r"^p\.py: INPUT_DOMAIN\['x'\] = "):
        edges.problem_input_domain(module_with(INPUT_DOMAIN={"x": bounds}), "p.py", ["x"], 1)


def test_input_domain_resolves_names_and_abi_indices() -> None:
    module = module_with(INPUT_DOMAIN={"t": [0, 1], "input.0": (-math.inf, 0.0)})
    assert edges.problem_input_domain(module, "p.py", ["p", "t", "extra"], 2) == {1: (0.0, 1.0), 0: (-math.inf, 0.0)}
    for key in ("input.2", "extra", 3):  # past the inputs get_inputs() returns, or not a name
        with pytest.raises(ProblemError, match="names no input"):
            edges.problem_input_domain(module_with(INPUT_DOMAIN={key: (0, 1)}), "p.py", ["p", "t", "extra"], 2)


def test_domain_violation_checks_float_inputs_only() -> None:
    domain = {0: (0.0, 1.0), 1: (0.0, 1.0)}
    counts = torch.tensor([5, 7])  # an int input outside its range is never transformed
    assert edges.domain_violation([torch.tensor([0.0, 1.0]), counts], domain, ["p", "n"]) is None
    assert edges.domain_violation([torch.tensor([0.5, 1.5]), counts], domain, ["p", "n"]) == \
        "'p' reaches 1.5 above its INPUT_DOMAIN [0, 1]"
    assert edges.domain_violation([torch.tensor([0.5]), counts], {0: (0.6, 1.0)}, []) == \
        "'input.0' reaches 0.5 below its INPUT_DOMAIN [0.6, 1]"


def test_order_violation_keeps_sorted_boundaries_sorted() -> None:
    boundaries = torch.tensor([[-2.0, -0.5, 0.0, 1.5], [-1.0, 0.0, 0.5, 3.0]])  # sorted rows
    values = torch.tensor([0.3, -0.7, 2.0])  # not sorted: any transform is fine
    seed = [values, boundaries]
    negative = edges.edge_inputs("negative", seed)
    assert edges.order_violation(seed, negative, ["x", "boundaries"]) == \
        "'boundaries' is sorted along its last dim and this set unsorts it"
    for name in ("zeros", "large", "tiny"):  # these keep the order
        assert edges.order_violation(seed, edges.edge_inputs(name, seed), ["x", "boundaries"]) is None
    constant = [torch.full((4,), -3.0)]  # constant along the dim: no order to keep
    assert edges.order_violation(constant, [torch.tensor([3.0, 1.0, 2.0, 0.0])], []) is None


def test_forward_argument_names_stop_at_varargs() -> None:
    class Model(torch.nn.Module):
        def forward(self, x, y, *rest, scale=1.0):
            return x

    assert edges.forward_argument_names(Model()) == ["x", "y"]
    assert edges.problem_edge_cases(module_with(), "p.py") == ALL_SETS


def eager_misses(eager: torch.Tensor, exact: torch.Tensor) -> bool:
    a, b = eager.double(), exact.double()
    return bool(((a - b).abs() > 1e-4 + 1e-4 * b.abs()).any())


def test_reference_error_is_eagers_own_error_against_the_float64_reference() -> None:
    torch.manual_seed(0)
    a, b = torch.randn(40, 24) * 1e4, torch.randn(24, 36) * 1e4
    eager = [a @ b, torch.tensor([3, 1]), torch.tensor([1.0, float("inf"), float("nan")])]
    exact = [(a.double() @ b.double()).float(), eager[1], torch.tensor([1.5, 2.0, 0.0])]
    errors = edges.reference_error(eager, exact)
    # Terms of 1e8 cancel: float32 is off by hundreds somewhere (the allowance's reason).
    assert errors[0] == float((eager[0].double() - exact[0].double()).abs().max()) > 1.0
    assert errors[1] == 0.0                      # integer output: exact by definition
    assert errors[2] == 0.5                      # only the pair where both are finite
    assert edges.reference_error([eager[0]], [eager[0]]) == [0.0]  # no float64 reference: nothing to allow
    # With the check's tolerance: only where eager itself misses it somewhere (here the
    # largest error sits at a large element, inside rtol, and no element misses).
    loose = edges.reference_error(eager, exact, lambda dtype: (1e-4, 1e-4))
    assert loose[0] == (errors[0] if eager_misses(eager[0], exact[0]) else 0.0)
    assert edges.reference_error(eager, exact, lambda dtype: (1e9, 0.0)) == [0.0, 0.0, 0.0]


def test_large_set_of_a_product_records_eagers_error_in_the_manifest(worker: WorkerProcess, tmp_path: Path) -> None:
    # K = 256: eager itself misses the tolerance on "large" (at K = 24 it stays within
    # rtol, and only other summation orders miss it).
    source = write_problem(tmp_path / "bmm_residual.py", "a, b, r", "torch.relu(torch.bmm(a, b) + r)",
                           "[torch.randn(1, 64, 256), torch.randn(1, 256, 48), torch.randn(1, 64, 48)]")
    _, manifest = load(worker, source, tmp_path / "fixtures", seeds=[0])
    by_name = {e["name"]: e for e in manifest["edge_cases"]}
    assert "reference_error" not in by_name["zeros"]  # relu(0 + 0) is exact
    error = by_name["large"]["reference_error"]["output.0"]
    edge = load_file(str(tmp_path / "fixtures" / "edge_large.safetensors"))
    eager = torch.relu(torch.bmm(edge["input.0"], edge["input.1"]) + edge["input.2"])
    assert error == float((eager.double() - edge["output.0"].double()).abs().max()) > 1.0
    # Eager misses the tolerance there, so the set carries a per-element allowance:
    # positive where the product's cancellation makes rounding matter, 0 at the relu's
    # clipped zeros, where no kernel may be off at all.
    assert by_name["large"]["allowance"] == ["output.0"] and "allowance" not in by_name["zeros"]
    scale = edge["allowance.output.0"]
    assert scale.dtype == torch.float32 and scale.shape == edge["output.0"].shape
    pre = torch.bmm(edge["input.0"].double(), edge["input.1"].double()) + edge["input.2"].double()
    assert bool((scale[pre < -1e6] == 0).all()) and bool((scale[pre > 1e6] > 0).all())
    assert manifest["eager_error_multiple"] == 8.0


def test_eager_error_multiple_0_writes_no_allowance(worker: WorkerProcess, tmp_path: Path) -> None:
    source = write_problem(tmp_path / "bmm_off.py", "a, b", "torch.bmm(a, b)",
                           "[torch.randn(1, 64, 256), torch.randn(1, 256, 48)]", prelude="EAGER_ERROR_MULTIPLE = 0\n")
    _, manifest = load(worker, source, tmp_path / "fixtures", seeds=[0])
    large = {e["name"]: e for e in manifest["edge_cases"]}["large"]
    assert large["reference_error"]["output.0"] > 1.0 and "allowance" not in large
    assert manifest["eager_error_multiple"] == 0.0
    with safe_open(str(tmp_path / "fixtures" / "edge_large.safetensors"), "pt") as f:
        assert sorted(f.keys()) == ["input.0", "input.1", "output.0"]


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), 1e9, 101, "8", True])
def test_eager_error_multiple_must_be_a_finite_number(value: Any) -> None:
    module = types.ModuleType("p")
    module.EAGER_ERROR_MULTIPLE = value
    with pytest.raises(ProblemError, match="p.py: EAGER_ERROR_MULTIPLE"):
        edges.problem_eager_error_multiple(module, "p.py")


def test_eager_error_multiple_defaults_to_8_and_0_turns_it_off() -> None:
    module = types.ModuleType("p")
    assert edges.problem_eager_error_multiple(module, "p.py") == edges.SUGGESTED_EAGER_ERROR_MULTIPLE == 8.0
    module.EAGER_ERROR_MULTIPLE = 0
    assert edges.problem_eager_error_multiple(module, "p.py") == 0.0
    module.EAGER_ERROR_MULTIPLE = 2.5
    assert edges.problem_eager_error_multiple(module, "p.py") == 2.5


def _passes(actual: torch.Tensor, expected: torch.Tensor, scale: torch.Tensor | None, multiple: float) -> bool:
    """The checker's rule (gpu_checks.compare, the twin of src/eval/tolerance.cpp)."""
    from kernelevolve_worker.gpu_checks import compare
    return compare(actual, expected, 0, "output.0", {}, scale, multiple)["passed"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_seed_sets_carry_eagers_rounding_error_so_a_fused_chain_passes_and_a_wrong_one_does_not(
        worker: WorkerProcess, tmp_path: Path, dtype: str) -> None:
    # torch.testing's half tolerances are about one unit in the last place; eager rounds
    # the product, the sum and the GELU each to half, a fused kernel once. Where the
    # product and the bias cancel, the two differ by units of the product's magnitude.
    source = write_problem(
        tmp_path / f"mm_bias_gelu_{dtype}.py", "a, b, bias", "torch.nn.functional.gelu(a @ b + bias)",
        f"[torch.randn(128, 256).to(torch.{dtype}), (torch.randn(256, 128) / 16).to(torch.{dtype}), "
        f"(0.1 * torch.randn(128)).to(torch.{dtype})]")
    result, manifest = load(worker, source, tmp_path / "fixtures", seeds=[0, 1])
    assert manifest["seed_allowance"] == [["output.0"], ["output.0"]]
    assert "seed_allowance" in result["phase_seconds"]  # its own phase, where it runs
    seed = load_file(str(tmp_path / "fixtures" / "seed_1.safetensors"))
    a, b, bias, eager, scale = (seed[k] for k in ("input.0", "input.1", "input.2", "output.0", "allowance.output.0"))
    assert scale.dtype == torch.float32 and scale.shape == eager.shape and bool((scale >= 0).all())
    half = getattr(torch, dtype)
    fused = torch.nn.functional.gelu(a.float() @ b.float() + bias.float()).to(half)
    assert not _passes(fused, eager, None, 0.0)        # the plain tolerance alone rejects it...
    assert _passes(fused, eager, scale, 8.0)           # ...eager's own rounding error covers it
    assert not _passes(eager / 2, eager, scale, 8.0)   # a kernel off by half is wrong
    no_bias = torch.nn.functional.gelu(a.float() @ b.float()).to(half)
    assert not _passes(no_bias, eager, scale, 8.0)


def test_a_halved_float16_softmax_fails_and_float32_seeds_carry_no_allowance(
        worker: WorkerProcess, tmp_path: Path) -> None:
    # Outputs near 2.4e-4: a flat atol of 1e-2 passed a kernel that halves every one.
    source = write_problem(tmp_path / "softmax_f16.py", "x", "torch.softmax(x, -1)",
                           "[torch.randn(16, 4096).to(torch.float16)]")
    _, manifest = load(worker, source, tmp_path / "fixtures", seeds=[0])
    seed = load_file(str(tmp_path / "fixtures" / "seed_0.safetensors"))
    eager = seed["output.0"]
    scale = seed.get("allowance.output.0")
    assert _passes(torch.softmax(seed["input.0"].double(), -1).to(torch.float16), eager, scale, 8.0)
    assert not _passes(eager / 2, eager, scale, 8.0)
    source32 = write_problem(tmp_path / "softmax_f32.py", "x", "torch.softmax(x, -1)", "[torch.randn(16, 4096)]")
    _, manifest32 = load(worker, source32, tmp_path / "fixtures32", seeds=[0])
    assert "seed_allowance" not in manifest32
    with safe_open(str(tmp_path / "fixtures32" / "seed_0.safetensors"), "pt") as f:
        assert not any(k.startswith("allowance.") for k in f.keys())
