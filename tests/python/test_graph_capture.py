"""Graph capture: targets and schema-ordered args, through the worker and directly."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn as nn

from conftest import PROBLEMS_DIR, REPO_ROOT, WorkerProcess, load_params
from kernelevolve_worker import graph_capture
from kernelevolve_worker.core_aten import KEEP, core_aten_opset, is_allowed_target, is_core
from kernelevolve_worker.graph_capture import capture_graph

SMALL = {"batch_size": "2", "dim": "8"}


def calls(graph: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in graph["nodes"] if n["kind"] == "call"]


def args_of(node: dict[str, Any]) -> list[tuple[str, Any]]:
    """[(name, ref or value)] in schema order."""
    return [(a["name"], a.get("ref", a.get("value"))) for a in node["args"]]


def load_graph(worker: WorkerProcess, tmp_path: Path, problem: str) -> dict[str, Any]:
    result = worker.call("load_problem", load_params(PROBLEMS_DIR / f"{problem}.py", tmp_path, seeds=[0],
                                                     overrides=SMALL))
    assert result["graph_error"] is None
    return result["graph"]


def test_softsign_is_abs_add_div(worker: WorkerProcess, tmp_path: Path) -> None:
    graph = load_graph(worker, tmp_path, "softsign")
    placeholder = graph["nodes"][0]
    assert placeholder == {"name": "arg0_1", "kind": "placeholder", "abi_index": 0, "shape": [2, 8], "dtype": "float32"}
    abs_, add, div = calls(graph)
    assert [abs_["target"], add["target"], div["target"]] == ["aten.abs.default", "aten.add.Tensor", "aten.div.Tensor"]
    assert args_of(abs_) == [("self", "arg0_1")]
    assert args_of(add) == [("self", abs_["name"]), ("other", 1), ("alpha", 1)]
    assert args_of(div) == [("self", "arg0_1"), ("other", add["name"])]
    assert graph["outputs"] == [div["name"]]
    assert div["shape"] == [2, 8] and div["dtype"] == "float32"


def test_selu_is_elu_with_selu_constants(worker: WorkerProcess, tmp_path: Path) -> None:
    (elu,) = calls(load_graph(worker, tmp_path, "selu"))
    assert elu["target"] == "aten.elu.default"
    args = dict(args_of(elu))
    assert list(args) == ["self", "alpha", "scale", "input_scale"]
    assert args["alpha"] == pytest.approx(1.6732632423543772)
    assert args["scale"] == pytest.approx(1.0507009873554805)
    assert args["input_scale"] == 1


def test_elu_fills_schema_defaults(worker: WorkerProcess, tmp_path: Path) -> None:
    (elu,) = calls(load_graph(worker, tmp_path, "elu"))
    assert args_of(elu) == [("self", "arg0_1"), ("alpha", 1.0), ("scale", 1), ("input_scale", 1)]


def test_softmax_and_log_softmax_dims(worker: WorkerProcess, tmp_path: Path) -> None:
    (softmax,) = calls(load_graph(worker, tmp_path, "softmax"))
    assert softmax["target"] == "aten._softmax.default"
    assert args_of(softmax) == [("self", "arg0_1"), ("dim", 1), ("half_to_float", False)]
    (log_softmax,) = calls(load_graph(worker, tmp_path, "log_softmax"))
    assert log_softmax["target"] == "aten._log_softmax.default"
    assert args_of(log_softmax) == [("self", "arg0_1"), ("dim", 1), ("half_to_float", False)]


def test_keyword_only_and_init_args(worker: WorkerProcess, tmp_path: Path) -> None:
    (gelu,) = calls(load_graph(worker, tmp_path, "gelu_tanh"))
    assert args_of(gelu) == [("self", "arg0_1"), ("approximate", "tanh")]
    (gelu_exact,) = calls(load_graph(worker, tmp_path, "gelu"))
    assert args_of(gelu_exact) == [("self", "arg0_1"), ("approximate", "none")]
    (leaky,) = calls(load_graph(worker, tmp_path, "leaky_relu"))
    assert args_of(leaky) == [("self", "arg0_1"), ("negative_slope", 0.01)]
    (hardtanh,) = calls(load_graph(worker, tmp_path, "hardtanh"))
    assert args_of(hardtanh) == [("self", "arg0_1"), ("min_val", -1.0), ("max_val", 1.0)]


# ---- direct captures of shapes the problem set does not cover -----------------------------


class _Fn(nn.Module):
    def __init__(self, fn: Any) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.fn(*xs)


def test_list_args_getitem_nonfinite_and_dtype_constants() -> None:
    def fn(x: torch.Tensor) -> Any:
        values, indices = torch.max(x, dim=1)
        return torch.cat([values, x.sum(1)]), indices, x.masked_fill(x > 0, -math.inf), x.to(torch.float64)

    graph, error = capture_graph(_Fn(fn), [torch.randn(3, 4)])
    assert error is None
    by_target = {n["target"]: n for n in calls(graph)}
    assert by_target["aten.max.dim"]["output_shapes"] == [[3], [3]]
    assert by_target["aten.max.dim"]["output_dtypes"] == ["float32", "int64"]
    getitems = [n for n in calls(graph) if n["target"] == "getitem"]
    assert [args_of(n)[1] for n in getitems] == [("index", 0), ("index", 1)]
    cat_tensors = by_target["aten.cat.default"]["args"][0]
    assert cat_tensors["name"] == "tensors"
    assert cat_tensors["value"] == [{"ref": getitems[0]["name"]}, {"ref": "sum_1"}]
    # masked_fill is not Core ATen: it arrives as where(mask, scalar_tensor(-inf), x)
    assert dict(args_of(by_target["aten.scalar_tensor.default"]))["s"] == "-inf"
    assert "aten.where.self" in by_target
    assert dict(args_of(by_target["aten._to_copy.default"]))["dtype"] == "float64"
    assert len(graph["outputs"]) == 4


def test_tensor_constant_outside_state_dict_is_reported() -> None:
    class WithConstant(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + torch.tensor([1.0, 2.0])

    graph, error = capture_graph(WithConstant(), [torch.randn(3, 2)])
    assert graph is None
    assert "not in state_dict()" in error and "register_buffer" in error


def test_capture_does_not_mutate_inputs() -> None:
    x = torch.randn(2, 3)
    before = x.clone()
    graph, error = capture_graph(_Fn(lambda t: t.relu_()), [x])
    assert error is None and graph is not None
    assert torch.equal(x, before)


# ---- Core ATen capture (core_aten.py) ------------------------------------------------------


def _targets(graph: dict[str, Any]) -> list[str]:
    return [n["target"] for n in calls(graph)]


def test_linear_captures_as_core_permute_and_addmm() -> None:
    graph, error = capture_graph(nn.Linear(8, 4), [torch.randn(3, 8)])
    assert error is None
    targets = _targets(graph)
    assert targets == ["aten.permute.default", "aten.addmm.default"]
    assert "aten.t.default" not in targets
    permute = calls(graph)[0]
    assert dict(args_of(permute))["dims"] == [1, 0]


def test_keep_ops_stay_whole() -> None:
    for module, target in [(nn.SiLU(), "aten.silu.default"), (nn.Hardswish(), "aten.hardswish.default")]:
        graph, error = capture_graph(module, [torch.randn(3, 8)])
        assert error is None
        assert target in KEEP
        assert _targets(graph) == [target]


def test_sdpa_is_kept_whole_or_decomposes_into_core_ops() -> None:
    sdpa = torch.nn.functional.scaled_dot_product_attention
    flash = "aten._scaled_dot_product_flash_attention_for_cpu.default"
    # One head size: the CPU flash node, kept whole (KEEP) for the attention family.
    q = torch.randn(1, 2, 8, 4)
    graph, error = capture_graph(_Fn(sdpa), [q, q.clone(), q.clone()])
    assert error is None
    assert set(_targets(graph)) == {flash, "getitem"} and flash in KEEP
    # v's head size differs: PyTorch takes its math path, which decomposes into core ops.
    graph, error = capture_graph(_Fn(sdpa), [q, q.clone(), torch.randn(1, 2, 8, 6)])
    assert error is None
    targets = set(_targets(graph))
    assert "aten.bmm.default" in targets and "aten._softmax.default" in targets
    assert not any("scaled_dot_product" in t for t in targets)
    assert all(is_core(t) or t in KEEP for t in targets)  # _unsafe_view is kept


def test_mlp_targets_are_core_or_kept() -> None:
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8)).eval()
    graph, error = capture_graph(model, [torch.randn(4, 8)])
    assert error is None
    targets = _targets(graph)
    assert targets.count("aten.addmm.default") == 2 and "aten.gelu.default" in targets
    assert all(is_core(t) or t in KEEP for t in targets), targets


def test_core_aten_opset_lists_core_overloads() -> None:
    opset = dict(core_aten_opset())
    assert opset["aten.add"] == ["Scalar", "Tensor"]
    assert "default" in opset["aten.convolution"]
    assert "aten.t" not in opset and "aten.silu" not in opset
    assert list(opset) == sorted(opset)


def test_keep_covers_the_non_core_ops_the_cpp_lowerings_match() -> None:
    """Every non-core "aten.X.Y" named by the compound-op lowerings in
    src/operators/{template,ir}/*.cpp is in KEEP, except the views t / transpose, whose
    Core ATen form (permute) the matmul matcher accepts (core_aten.py says why). The
    generic Core ATen lowering (ir/lower_core*.cpp) is left out: it lowers the core
    opset, and the non-core aliases it also accepts must not stop a decomposition."""
    named = set()
    for folder in ("template", "ir"):
        for source in (REPO_ROOT / "src" / "operators" / folder).glob("*.cpp"):
            if source.name.startswith("lower_core"):
                continue
            named |= set(re.findall(r'"(aten\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+)"', source.read_text()))
    assert named, "no aten names found in the C++ sources"
    missing = sorted(t for t in named if not is_core(t) and t not in KEEP
                     and t not in ("aten.t.default", "aten.transpose.int"))
    assert missing == []


def test_python_number_made_a_tensor_constant_is_reported_as_such() -> None:
    class ItemAssignment(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x.clone()
            y[0] = 3.0
            return y

    graph, error = capture_graph(ItemAssignment(), [torch.randn(16)])
    assert graph is None
    assert "makes a Python number into a tensor constant" in error and "3.0" in error
    assert "register_buffer" not in error


def test_a_device_trace_with_a_backend_specific_op_is_traced_again_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    # KE_REFERENCE_DEVICE=cuda traced F.scaled_dot_product_attention into
    # aten._scaled_dot_product_efficient_attention and nn.LSTM into cuDNN (make_fx failed on
    # its flat weights): both ended unsupported on an H100 (2026-12-06). The CPU trace of
    # the same model records the portable spellings.

    def node(target: str) -> dict[str, Any]:
        return {"name": "n", "kind": "call", "target": target}

    cuda_sdpa = {"nodes": [node("aten._scaled_dot_product_efficient_attention.default"), node("getitem")],
                 "outputs": []}
    assert graph_capture.device_specific_ops(cuda_sdpa) == ["aten._scaled_dot_product_efficient_attention.default"]
    portable = {"nodes": [node("aten._scaled_dot_product_flash_attention_for_cpu.default"), node("aten.addmm.default")],
                "outputs": []}
    assert graph_capture.device_specific_ops(portable) == []
    device_model, cpu_model = nn.Identity(), nn.Identity()
    traced: list[nn.Module] = []
    answers = {id(device_model): (cuda_sdpa, None), id(cpu_model): (portable, None)}

    def fake_capture(model: nn.Module, inputs: list[torch.Tensor]) -> tuple[dict[str, Any] | None, str | None]:
        traced.append(model)
        return answers[id(model)]

    monkeypatch.setattr(graph_capture, "capture_graph", fake_capture)
    x = [torch.zeros(1)]
    assert graph_capture.capture_portable_graph(device_model, x, cpu_model, x) == (portable, None)
    assert traced == [device_model, cpu_model]
    traced.clear()
    answers[id(device_model)] = (None, "make_fx failed: NotImplementedError: argument of type: UntypedStorage")
    assert graph_capture.capture_portable_graph(device_model, x, cpu_model, x) == (portable, None)
    traced.clear()
    answers[id(device_model)] = (portable, None)  # portable already: no second forward()
    assert graph_capture.capture_portable_graph(device_model, x, cpu_model, x) == (portable, None)
    assert traced == [device_model]
    answers[id(device_model)] = (cuda_sdpa, None)  # no CPU copy given: the device's trace stands
    assert graph_capture.capture_portable_graph(device_model, x) == (cuda_sdpa, None)


def test_the_nodes_of_a_recurrent_layer_carry_the_cudnn_backend_and_others_do_not() -> None:
    # On CUDA eager runs an nn.LSTM whole in cuDNN (TF32 under cudnn.allow_tf32), while
    # the Linear after it is a cuBLAS addmm under the matmul flag.
    class LstmHead(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y, _ = self.lstm(x)
            return self.head(y[:, -1])

    model = LstmHead().eval()
    graph, error = capture_graph(model, [torch.randn(2, 3, 8)])
    assert error is None
    products = [n for n in calls(graph) if n["target"] in ("aten.mm.default", "aten.addmm.default")]
    inside = [n for n in products if n.get("backend") == "cudnn"]
    outside = [n for n in products if "backend" not in n]
    assert len(inside) >= 2 * 3, "the gate products of 2 layers x 3 steps"
    assert len(outside) == 1, "the head's addmm follows the matmul flag"
    assert all(n.get("backend") in (None, "cudnn") for n in graph["nodes"])
    # The layer's own forward is restored after tracing.
    assert "forward" not in model.lstm.__dict__
    assert torch.isfinite(model(torch.randn(2, 3, 8))).all()


def test_a_subclass_of_a_recurrent_layer_is_not_marked() -> None:
    # A subclass's forward may add ops cuDNN does not run (a projection head): its
    # products keep the matmul flag's precision.
    class ProjectedLstm(nn.LSTM):
        def __init__(self) -> None:
            super().__init__(8, 8, batch_first=True)
            self.proj = nn.Linear(8, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
            return self.proj(super().forward(x)[0])

    graph, error = capture_graph(ProjectedLstm().eval(), [torch.randn(2, 3, 8)])
    assert error is None
    assert not [n for n in graph["nodes"] if "backend" in n]


# ---- in-place calls through aliases ----------------------------------------------------------


class _TwinReading(torch.fx.Interpreter):
    """Runs a traced graph the way the C++ lowering reads it: every in-place call as its
    out-of-place twin, every view as a fresh copy, so no two values share memory."""

    def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
        schema = getattr(target, "_schema", None)
        if schema is not None and schema.arguments and schema.arguments[0].alias_info is not None \
                and schema.arguments[0].alias_info.is_write:
            name = schema.name.split("::")[1]
            twin = getattr(torch.ops.aten, name.rstrip("_"))
            target = getattr(twin, target._overloadname)
        result = super().call_function(target, args, kwargs)
        if isinstance(result, torch.Tensor):
            return result.clone()
        if isinstance(result, (tuple, list)):
            return type(result)(r.clone() if isinstance(r, torch.Tensor) else r for r in result)
        return result


def _mutates_the_base_of_a_view(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    y[0:2].add_(1)
    return y


def _reads_a_view_taken_before_its_base_changed(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    v = y[:, 1:3]
    y.mul_(3)
    return v + 0


def _mutates_an_input_through_a_view(x: torch.Tensor) -> torch.Tensor:
    x[1].mul_(-1)
    return x + 1


def _writes_out_into_a_slice(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    torch.mul(x[0:2], 3, out=y[0:2])
    return y


@pytest.mark.parametrize("fn", [_mutates_the_base_of_a_view, _reads_a_view_taken_before_its_base_changed,
                                _mutates_an_input_through_a_view, _writes_out_into_a_slice],
                         ids=lambda f: f.__name__.strip("_"))
def test_an_in_place_call_through_a_view_is_captured_functionally(fn: Any) -> None:
    model = _Fn(fn)
    x = torch.randn(4, 5)
    plain = graph_capture.trace_aten(model, [x])
    assert graph_capture.mutation_through_alias(plain) is not None
    assert not torch.equal(_TwinReading(plain).run(x.clone()), fn(x.clone())), "the plain trace read as twins is wrong"
    gm = graph_capture.trace_core_aten(model, [x])
    assert graph_capture.mutation_through_alias(gm) is None
    torch.testing.assert_close(_TwinReading(gm).run(x.clone()), fn(x.clone()), rtol=0, atol=0)
    graph, error = capture_graph(model, [x])
    assert error is None and graph is not None
    assert sorted(t for t in _targets(graph) if not is_allowed_target(t)) == []


def test_in_place_calls_the_dataflow_carries_are_not_functionalized() -> None:
    # Rebinding carries these: the mutated tensor itself is read after, or the chunks of a
    # split (which do not overlap) each mutated and read; nn.LSTM records such calls too.
    def chunks(x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, 1)
        a.sigmoid_()
        b.tanh_()
        return a * b

    for model, x in [(_Fn(lambda t: t.relu_() * 3), torch.randn(3, 4)), (_Fn(chunks), torch.randn(3, 4)),
                     (nn.LSTM(4, 6, batch_first=True).eval(), torch.randn(2, 3, 4))]:
        gm = graph_capture.trace_aten(model, [x])
        assert graph_capture.mutation_through_alias(gm) is None
        assert any(re.fullmatch(r"aten\.\w+[^_]_\.\w+", str(n.target)) for n in gm.graph.nodes)
        assert graph_capture.trace_core_aten(model, [x]).code == gm.code


def test_a_forward_that_writes_its_own_parameter_is_refused_by_name() -> None:
    # make_fx reads the weight again through a second get_attr node, which the in-place
    # zeroing does not reach: the graph would drop it. Refused, naming the parameter.
    class ZeroesARow(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(6, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            with torch.no_grad():
                self.lin.weight[0].zero_()
            return self.lin(x)

    graph, error = capture_graph(ZeroesARow().eval(), [torch.randn(3, 6)])
    assert graph is None
    assert error is not None and "lin.weight" in error and "in place" in error


def _adds_a_shifted_view_of_itself(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    y[:, 1:] += y[:, :-1]
    return y


def _writes_out_into_a_shifted_view(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    torch.add(y[:, :-1], 1, out=y[:, 1:])
    return y


def _adds_through_the_result_of_an_in_place_call(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    z = y.add_(1)
    z[:, 1:].add_(y[:, :-1])
    return y


@pytest.mark.parametrize("fn", [_adds_a_shifted_view_of_itself, _writes_out_into_a_shifted_view,
                                _adds_through_the_result_of_an_in_place_call], ids=lambda f: f.__name__.strip("_"))
def test_an_in_place_call_reading_elements_it_writes_elsewhere_is_refused(fn: Any) -> None:
    # Eager's answer depends on the order its loop visits the elements (a sequential loop
    # turns y[:, 1:] += y[:, :-1] into a running sum); the functional reading (all reads,
    # then all writes) differs from it, so no captured graph can be checked against it.
    x = torch.randn(4, 6)
    functional = graph_capture.trace_aten(_Fn(fn), [x], functional=True)
    assert not torch.equal(_TwinReading(functional).run(x.clone()), fn(x.clone()))
    assert graph_capture.overlapping_in_place(graph_capture.trace_aten(_Fn(fn), [x])) is not None
    graph, error = capture_graph(_Fn(fn), [x])
    assert graph is None
    assert error is not None and "writes slice_" in error and "leaves unspecified" in error, error
    assert ".clone()" in error


def test_in_place_calls_on_disjoint_or_identical_elements_are_captured() -> None:
    # Two slices of one buffer that do not overlap, a tensor added to itself, and a slice
    # of a buffer updated from another buffer: each element reads only itself or other memory.
    def disjoint(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y[:, :2] += y[:, 2:4]
        y.add_(y)
        y[1:].mul_(x[:-1])
        return y

    x = torch.randn(4, 6)
    assert graph_capture.overlapping_in_place(graph_capture.trace_aten(_Fn(disjoint), [x])) is None
    gm = graph_capture.trace_core_aten(_Fn(disjoint), [x])
    torch.testing.assert_close(_TwinReading(gm).run(x.clone()), disjoint(x.clone()), rtol=0, atol=0)


def test_calls_that_write_where_their_indices_say_are_not_refused() -> None:
    # index_put_ writes only the columns cols; column 0, which it reads, is none of them:
    # eager's result is well defined and the functional reading gives it.
    def index_put(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        cols = torch.arange(3, 6)
        y[:, cols] = y[:, 0:1]
        return y

    x = torch.randn(8, 6)
    assert graph_capture.overlapping_in_place(graph_capture.trace_aten(_Fn(index_put), [x])) is None
    graph, error = capture_graph(_Fn(index_put), [x])
    assert error is None and graph is not None
