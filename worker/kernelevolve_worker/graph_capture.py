"""ATen-level op graph of the reference, captured with make_fx (real tensors).

The graph is in the Core ATen opset (ops tagged torch.Tag.core) plus the compound ops
the C++ lowerings match natively: core_aten.py says which ops and why.

The JSON document (parsed by src/core/op_graph.cpp)::

    {"nodes": [
       {"name": "arg0_1", "kind": "placeholder", "abi_index": 0, "shape": [..], "dtype": "float32"},
       {"name": "_param_constant0", "kind": "parameter", "abi_index": 1, "shape": .., "dtype": ..},
       {"name": "elu", "kind": "call", "target": "aten.elu.default",
        "args": [{"name": "self", "ref": "arg0_1"}, {"name": "alpha", "value": 1.0}, ...],
        "shape": [..], "dtype": ".."}],
     "outputs": ["elu"]}

Call args follow the op schema's argument order with defaults filled in. Constant
values are JSON numbers, bools, strings, null or lists; torch dtypes are written as
names ("float32"), devices/layouts/memory formats as strings, non-finite floats as
"inf", "-inf", "nan". A node inside a list argument (e.g. aten.cat's tensors) is
written as {"ref": "<node name>"} inside the value list. operator.getitem on a
multi-output op is a call with target "getitem" and args self (ref) and index.
A node producing several tensors carries the first one's shape/dtype plus
"output_shapes"/"output_dtypes" for all of them. A call traced inside an nn.RNN,
nn.LSTM or nn.GRU carries "backend": "cudnn": on CUDA eager PyTorch runs such a layer
whole in cuDNN, so its products follow torch.backends.cudnn.allow_tf32 where the same
addmm elsewhere follows the matmul flag (src/operators/codegen/triton/main_loop_triton.h,
ReferenceRunsInTf32).
"""

from __future__ import annotations

import contextlib
import math
import operator
from typing import Any, Iterator

import torch
import torch.fx.traceback as fx_traceback
from torch.fx import Node
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils._pytree import tree_leaves

from .core_aten import decomposition_table
from .problem_loader import dtype_name, exception_line


class GraphCaptureError(Exception):
    """The graph could not be captured or expressed; the message says why."""


def _json_value(value: Any) -> Any:
    """A schema argument value as JSON (see module docstring)."""
    if isinstance(value, Node):
        return {"ref": value.name}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, torch.dtype):
        return dtype_name(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, (torch.device, torch.layout, torch.memory_format)):
        return str(value)
    raise GraphCaptureError(f"constant argument of type {type(value).__name__} ({value!r}) "
                            "cannot be written as JSON")


def _arg_entry(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, Node):
        return {"name": name, "ref": value.name}
    return {"name": name, "value": _json_value(value)}


def _schema_args(node: Node) -> list[dict[str, Any]]:
    """One entry per schema argument of an OpOverload call, schema order, defaults filled."""
    schema = node.target._schema
    entries = []
    positional = list(node.args)
    for index, arg in enumerate(schema.arguments):
        if not arg.kwarg_only and index < len(positional):
            value = positional[index]
        elif arg.name in node.kwargs:
            value = node.kwargs[arg.name]
        elif arg.has_default_value():
            value = arg.default_value
        else:
            raise GraphCaptureError(f"{node.target}: no value for schema argument '{arg.name}'")
        entries.append(_arg_entry(arg.name, value))
    return entries


def _meta(value: Any, what: str) -> dict[str, Any]:
    """shape/dtype of a node's value (a tensor, or a tuple of tensors)."""
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": dtype_name(value.dtype)}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return {"shape": list(value[0].shape), "dtype": dtype_name(value[0].dtype),
                "output_shapes": [list(v.shape) for v in value],
                "output_dtypes": [dtype_name(v.dtype) for v in value]}
    raise GraphCaptureError(f"{what} produces a {type(value).__name__}, not a tensor")


