"""Which ATen operators a captured graph is made of, and why (issue 17).

The reference is captured into PyTorch's Core ATen IR: the ~190 operator overloads
tagged ``torch.Tag.core``, "a subset of ATen operators that can be used to compose
other operators", which a backend must implement to run every program PyTorch's
decompositions produce (https://docs.pytorch.org/docs/stable/torch.compiler_ir.html).
make_fx is given ``torch._decomp.core_aten_decompositions()``, the table that rewrites
a non-core op into core ones (``aten.t`` into ``aten.permute``, ``aten.silu`` into
``sigmoid`` and ``mul``, SDPA's math path into matmuls and a softmax), so the C++ generic
lowering needs to cover only that opset to compile any captured graph.

One exception, :data:`KEEP`: the non-core ops the existing C++ lowerings
(src/operators/template/*.cpp, src/operators/ir/*.cpp) match by name, such as
``aten.silu.default`` (a fused pointwise rule) or ``aten.baddbmm.default`` (the
matmul family). They are left out of the table, so a problem that used them keeps
its graph, and the native lowering of the compound op, unchanged.
"""

from __future__ import annotations

import functools
from typing import Callable

import torch
from torch._ops import OpOverload

CORE_ATEN_IR_DOCS = "https://docs.pytorch.org/docs/stable/torch.compiler_ir.html"

# Non-core ATen overloads matched by name in src/operators/template/*.cpp and
# src/operators/ir/*.cpp (derived with
#   grep -rhoE '"aten\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+"' src/operators/template src/operators/ir
# keeping the overloads not tagged torch.Tag.core). Written as str(OpOverload).
# Only those with a real kernel and a core_aten_decompositions() entry change what
# make_fx records (silu, hardswish, clamp_min, sum.default, ...); the
# CompositeImplicitAutograd ones (linear, matmul, softmax.int, reshape, ...) are
# decomposed by the dispatcher before make_fx sees them whatever the table says, and
# the ones without a table entry (cumprod, native_batch_norm, ...) are recorded as
# they are. All are listed so the set is the C++ side's whole non-core vocabulary.
#
# Deliberately NOT kept: aten.t.default and aten.transpose.int. They are views whose
# Core ATen form is aten.permute.default, which triton_matmul_graph.cpp (their only
# consumer) accepts alike (SwapsTwoDims: dims [1, 0]), so a Linear is captured as
# permute + addmm.
KEEP: frozenset[str] = frozenset({
    # views and copies (lower_graph.cpp's view set, pointwise identity rules)
    "aten._unsafe_view.default",
    "aten.contiguous.default",
    "aten.detach.default",
    "aten.flatten.using_ints",
    "aten.reshape.default",
    "aten.squeeze.default",
    # pointwise rules (pointwise_rules.cpp, triton_expr.cpp, cuda_pointwise.cpp)
    "aten.add_.Scalar",
    "aten.celu.default",
    "aten.clamp_max.default",
    "aten.clamp_min.default",
    "aten.hardshrink.default",
    "aten.hardsigmoid.default",
    "aten.hardswish.default",
    "aten.mish.default",
    "aten.rsub.Scalar",
    "aten.rsub.Tensor",
    "aten.silu.default",
    "aten.softplus.default",
    "aten.softshrink.default",
    "aten.square.default",
    "aten.threshold.default",
    "aten.xlogy.Tensor",
    # reductions, norms, losses (lower_compound.cpp, rowwise/softmax templates)
    "aten.huber_loss.default",
    "aten.linalg_vector_norm.default",
    "aten.log_softmax.int",
    "aten.max.default",
    "aten.min.default",
    "aten.mse_loss.default",
    "aten.native_batch_norm.default",
    "aten.nll_loss_forward.default",
    "aten.smooth_l1_loss.default",
    "aten.softmax.int",
    "aten.std.correction",
    "aten.std.dim",
    "aten.sum.default",
    # scans (scan_graph.cpp)
    "aten.cummax.default",
    "aten.cummin.default",
    "aten.cumprod.default",
    "aten.logcumsumexp.default",
    # matmul family (triton_matmul_graph.cpp)
    "aten.baddbmm.default",
    "aten.linear.default",
    "aten.matmul.default",
    # pooled embedding lookup (ir/embedding_bag.cpp), the inference-only overload
    "aten._embedding_bag_forward_only.default",
    # segment ids of a jagged segment sum (ir/index_add.cpp); a data-dependent size,
    # which core_aten_decompositions() leaves as it is
    "aten.repeat_interleave.Tensor",
    # the in-place accumulation out.index_add_ records on a fresh tensor (ir/index_add.cpp);
    # in-place ops are recorded as they are
    "aten.index_put_.default",
    # sort and unique families (ir/sort.cpp, ir/unique.cpp): a stable sort and unique
    # with inverse / counts, which core_aten_decompositions() leaves as they are
    "aten._unique2.default",
    "aten.sort.stable",
    # adaptive max pooling (lower_core_heavy.cpp): not core, and the table leaves it as it is
    "aten.adaptive_max_pool2d.default",
    "aten.adaptive_max_pool3d.default",
    # the in-place transpose nn.GRU / nn.RNN with batch_first=True record (lower_core_layout.cpp)
    "aten.transpose_.default",
    # attention (lower_core_heavy.cpp, ir/attention.cpp): what F.scaled_dot_product_attention
    # dispatches to for float32 4-d inputs of one head size on the CPU; kept whole so the
    # attention family can fuse it (its decomposition is the explicit math spelling)
    "aten._scaled_dot_product_flash_attention_for_cpu.default",
    # resampling (lower_core_sample.cpp): F.interpolate(mode="bilinear") captures to
    # this non-core overload, which core_aten_decompositions() leaves as it is
    "aten.upsample_bilinear2d.default",
})

