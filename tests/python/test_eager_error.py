"""eager_error.element_error_scale: the per-element allowance of an input set where eager
PyTorch itself misses the tolerance, and how gpu_checks.compare applies it (the CPU
harness applies the same rule: src/eval/tolerance.h)."""

from __future__ import annotations

import torch

from kernelevolve_worker import eager_error
from kernelevolve_worker import edge_cases as edges
from kernelevolve_worker.gpu_checks import compare, tolerance_for


def float32_tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return tolerance_for(dtype, {})


def sequential_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b summed over K in one sequential fused-multiply-add loop (a CPU micro-kernel's
    order), rounding to float32 after each step."""
    acc = torch.zeros(a.shape[:-1] + (b.shape[-1],), dtype=torch.float32)
    for k in range(a.shape[-1]):
        acc = (acc.double() + a[..., :, k:k + 1].double() * b[..., k:k + 1, :].double()).float()
    return acc


def product_at_large_scale() -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    """relu(a @ b) on randn x 1e4 inputs with K = 256: (inputs, eager, float64 reference)."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 256, generator=gen) * 1e4, torch.randn(256, 48, generator=gen) * 1e4
    return [a, b], torch.relu(a @ b), torch.relu(a.double() @ b.double()).float()


def test_no_allowance_where_eager_meets_the_tolerance() -> None:
    x = torch.randn(64)
    exact = torch.tanh(x.double()).float()
    scales = eager_error.element_error_scale(lambda xs: [torch.tanh(xs[0])], [x], [torch.tanh(x)], [exact],
                                             float32_tolerance)
    assert scales == [None]
    ints = torch.arange(4)
    assert eager_error.element_error_scale(lambda xs: [ints], [x], [ints], [ints], float32_tolerance) == [None]


def test_the_allowance_passes_another_summation_order_and_fails_a_wrong_kernel() -> None:
    inputs, eager, exact = product_at_large_scale()
    assert edges.reference_error([eager], [exact], float32_tolerance)[0] > 0  # eager itself misses it
    [scale] = eager_error.element_error_scale(lambda xs: [torch.relu(xs[0] @ xs[1])], inputs, [eager], [exact],
                                              float32_tolerance)
    assert scale is not None and scale.dtype == torch.float32 and scale.shape == exact.shape
    assert bool((scale[exact == 0] == 0).all())  # the relu's clipped zeros: no allowance
    assert bool((scale[exact != 0] > 0).all())
    sequential = torch.relu(sequential_matmul(*inputs))
    assert not compare(sequential, exact, 0, "output.0", {})["passed"]  # the plain tolerance rejects it
    assert compare(sequential, exact, 0, "output.0", {}, scale, 8.0)["passed"]
    # A leaky relu is wrong exactly where eager is exact; a shift beyond the allowance fails too.
    leaky = torch.nn.functional.leaky_relu(sequential_matmul(*inputs), 0.01)
    assert compare(leaky, exact, 0, "output.0", {}, scale, 8.0)["mismatches"] == int((exact == 0).sum())
    tolerance = 1e-4 + 1e-4 * exact.double().abs()
    shifted = torch.where(exact > 0, exact.double() + tolerance + 12 * scale.double(), exact.double()).float()
    assert compare(shifted, exact, 0, "output.0", {}, scale, 8.0)["mismatches"] == int((exact > 0).sum())
    assert compare(shifted, exact, 0, "output.0", {}, scale, 0.0)["mismatches"] > 0  # multiple 0: off


def test_where_eager_is_off_the_scale_is_at_least_the_outputs_median_there() -> None:
    inputs, eager, exact = product_at_large_scale()
    [scale] = eager_error.element_error_scale(lambda xs: [torch.relu(xs[0] @ xs[1])], inputs, [eager], [exact],
                                              float32_tolerance)
    off = (scale > 0) & (eager != exact)
    assert int(off.sum()) > 0 and float(scale[off].min()) == float(scale[off].median())


def test_a_forward_that_fails_on_perturbed_inputs_keeps_eagers_own_sample() -> None:
    inputs, eager, exact = product_at_large_scale()
    calls = []

    def fails(xs: list[torch.Tensor]) -> list[torch.Tensor]:
        calls.append(1)
        raise RuntimeError("user code")

    [scale] = eager_error.element_error_scale(fails, inputs, [eager], [exact], float32_tolerance)
    assert len(calls) == 1 and scale is not None
    error = (eager.double() - exact.double()).abs()  # the RMS of one sample
    sensitive = error > 0
    assert torch.allclose(scale[sensitive].double(), error[sensitive].clamp_min(float(error[sensitive].median())),
                          rtol=1e-6)


def test_perturbed_moves_float_inputs_by_one_unit_of_roundoff() -> None:
    gen = torch.Generator().manual_seed(0)
    x, idx = torch.ones(1000), torch.arange(3)
    moved, same = eager_error.perturbed([x, idx], torch.finfo(torch.float32).eps, gen)
    assert same is idx
    ulp = torch.finfo(torch.float32).eps
    assert set((moved - 1).tolist()) == {ulp, -ulp}  # 1 +- eps: one unit up, two spacings (eps / 2) down


def truncated_to_tf32(x: torch.Tensor) -> torch.Tensor:
    """x with its 13 low mantissa bits cleared (TF32 by truncation)."""
    return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)