def _find_parameter(tensor: torch.Tensor, state: list[torch.Tensor]) -> int | None:
    """Index in ``state`` of the same tensor: by identity, else by data_ptr + shape +
    stride + dtype (state_dict() returns detached aliases of the parameters)."""
    for index, candidate in enumerate(state):
        if candidate is tensor:
            return index
    for index, candidate in enumerate(state):
        if (candidate.data_ptr() == tensor.data_ptr() and candidate.shape == tensor.shape
                and candidate.stride() == tensor.stride() and candidate.dtype == tensor.dtype):
            return index
    return None


def _node_entry(gm: torch.fx.GraphModule, node: Node, state: list[torch.Tensor],
                num_inputs: int, placeholder_index: int) -> dict[str, Any]:
    if node.op == "placeholder":
        return {"name": node.name, "kind": "placeholder", "abi_index": placeholder_index,
                **_meta(node.meta.get("val"), f"placeholder {node.name}")}
    if node.op == "get_attr":
        tensor = getattr(gm, node.target)
        index = _find_parameter(tensor, state) if isinstance(tensor, torch.Tensor) else None
        if index is None and isinstance(tensor, torch.Tensor) and tensor.dim() == 0:
            raise GraphCaptureError(
                f"forward() makes a Python number into a tensor constant ({node.name}, 0-d, value "
                f"{tensor.item()!r}), e.g. by an item assignment `x[i] = 3.0` or torch.tensor(3.0) inside "
                "forward(); such constants are not captured: write the value with an op on the inputs "
                "(torch.full_like, masked_fill, torch.where) or pass it as an input")
        if index is None:
            shape = list(tensor.shape) if isinstance(tensor, torch.Tensor) else "?"
            raise GraphCaptureError(
                f"forward() uses a tensor constant ({node.name}, shape {shape}) that is not in "
                "state_dict(); register it with self.register_buffer() to make it an ABI input")
        return {"name": node.name, "kind": "parameter", "abi_index": num_inputs + index,
                **_meta(tensor, node.name)}
    if node.op == "call_function":
        if node.target is operator.getitem:
            source, index = node.args
            args = [_arg_entry("self", source), _arg_entry("index", index)]
            return {"name": node.name, "kind": "call", "target": "getitem", "args": args,
                    **_meta(node.meta.get("val"), node.name)}
        if not hasattr(node.target, "_schema"):
            raise GraphCaptureError(f"call to {node.target} is not an ATen operator")
        entry = {"name": node.name, "kind": "call", "target": str(node.target),
                 "args": _schema_args(node), **_meta(node.meta.get("val"), node.name)}
        backend = (node.meta.get("custom") or {}).get(BACKEND_ANNOTATION)
        if backend:
            entry["backend"] = backend
        return entry
    raise GraphCaptureError(f"unexpected FX node {node.name} of kind {node.op}")


def graph_to_json(gm: torch.fx.GraphModule, state: list[torch.Tensor], num_inputs: int) -> dict[str, Any]:
    """The JSON document (module docstring) of a make_fx GraphModule.

    Args:
        gm: the traced module.
        state: the model's state_dict() tensors, in state_dict() order.
        num_inputs: number of forward() inputs (parameters' abi_index starts there).
    Raises:
        GraphCaptureError: a node that cannot be expressed (tensor constants outside
            state_dict, non-ATen calls, unserializable constants).
    """
    nodes: list[dict[str, Any]] = []
    outputs: list[str] = []
    placeholders = 0
    for node in gm.graph.nodes:
        if node.op == "output":
            for leaf in tree_leaves(node.args[0]):
                if not isinstance(leaf, Node):
                    raise GraphCaptureError(f"forward() output {leaf!r} is not a traced tensor")
                outputs.append(leaf.name)
            continue
        nodes.append(_node_entry(gm, node, state, num_inputs, placeholders))
        placeholders += node.op == "placeholder"
    if placeholders != num_inputs:
        raise GraphCaptureError(f"traced graph has {placeholders} placeholders for {num_inputs} inputs")
    return {"nodes": nodes, "outputs": outputs}