# Core overloads that core_aten_decompositions() nevertheless rewrites into other core
# ops (aten.squeeze.dim -> squeeze.dims, aten.var.dim -> var.correction). The C++
# matches these names too, so they are kept for the same reason as KEEP.
KEEP_CORE: frozenset[str] = frozenset({"aten.squeeze.dim", "aten.var.dim"})


def is_core(target: str) -> bool:
    """True when ``target`` ("aten.add.Tensor") names an overload tagged torch.Tag.core."""
    overload = _overload(target)
    return overload is not None and torch.Tag.core in overload.tags


def is_allowed_target(target: str) -> bool:
    """True for a call target a captured graph may hold: a Core ATen overload, a
    :data:`KEEP` op, ``"getitem"`` (one result of a multi-output op), or the in-place
    spelling of one of those (``aten.sigmoid_.default``: make_fx records the in-place
    calls of nn.LSTM / nn.GRU cells as such; the C++ lowering reads each as its
    out-of-place twin, src/operators/ir/lower_core.cpp)."""
    if target == "getitem" or target in KEEP or is_core(target):
        return True
    twin = out_of_place(target)
    return twin is not None and (twin in KEEP or is_core(twin))


def out_of_place(target: str) -> str | None:
    """The out-of-place twin of an in-place spelling ("aten.sigmoid_.default" ->
    "aten.sigmoid.default"), as the C++ lowering reads it (OutOfPlace in
    src/operators/ir/lower_graph.cpp); None for any other target (dunder ops such as
    "aten.__rshift__.Scalar" are not in-place)."""
    namespace, _, rest = target.partition(".")
    op, _, overload = rest.partition(".")
    if len(op) > 1 and op.endswith("_") and not op.endswith("__"):
        return f"{namespace}.{op[:-1]}.{overload}"
    return None


def _overload(target: str) -> OpOverload | None:
    namespace, _, rest = target.partition(".")
    op, _, overload = rest.partition(".")
    if namespace != "aten" or not op:
        return None
    packet = getattr(torch.ops.aten, op, None)
    return getattr(packet, overload or "default", None) if packet is not None else None


def core_aten_opset() -> list[tuple[str, list[str]]]:
    """The installed torch's Core ATen opset: sorted [("aten.add", ["Scalar", "Tensor"]), ...],
    every ATen overload tagged torch.Tag.core, grouped by operator (OpOverloadPacket)."""
    ops: dict[str, list[str]] = {}
    for qualified in torch._C._dispatch_get_all_op_names():
        if not qualified.startswith("aten::"):
            continue
        op, _, overload = qualified[len("aten::"):].partition(".")
        overload = overload or "default"
        if is_core(f"aten.{op}.{overload}"):
            ops.setdefault(f"aten.{op}", []).append(overload)
    return sorted((name, sorted(overloads)) for name, overloads in ops.items())


@functools.cache
def _table() -> dict[OpOverload, Callable]:
    kept = KEEP | KEEP_CORE
    return {op: fn for op, fn in torch._decomp.core_aten_decompositions().items() if str(op) not in kept}


def decomposition_table() -> dict[OpOverload, Callable]:
    """make_fx's decomposition_table: core_aten_decompositions() without KEEP and
    KEEP_CORE (a fresh dict; the underlying one is built once per process)."""
    return dict(_table())