def rounded_to_tf32(x: torch.Tensor) -> torch.Tensor:
    """x rounded to the nearest TF32 value (ties away), as codegen/triton/tf32_round.h."""
    return ((x.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def test_an_eager_that_rounds_to_tf32_is_sampled_at_tf32s_unit() -> None:
    # cuDNN's float32 convolutions run in TF32 by default: moving the inputs by one
    # float32 unit hardly changes such a result, so without the coarser unit every run
    # repeated eager's own error (0 wherever it happened to round exactly), and a TF32
    # kernel rounding another way failed a few of millions of elements (H100, 2026-12-06).
    gen = torch.Generator().manual_seed(1)
    w, x = torch.randn(64, 576, generator=gen) * 0.05, torch.randn(576, 512, generator=gen) * 1e4
    exact = (w.double() @ x.double()).float()

    def tf32_eager(xs: list[torch.Tensor]) -> list[torch.Tensor]:
        return [truncated_to_tf32(w) @ truncated_to_tf32(xs[0])]

    eager = tf32_eager([x])
    assert eager_error._reduced_precision([0], eager, tf32_eager([x * (1 + 2.0 ** -23)]), {0: exact.double()})
    [scale] = eager_error.element_error_scale(tf32_eager, [x], eager, [exact], float32_tolerance,
                                              coarse_eager=True)  # as the GPU runner on a CUDA device
    assert scale is not None and bool((scale > 0).all())
    rounded = rounded_to_tf32(w) @ rounded_to_tf32(x)  # another TF32 rounding of the same product
    assert compare(rounded, exact, 0, "output.0", {}, scale, 8.0)["passed"]
    # A float32 product is not mistaken for one: its moved runs vary as much as it errs.
    a, b = product_at_large_scale()[0]
    float32 = [a @ b]
    assert not eager_error._reduced_precision([0], float32, [(a * (1 + 2.0 ** -23)) @ b],
                                              {0: (a.double() @ b.double())})


def test_a_copied_input_beside_a_product_keeps_its_own_small_scale() -> None:
    # A fresh-clone review got a kernel adding 200 to the copied half of cat([a @ b, r])
    # accepted: r's moved runs differ by the move alone, and the output's median scale
    # (the product's) lifted it. Eager is exact there, so the floor does not apply.
    inputs, _, _ = product_at_large_scale()
    r = torch.randn(64, 8, generator=torch.Generator().manual_seed(3)) * 1e4

    def forward(xs: list[torch.Tensor]) -> list[torch.Tensor]:
        return [torch.cat([xs[0] @ xs[1], xs[2]], dim=1)]

    exact = torch.cat([inputs[0].double() @ inputs[1].double(), r.double()], dim=1).float()
    eager = forward(inputs + [r])
    [scale] = eager_error.element_error_scale(forward, inputs + [r], eager, [exact], float32_tolerance)
    copied = scale[:, 48:]
    assert float(copied.max()) < 1e-2 < float(scale[:, :48].median())
    wrong = exact.clone()
    wrong[:, 48:] += 200.0
    assert compare(wrong, exact, 0, "output.0", {}, scale, 8.0)["mismatches"] == r.numel()


def test_small_chunks_give_the_same_scales_and_a_sampled_median_stays_close(monkeypatch) -> None:
    """The element-wise passes run in CHUNK_ELEMENTS steps (a 537M-element output ran out
    of GPU memory in one): steps that split rows give the same scales, and a median taken
    over every k-th element (MEDIAN_SAMPLE) floors at nearly the same value."""
    inputs, eager, exact = product_at_large_scale()

    def scales() -> torch.Tensor:
        [scale] = eager_error.element_error_scale(lambda xs: [torch.relu(xs[0] @ xs[1])], inputs, [eager], [exact],
                                                  float32_tolerance)
        return scale

    whole = scales()
    monkeypatch.setattr(eager_error, "CHUNK_ELEMENTS", 7)  # not a divisor of the 48-wide rows
    assert torch.equal(scales(), whole)
    off = (whole > 0) & (eager != exact)
    monkeypatch.setattr(eager_error, "MEDIAN_SAMPLE", int(off.sum()) // 5)
    sampled = scales()
    floor_whole, floor_sampled = float(whole[off].min()), float(sampled[off].min())
    assert abs(floor_sampled - floor_whole) <= 0.25 * floor_whole
    assert torch.equal(sampled[~off], whole[~off])  # elements the floor does not cover keep their scale


def test_an_error_whose_square_passes_float32s_range_keeps_a_finite_scale() -> None:
    """Errors of ~1e22 (seventh powers of 1e4-scale inputs that cancel) square past
    float32's range: the sums of squares are float64, so the scale stays near the error
    instead of becoming float32's maximum (an allowance that accepts anything)."""
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(0)) * 1e4

    def run(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        return [(inputs[0] ** 7).sum(1) - (inputs[0] ** 7).flip(1).sum(1)]

    eager, exact = run([x]), [run([x.double()])[0].float()]
    [scale] = eager_error.element_error_scale(run, [x], eager, exact, float32_tolerance)
    assert scale is not None
    error = (eager[0].double() - exact[0].double()).abs()
    assert bool(torch.isfinite(scale).all()) and float(scale.max()) < 1e30
    assert float(scale.max()) >= float(error.max()) / 8  # of the order of eager's own error