# Ops a trace on a CUDA device records where a trace on the CPU records portable ones
# (F.scaled_dot_product_attention dispatches to a CUDA backend's own kernel, nn.LSTM/GRU
# to cuDNN, whose flat weight buffer make_fx cannot even trace): the C++ lowerings know
# the CPU spellings (core_aten.KEEP), so such a graph is captured again on the CPU.
DEVICE_SPECIFIC_PREFIXES = ("aten._scaled_dot_product_efficient_attention", "aten._scaled_dot_product_flash_attention.",
                            "aten._scaled_dot_product_cudnn_attention", "aten._efficient_attention",
                            "aten._flash_attention", "aten._cudnn", "aten.cudnn", "aten.miopen", "aten._thnn_fused")


def device_specific_ops(graph: dict[str, Any]) -> list[str]:
    """The targets of ``graph``'s call nodes that only one device backend records
    (DEVICE_SPECIFIC_PREFIXES), sorted, each once."""
    return sorted({n["target"] for n in graph["nodes"] if n.get("kind") == "call"
                   and str(n.get("target", "")).startswith(DEVICE_SPECIFIC_PREFIXES)})


def capture_portable_graph(device_model: torch.nn.Module, device_inputs: list[torch.Tensor],
                           cpu_model: torch.nn.Module | None = None,
                           cpu_inputs: list[torch.Tensor] | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """capture_graph on the reference's device, then, when that fails or records a
    device-specific op (device_specific_ops) and a CPU copy is given, capture_graph of
    the CPU copy: one more forward() on the CPU, paid only by graphs that need it.

    Args:
        device_model, device_inputs: the reference and its inputs where it runs.
        cpu_model, cpu_inputs: the same on the CPU; None when the reference runs there.
    Returns:
        As capture_graph.
    """
    graph, error = capture_graph(device_model, device_inputs)
    if cpu_model is None or cpu_inputs is None or (graph is not None and not device_specific_ops(graph)):
        return graph, error
    return capture_graph(cpu_model, cpu_inputs)


# The fx annotation (node.meta["custom"]) that marks the nodes of a layer one library runs whole.
BACKEND_ANNOTATION = "kernelevolve_backend"
# The layers eager PyTorch runs whole in cuDNN on CUDA (the cells, nn.LSTMCell and the
# like, are cuBLAS matmuls plus fused gate kernels there).
RECURRENT_LAYERS = (torch.nn.RNN, torch.nn.LSTM, torch.nn.GRU)


@contextlib.contextmanager
def _recurrent_layers_annotated(model: torch.nn.Module) -> Iterator[None]:
    """While tracing, every nn.RNN / nn.LSTM / nn.GRU of ``model`` (not a subclass) runs under
    torch.fx.traceback.annotate, so the nodes it records carry "backend": "cudnn".
    Without that API (torch before 2.9) nothing is annotated: the products then follow
    the matmul flag, the stricter of the two by default."""
    annotate = getattr(fx_traceback, "annotate", None)
    # PyTorch's own classes only: a subclass's forward may add ops cuDNN does not run
    # (a projection head), which would be marked too; its products stay strict.
    layers = [m for m in model.modules() if type(m) in RECURRENT_LAYERS] if annotate else []
    own = [m.__dict__.get("forward") for m in layers]
    for layer in layers:
        def forward(*args: Any, _forward: Any = layer.forward, **kwargs: Any) -> Any:
            with annotate({BACKEND_ANNOTATION: "cudnn"}):
                return _forward(*args, **kwargs)
        layer.forward = forward
    try:
        yield
    finally:
        for layer, forward in zip(layers, own):
            if forward is None:
                del layer.forward
            else:
                layer.forward = forward


def trace_aten(model: torch.nn.Module, inputs: list[torch.Tensor], functional: bool = False) -> torch.fx.GraphModule:
    """make_fx of ``model`` (under torch.func.functionalize when ``functional``) on copies
    of ``inputs``: real mode, no_grad, oneDNN off, core_aten.decomposition_table()
    (non-core ops decomposed, core_aten.KEEP kept), node metadata and the recurrent
    layers' backend annotation kept.

    oneDNN is off while tracing: with it, nn.LSTM on the CPU records one opaque
    aten.mkldnn_rnn_layer per layer (a tuple the graph cannot hold); without it the same
    module records its per-step addmm and gate math. Only the recorded graph changes: the
    reference and the eager baseline still run with oneDNN. (The `enabled` property, not
    mkldnn.flags(), which also sets oneDNN's TF32 flag and warns on a machine without an
    Intel GPU.)
    """
    onednn = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        with torch.no_grad(), fx_traceback.preserve_node_meta(), _recurrent_layers_annotated(model):
            fn = torch.func.functionalize(model) if functional else model
            return make_fx(fn, decomposition_table=decomposition_table())(*[t.clone() for t in inputs])
    finally:
        torch.backends.mkldnn.enabled = onednn


def _aliases_its_input(node: Node) -> bool:
    """True when ``node``'s value shares memory with its first input: a view op (slice,
    select, view, transpose, ...: a return with non-writing alias info in the op schema)
    or one result of a view op returning several (split, unbind)."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return isinstance(node.args[0], Node) and _aliases_its_input(node.args[0])
    schema = getattr(node.target, "_schema", None)
    return schema is not None and any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def _written_args(node: Node) -> list[Node]:
    """The values a call writes in place: the arguments its schema marks as written (the
    self of add_, sigmoid_, copy_; the out= of a .out overload)."""
    schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
    if schema is None:
        return []
    written = []
    for k, arg in enumerate(schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        value = node.args[k] if k < len(node.args) else node.kwargs.get(arg.name)
        if isinstance(value, Node):
            written.append(value)
    return written


def _view_chain(node: Node, through_in_place: bool = False) -> list[Node]:
    """``node``, the value it is a view of, and so on (_aliases_its_input) up to the first
    value that is no view: the last element is the root of ``node``'s memory. With
    ``through_in_place``, also through in-place calls: the result of add_(y, ...) is y
    itself, so the chain continues from the value the call wrote."""
    chain = [node]
    while True:
        last = chain[-1]
        in_place = through_in_place and bool(last.args) and last.args[0] in _written_args(last)
        if not (_aliases_its_input(last) or in_place):
            return chain
        chain.append(last.args[0])


def _alias_class(written: Node) -> list[Node]:
    """The values sharing memory with ``written``, other than itself: the bases it is a
    view of, up to the root, and every view of those bases, except the other results of a
    multi-result view op (split's chunks do not overlap)."""
    chain = _view_chain(written)
    members: list[Node] = chain[1:]
    seen = set(chain)
    pending = list(chain)
    while pending:
        node = pending.pop()
        for user in node.users:
            if user in seen or not _aliases_its_input(user):
                continue
            if user.target is operator.getitem and node in chain[1:]:
                continue  # a sibling result of a multi-result view op on the chain
            members.append(user)
            seen.add(user)
            pending.append(user)
    return members


def mutation_through_alias(gm: torch.fx.GraphModule) -> str | None:
    """The first in-place call of ``gm`` whose effect the graph's dataflow does not carry,
    as "aten.add_.Tensor (node add_)", or None.

    make_fx rebinds a tensor mutated in place to the in-place node, so later reads of that
    same tensor see the new value; a read through another alias does not: the base of a
    mutated view (``y[0:2].add_(1); return y``) or a view taken before the base was mutated
    (``v = y[0:2]; y.add_(1); return v``). Flagged: an in-place call after which another
    alias of the memory it writes (_alias_class) is read. Conservative where views do not
    overlap (two slices of one base).
    """
    order = {node: k for k, node in enumerate(gm.graph.nodes)}
    for node in gm.graph.nodes:
        for written in _written_args(node):
            for alias in _alias_class(written):
                if any(order[user] > order[node] for user in alias.users):
                    return f"{node.target} (node {node.name})"
    return None


def mutated_state(gm: torch.fx.GraphModule) -> tuple[Node, Node] | None:
    """The first parameter or buffer (a get_attr node) of ``gm`` that a call writes in
    place, directly or through a view, with that call; None when there is none.
    forward() then changes the model's state, which a captured graph cannot express:
    functionalization leaves such writes as they are (the tensor is no input), and make_fx
    reads the tensor again through a new get_attr node that the write does not reach."""
    for node in gm.graph.nodes:
        for written in _written_args(node):
            root = _view_chain(written)[-1]
            if root.op == "get_attr":
                return root, node
    return None


def _element_addresses(chain: list[Node], probe: torch.Tensor) -> torch.Tensor:
    """``chain[0]`` as a view of ``probe``, which stands for the root of ``chain`` (its
    last element): the chain's view ops replayed on ``probe``, root first. On a tensor
    numbering the root's elements in row-major order, each element of the result is the
    flat position it reads; on a meta tensor, the view's strides and offset."""
    value: Any = probe
    for node in reversed(chain[:-1]):
        if _aliases_its_input(node):
            value = node.target(value, *node.args[1:], **node.kwargs)
        # else an in-place call: its result is the value it wrote
    return value


# Calls that write at positions their index or mask arguments choose, not element by
# element over the written value: their source elements do not line up with the elements
# written by position (index_put_(y, [cols], y[:, 0:1]) writes only the columns cols), so
# overlapping_in_place leaves them out.
_NOT_POSITIONAL = frozenset({
    "index_put", "index_copy", "index_add", "index_fill", "index_reduce", "scatter", "scatter_add",
    "scatter_reduce", "masked_scatter", "put",
})

# Root tensors up to this many elements get the exact element-by-element test of
# overlapping_in_place (a probe of positions and a set membership test: about a second
# and 1 GB of host memory at this size); larger ones only the interval test.
_OVERLAP_PROBE_ELEMENTS = 1 << 25


def _positional(node: Node) -> bool:
    """Whether in-place or out= call ``node`` writes each element of the written value
    from the elements at the same position of its (broadcast) arguments."""
    schema = getattr(node.target, "_schema", None)
    name = schema.name.split("::")[-1].rstrip("_") if schema is not None else ""
    return name not in _NOT_POSITIONAL


def _address_interval(view: torch.Tensor) -> tuple[int, int]:
    """The first and last storage positions ``view`` (a meta tensor) spans."""
    lo = hi = view.storage_offset()
    for size, stride in zip(view.shape, view.stride()):
        if size > 1:
            reach = (size - 1) * stride
            lo, hi = lo + min(0, reach), hi + max(0, reach)
    return lo, hi


def overlapping_in_place(gm: torch.fx.GraphModule) -> tuple[Node, Node, Node] | None:
    """The first in-place call of ``gm`` (with the value it writes and the argument it
    reads) that reads, through another view of the same memory, elements it writes at
    other positions (``y[:, 1:] += y[:, :-1]``); None when there is none. Eager's result
    then depends on the order its kernel visits the elements, which PyTorch leaves
    unspecified (a sequential loop gives a running sum; a vectorized one does not), and no
    captured graph can reproduce it. Views are replayed on a meta tensor of their common
    root (at the root's shape as traced): views whose storage intervals are disjoint, or
    that are the same view, pass; otherwise, up to _OVERLAP_PROBE_ELEMENTS elements, they
    are replayed on a tensor of positions and compared element by element, so disjoint
    slices of one buffer (``y[:, :2] += y[:, 2:4]``) and a read of the very elements
    written (``y.add_(y)``) pass. Left out: calls that write where their indices say
    (_NOT_POSITIONAL), and larger roots whose intervals meet (the check of every
    candidate against the reference still catches what they do)."""
    for node in gm.graph.nodes:
        written_args = _written_args(node)
        if not written_args or not _positional(node):
            continue
        written = written_args[0]
        write_chain = _view_chain(written, through_in_place=True)
        root = write_chain[-1]
        reads = [a for a in (*node.args, *node.kwargs.values()) if isinstance(a, Node) and a not in written_args]
        for read in reads:
            read_chain = _view_chain(read, through_in_place=True)
            if read_chain[-1] is not root:
                continue
            shape = getattr(root.meta.get("val"), "shape", None)
            if shape is None:
                continue
            dims = tuple(int(x) for x in shape)
            meta = torch.empty(dims, device="meta")
            write_view = _element_addresses(write_chain, meta)
            try:
                read_view = _element_addresses(read_chain, meta).expand(write_view.shape)
            except RuntimeError:
                continue  # not broadcast onto the written value: leave it to the reference
            (wlo, whi), (rlo, rhi) = _address_interval(write_view), _address_interval(read_view)
            same = ((read_view.stride(), read_view.storage_offset())
                    == (write_view.stride(), write_view.storage_offset()))
            if same or rhi < wlo or whi < rlo or write_view.numel() == 0 or meta.numel() > _OVERLAP_PROBE_ELEMENTS:
                continue
            probe = torch.arange(meta.numel(), dtype=torch.int32).reshape(dims)
            write_at = _element_addresses(write_chain, probe)
            read_at = _element_addresses(read_chain, probe).expand(write_at.shape)
            clash = torch.isin(read_at.reshape(-1), write_at.reshape(-1)) & (read_at != write_at).reshape(-1)
            if bool(clash.any()):
                return node, written, read
    return None


def trace_core_aten(model: torch.nn.Module, inputs: list[torch.Tensor]) -> torch.fx.GraphModule:
    """``model(*inputs)`` traced into Core ATen ops (trace_aten) such that reading every
    in-place call as its out-of-place twin, as the C++ lowering does (OutOfPlace in
    src/operators/ir/lower_graph.cpp), computes the model's outputs: when
    mutation_through_alias flags the plain trace, it is traced again under
    torch.func.functionalize, which writes each mutation back through *_scatter ops (or a
    copy_ into a mutated input).

    Args:
        model: the reference, eval mode.
        inputs: its inputs (copied before tracing, so in-place ops cannot change them).
    Raises:
        GraphCaptureError: forward() writes a parameter or buffer in place (mutated_state),
            an in-place call reads elements it writes at other positions
            (overlapping_in_place), or the functionalized trace failed or still mutates
            through an alias.
        Exception: whatever make_fx raises on the plain trace.
    """
    gm = trace_aten(model, inputs)
    state = mutated_state(gm)
    if state is not None:
        attr, call = state
        constant = getattr(gm, attr.target)
        names = [k for k, t in model.state_dict(keep_vars=True).items() if t.data_ptr() == constant.data_ptr()]
        name = names[0] if names else attr.target
        raise GraphCaptureError(f"forward() writes the model's parameter or buffer {name} "
                                f"(node {call.name}) in place: a captured graph cannot change the model's state; "
                                "compute a new tensor instead")
    overlap = overlapping_in_place(gm)
    if overlap is not None:
        call, written, read = overlap
        raise GraphCaptureError(
            f"{call.target} (node {call.name}) writes {written.name} while reading {read.name}, a view of the same "
            "memory that holds elements it writes at other positions (as in y[:, 1:] += y[:, :-1]): eager's result "
            "then depends on the order its kernel visits the elements, which PyTorch leaves unspecified, and no "
            "kernel can be checked against it; read a copy instead (y[:, 1:] += y[:, :-1].clone())")
    mutation = mutation_through_alias(gm)
    if mutation is None:
        return gm
    try:
        gm = trace_aten(model, inputs, functional=True)
    except Exception as exc:
        raise GraphCaptureError(f"{mutation} writes memory another value aliases, and functionalizing "
                                f"the trace failed: {exception_line(exc)}") from exc
    if mutation_through_alias(gm) is not None:
        raise GraphCaptureError(f"{mutation} writes memory another value aliases, even after functionalization")
    return gm


def capture_graph(model: torch.nn.Module, inputs: list[torch.Tensor]) -> tuple[dict[str, Any] | None, str | None]:
    """trace_core_aten(model, inputs) as the JSON document (module docstring).

    Args:
        model: the reference, eval mode.
        inputs: seed-0 inputs (copied before tracing, so in-place ops cannot change them).
    Returns:
        (graph document, None) on success, (None, "<reason>") on any failure:
        capture problems are never fatal to loading.
    """
    try:
        state = list(model.state_dict().values())
        gm = trace_core_aten(model, inputs)
        return graph_to_json(gm, state, len(inputs)), None
    except GraphCaptureError as exc:
        return None, str(exc)
    except Exception as exc:  # make_fx can fail in many ways on user code
        return None, f"make_fx failed: {exception_line(exc)}"
