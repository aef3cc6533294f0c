"""The worker's state (the problem loaded last) and the methods it serves.

Methods: hello, redirect_log, load_problem, time_baseline, release (with the GPU
runner's, __main__.py), shutdown (see protocol.py for framing).
Each method takes the request's params and returns the result object, or raises a
WorkerError subclass that the loop answers as ``ok: false``.
"""

from __future__ import annotations

import os
import platform
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from . import problem_loader as loader
from .baseline import BaselineConfig, time_model
from . import edge_cases as edges
from . import eager_error
from .gpu_checks import tolerance_for
from .reference_precision import reference_tf32
from . import set_shapes as shapes
from . import device_fixtures
from .fixtures import build_manifest, seed_file_name, write_fixture_file, write_manifest, write_seed_file
from .graph_capture import capture_graph, capture_portable_graph
from .memory_check import check_memory
from .phase_clock import PhaseClock
from .protocol import ProblemError, ProtocolError, get_param
from .determinism import check_deterministic
from .reference_device import ReferenceRunner

DEFAULT_SEEDS = [0, 1, 2]


@dataclass
class LoadedProblem:
    """The problem loaded last: its module, model and seed-0 inputs (for timing)."""

    path: str
    module: Any
    model: torch.nn.Module
    inputs: list[torch.Tensor]
    threads: int


def _seeds_param(params: dict[str, Any]) -> list[int]:
    seeds = get_param(params, "load_problem", "seeds", list, DEFAULT_SEEDS)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds):
        raise ProtocolError(f"load_problem: param 'seeds' must be a non-empty list of integers >= 0, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ProtocolError(f"load_problem: param 'seeds' has duplicates: {seeds!r}")
    return list(seeds)


HALF_DTYPES = (torch.float16, torch.bfloat16)


def _half_seed_allowance(model: torch.nn.Module, inputs: list[torch.Tensor], outputs: list[torch.Tensor],
                         ref: ReferenceRunner, path: str, bounds: dict[int, list[int]],
                         overrides: dict[str, dict[str, float]]) -> list[torch.Tensor | None]:
    """The per-element allowance scale of each float16 / bfloat16 output on one seed
    (eager_error.element_error_scale against the float64 reference), None for the
    other outputs, for bounded ones and where rounding stays far inside the tolerance.

    The half-precision tolerances are torch.testing's (about one unit in the last place,
    src/eval/tolerance.cpp), and eager rounds after every op: a kernel that rounds a
    chain once (a fused GEMM epilogue) or sums in another order differs from eager by a
    few units where an intermediate cancels. The allowance is eager's own rounding error
    at each element, so only there does the check widen; a float32 output keeps the plain
    tolerance (1e-4 is hundreds of units). The CPU reference only: a GPU runner measures
    eager on its device itself (gpu_runner._measure_eager_errors).
    """
    half = [i for i, t in enumerate(outputs)
            if isinstance(t, torch.Tensor) and t.dtype in HALF_DTYPES and i not in bounds]
    if not half:
        return [None] * len(outputs)
    exact = edges.float64_reference(model, inputs, outputs)
    exact = [x if i in half else outputs[i] for i, x in enumerate(exact)]  # `is` eager: no scale
    return eager_error.element_error_scale(lambda xs: ref.run(xs, path), inputs, outputs, exact,
                                           lambda d: tolerance_for(d, overrides))


def _edge_failure(exc: ProblemError, path: str) -> str:
    """Skip reason for an edge set the reference failed on: "the reference raised
    AssertionError: <msg>" (the original exception), or the ProblemError's own text
    without its "<path>: " prefix (e.g. "forward() returned NoneType; ...")."""
    cause = exc.__cause__
    if cause is not None:
        return f"the reference raised {loader.exception_line(cause)}"
    return exc.message.removeprefix(f"{path}: ")


def _device_fixtures_refusal(path: str, why: str) -> str:
    """The one line for a problem KE_FIXTURES=device cannot draw on the device: the GPU
    runner redraws every set against the first seed's specs (device_fixtures.py)."""
    return (f"{path}: {why}; KE_FIXTURES=device draws fixed-shape problems only (the GPU runner checks every "
            "set it draws against the first seed's shapes): unset KE_FIXTURES to use fixture files for it")


def _spec_text(specs: list[dict[str, Any]]) -> str:
    """"output.0 float32[2, 3], output.1 int64[]"."""
    return ", ".join(f"{s['name']} {s['dtype']}[{', '.join(str(d) for d in s['shape'])}]" for s in specs)


def _input_specs(inputs: list[Any]) -> list[dict[str, Any]]:
    """Specs of the tensor inputs of one set (for comparing shapes between sets)."""
    return [loader.tensor_spec(f"input.{i}", "input", t) for i, t in enumerate(inputs) if isinstance(t, torch.Tensor)]


class WorkerSession:
    """Serves requests; holds at most one loaded problem."""

    def __init__(self) -> None:
        self.loaded: LoadedProblem | None = None

    def hello(self, params: dict[str, Any]) -> dict[str, Any]:
        """{"torch_version", "python_version", "pid", "num_threads"}."""
        return {"torch_version": torch.__version__, "python_version": platform.python_version(),
                "pid": os.getpid(), "num_threads": torch.get_num_threads()}

    def redirect_log(self, params: dict[str, Any]) -> dict[str, Any]:
        """Points this process's stderr (fd 2, where fd 1 writes went too) at another
        file, appending: a pooled worker starts serving another run (issue 22).

        Params: path (str, the log file; created when missing).
        Returns: {"path": the path, "pid": this process's id}.
        Raises:
            ProtocolError: missing path, or the file cannot be opened (the old log stays).
        """
        path = get_param(params, "redirect_log", "path", str)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise ProtocolError(f"redirect_log: cannot open {path}: {exc}") from exc
        sys.stderr.flush()
        os.dup2(fd, 2)
        os.dup2(fd, 1)  # fd 1 was pointed at stderr at start (__main__._claim_stdout)
        os.close(fd)
        return {"path": path, "pid": os.getpid()}

    def release(self) -> list[str]:
        """Forgets the problem loaded last (its module, model and inputs). Returns
        ["problem"] when one was loaded, else []."""
        if self.loaded is None:
            return []
        loader.forget_problem(self.loaded.module)
        self.loaded = None
        return ["problem"]

    def load_problem(self, params: dict[str, Any]) -> dict[str, Any]:
        """Imports the problem, applies overrides, checks memory, writes fixtures,
        captures the graph and times the eager baseline.

        Params: path, overrides {NAME: "VALUE"}, seeds [int], fixtures_dir, threads,
        memory_budget_bytes, baseline {warmup_seconds, min_time_seconds,
        min_repetitions, max_repetitions}, time_baseline (bool, default true; false:
        no eager timing here, "baseline_samples_us" is [], as GPU targets time eager
        on the device).
        Returns: {"name", "inputs", "outputs" (ABI specs), "graph" | None, "graph_error",
        "shape_graphs" (the graph of each later seed whose inputs have other sizes than the
        first seed's, in seed order; None where capture failed; [] when sizes never vary),
        "fixtures_dir", "manifest_path", "fixture_files" (absolute), "seeds",
        "baseline_samples_us" (µs per call), "threads", "torch_version",
        "memory_check" ("ok" | "skipped: <reason>"), "phase_seconds" {"import",
        "references", "fixture_writes", "edge_sets", "capture", "eager_timing": wall
        seconds; a phase that did not run is absent}}.

        Raises:
            ProtocolError: bad params, or the fixtures folder cannot be written.
            ProblemError: anything the problem file gets wrong (one line naming it).
        """
        method = "load_problem"
        path = get_param(params, method, "path", str)
        overrides = get_param(params, method, "overrides", dict, {})
        seeds = _seeds_param(params)
        fixtures_dir = Path(get_param(params, method, "fixtures_dir", str))
        threads = get_param(params, method, "threads", int, torch.get_num_threads())
        if threads < 1:
            raise ProtocolError(f"{method}: param 'threads' must be >= 1, got {threads}")
        budget = get_param(params, method, "memory_budget_bytes", int, None)
        baseline = BaselineConfig.from_params(get_param(params, method, "baseline", dict, {}), method)
        time_eager = get_param(params, method, "time_baseline", bool, True)

        if self.loaded is not None:  # free the previous problem's tensors first
            loader.forget_problem(self.loaded.module)
            self.loaded = None
        clock = PhaseClock()
        with clock.phase("import"):
            module = loader.import_problem(path)
        try:
            result, loaded = self._load(module, path, overrides, seeds, fixtures_dir, threads, budget,
                                        baseline if time_eager else None, clock)
        except BaseException:
            loader.forget_problem(module)
            raise
        self.loaded = loaded
        return result

    def _load(self, module: Any, path: str, overrides: dict[str, Any], seeds: list[int], fixtures_dir: Path,
              threads: int, budget: int | None, baseline: BaselineConfig | None,
              clock: PhaseClock) -> tuple[dict[str, Any], LoadedProblem]:
        """load_problem after the import; ``baseline`` None: no eager timing."""
        loader.apply_overrides(module, overrides, path)
        tolerance = loader.problem_tolerance(module, path)
        edge_names = edges.problem_edge_cases(module, path)  # a malformed EDGE_CASES fails before any work
        eager_multiple = edges.problem_eager_error_multiple(module, path)
        bounds = shapes.problem_output_bounds(module, path)
        try:
            on_device = device_fixtures.requested_mode() == device_fixtures.DEVICE_MODE
        except ValueError as exc:
            raise ProtocolError(f"load_problem: {exc}") from exc
        if on_device and bounds:
            raise ProblemError(_device_fixtures_refusal(path, "declares outputs of data-dependent size "
                                                              "(OUTPUT_BOUNDS)"))
        memory = check_memory(module, path, len(seeds), budget)
        torch.set_num_threads(threads)
        model = loader.build_model(module, path)
        params = loader.abi_parameters(model, path)
        ref = ReferenceRunner(model)  # KE_REFERENCE_DEVICE: CPU (default) or GPU forward()
        try:
            fixtures_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ProtocolError(f"load_problem: cannot create fixtures_dir {fixtures_dir}: {exc}") from exc

        input_specs: list[dict[str, Any]] = []
        output_specs: list[dict[str, Any]] = []
        files: list[str] = []
        first_inputs: list[torch.Tensor] = []
        set_shapes: list[dict[str, list[int]]] = []
        shape_graphs: list[dict[str, Any] | None] = []
        seed_allowance: list[list[str]] = []  # per seed file: outputs with an allowance tensor
        for seed in seeds:
            with clock.phase("references"):
                inputs = loader.make_inputs(module, seed, path)
                outputs = ref.run(inputs, path)
                if seed == seeds[0]:
                    check_deterministic(path, outputs, lambda: ref.run(inputs, path), tolerance or {})
            if seed == seeds[0] and outputs and all(isinstance(t, torch.Tensor) and t.numel() == 0
                                                    for t in outputs):
                # The first input set is the one timed; a later set with empty outputs is
                # kept (a kernel must handle it, and the checks still compare shapes).
                set_by = f" (after {', '.join(f'{k}={v}' for k, v in overrides.items())})" if overrides else ""
                shown = ", ".join(str(list(t.shape)) for t in outputs)
                raise ProblemError(f"{path}: every output of forward() is empty for seed {seed}{set_by}: "
                                   f"shapes {shown}; that input set is the one timed, so there is nothing "
                                   "to compute, time or check")
            sizes = shapes.size_tensors(outputs, bounds, f"seed {seed}", path)
            named = [(f"input.{i}", t) for i, t in enumerate(inputs)] + params
            specs_in = [loader.tensor_spec(n, "input" if n.startswith("input.") else "parameter", t) for n, t in named]
            specs_out = [loader.tensor_spec(f"output.{i}", "output", t) for i, t in enumerate(outputs)]
            if not files:
                input_specs, output_specs, first_inputs = specs_in, specs_out, inputs
            else:
                shapes.check_same_layout(input_specs + output_specs, specs_in + specs_out, seed, path)
                shapes.check_value_independent_shapes(input_specs, output_specs, specs_in, specs_out, bounds,
                                                      f"seed {seed}", f"seed {seeds[0]}", path)
                if [s["shape"] for s in specs_in] != [s["shape"] for s in input_specs]:
                    # Inputs of other sizes than the first seed's: this seed's graph too, from
                    # which the C++ side tells which sizes the program depends on (its loop
                    # bounds become the input's sizes, read at run time).
                    with clock.phase("capture"):
                        shape_graph, _ = self._capture(ref, model, inputs)
                    shape_graphs.append(shape_graph)
            set_shapes.append(shapes.shape_map(specs_in + specs_out, sizes))
            if on_device and set_shapes[-1] != set_shapes[0]:
                raise ProblemError(_device_fixtures_refusal(path, f"gives inputs of other shapes under seed {seed} "
                                                                  f"than under seed {seeds[0]}"))
            named += [(f"output.{i}", t) for i, t in enumerate(outputs)] + sizes
            half_output = any(isinstance(t, torch.Tensor) and t.dtype in HALF_DTYPES for t in outputs)
            if ref.device is None and eager_multiple > 0 and not on_device and half_output:
                with clock.phase("seed_allowance"):  # a phase of its own only where it runs
                    scales = _half_seed_allowance(model, inputs, outputs, ref, path, bounds, tolerance or {})
                named += [(f"allowance.output.{i}", s) for i, s in enumerate(scales) if s is not None]
                seed_allowance.append([f"output.{i}" for i, s in enumerate(scales) if s is not None])
            if on_device:  # KE_FIXTURES=device: the GPU runner draws them again (device_fixtures.py)
                files.append(str(fixtures_dir / seed_file_name(seed)))
                del inputs, outputs, named
                continue
            try:
                with clock.phase("fixture_writes"):
                    files.append(str(write_seed_file(fixtures_dir, seed, named)))
            except OSError as exc:
                raise ProtocolError(f"load_problem: cannot write fixtures to {fixtures_dir}: {exc}") from exc
            del inputs, outputs, named

        with clock.phase("edge_sets"):
            edge_written, edge_skipped = self._write_edge_cases(module, model, path, edge_names, first_inputs,
                                                                params, output_specs, bounds, fixtures_dir, ref,
                                                                write=not on_device,
                                                                allowance=(eager_multiple, tolerance or {}))
        stem = Path(path).stem
        abi_outputs = shapes.abi_output_specs(output_specs, bounds)
        manifest = build_manifest(stem, Path(path), input_specs, abi_outputs, seeds, overrides, tolerance)
        if bounds or any(s != set_shapes[0] for s in set_shapes):
            manifest["set_shapes"] = set_shapes
        manifest.update(edges.manifest_entries(edge_written, edge_skipped))
        manifest["eager_error_multiple"] = eager_multiple
        if any(seed_allowance):
            manifest["seed_allowance"] = seed_allowance
        if on_device:
            manifest["fixtures"] = device_fixtures.DEVICE_MODE
        try:
            manifest_path = write_manifest(fixtures_dir, manifest)
        except OSError as exc:
            raise ProtocolError(f"load_problem: cannot write {fixtures_dir}/manifest.json: {exc}") from exc

        with clock.phase("capture"):
            graph, graph_error = self._capture(ref, model, first_inputs)
        samples: list[float] = []
        if baseline is not None:
            with clock.phase("eager_timing"):
                samples = self._time(ref.timed_model(), ref.inputs(first_inputs), baseline, path)
        ref.close()
        result = {
            "name": stem, "inputs": input_specs, "outputs": abi_outputs,
            "graph": graph, "graph_error": graph_error, "shape_graphs": shape_graphs,
            "fixtures_dir": str(fixtures_dir.resolve()), "manifest_path": str(manifest_path),
            "fixture_files": [] if on_device else files, "seeds": seeds, "baseline_samples_us": samples,
            "fixtures": device_fixtures.DEVICE_MODE if on_device else "files",
            "threads": threads, "torch_version": torch.__version__, "memory_check": memory,
            "reference_device": "cpu" if ref.device is None else str(ref.device), "reference_note": ref.note,
            "reference_tf32": reference_tf32(), "eager_error_multiple": eager_multiple,
            "phase_seconds": clock.seconds,
        }
        return result, LoadedProblem(path, module, model, first_inputs, threads)

    @staticmethod
    def _capture(ref: ReferenceRunner, model: torch.nn.Module,
                 inputs: list[torch.Tensor]) -> tuple[dict[str, Any] | None, str | None]:
        """The op graph of ``model`` on ``inputs`` (CPU tensors), traced where ``ref`` runs
        the reference, and again on the CPU when the device's trace is not portable
        (graph_capture.capture_portable_graph)."""
        if ref.device is None:
            return capture_graph(model, inputs)
        return capture_portable_graph(ref.model, ref.inputs(inputs), model, inputs)

    @staticmethod
    def _write_edge_cases(module: Any, model: torch.nn.Module, path: str, names: list[str],
                          inputs: list[torch.Tensor], params: list[tuple[str, torch.Tensor]],
                          output_specs: list[dict[str, Any]], bounds: dict[int, list[int]], fixtures_dir: Path,
                          ref: ReferenceRunner, write: bool = True,
                          allowance: tuple[float, dict[str, dict[str, float]]] = (0.0, {})
                          ) -> tuple[list[tuple[str, str, list[float], list[str]]], list[tuple[str, str]]]:
        """Writes one fixture file per edge-case set in ``names`` (edge_cases.problem_edge_cases),
        built from ``inputs`` (the first seed's); ``ref`` runs forward() (reference_device.py).
        A set whose outputs differ from the first seed's in shape is skipped; bounded
        outputs (``bounds``, set_shapes.py) get their size tensors. ``allowance`` is the
        problem's EAGER_ERROR_MULTIPLE and tolerance overrides: with a multiple > 0, a set
        where rounding moves elements by about the tolerance gets
        eager_error.element_error_scale's tensor
        "allowance.output.<i>" per such output (not for bounded outputs) in its file.

        Returns:
            ([(name, file name, eager's error per output, outputs with an allowance)]
            written, [(name, reason)] skipped); the errors are edge_cases.reference_error's.
            With ``write`` False
            (KE_FIXTURES=device) nothing is written and "written" lists the sets the
            GPU runner is to draw again.
        Raises:
            ProblemError: INPUT_DOMAIN is malformed.
            ProtocolError: a file cannot be written.
        """
        arg_names = edges.forward_argument_names(model)
        domain = edges.problem_input_domain(module, path, arg_names, len(inputs))
        written: list[tuple[str, str, list[float], list[str]]] = []
        multiple, overrides = allowance
        skipped: list[tuple[str, str]] = []
        for name in names:
            edge = edges.edge_inputs(name, inputs)
            if all(a is b for a, b in zip(edge, inputs)):
                skipped.append((name, "no floating-point input to transform"))
                continue
            violation = (edges.domain_violation(edge, domain, arg_names)
                         or edges.order_violation(inputs, edge, arg_names))
            if violation:
                skipped.append((name, violation))
                continue
            try:
                outputs = ref.run(edge, path)
            except ProblemError as exc:
                skipped.append((name, _edge_failure(exc, path)))
                continue
            specs_out = [loader.tensor_spec(f"output.{i}", "output", t) for i, t in enumerate(outputs)]
            shapes.check_value_independent_shapes(_input_specs(inputs), output_specs, _input_specs(edge), specs_out,
                                                  bounds, f"edge case '{name}'", "the first seed", path)
            if specs_out != output_specs:
                skipped.append((name, "the reference gives other outputs on it "
                                      f"({_spec_text(specs_out)}, not {_spec_text(output_specs)} as on the seeds)"))
                continue
            file_name = edges.edge_file_name(name)
            if not write:
                # The GPU runner draws the set again and computes its float64 reference and
                # eager's error on the device (device_fixtures.py); at GPU sizes a float64
                # forward() on the CPU here can take minutes.
                written.append((name, file_name, [], []))
                continue
            exact = edges.float64_reference(model, edge, outputs)
            overflow = edges.overflow_where_reference_finite(outputs, exact)
            if overflow:
                skipped.append((name, overflow))
                continue
            errors = edges.reference_error(outputs, exact, lambda d: tolerance_for(d, overrides))
            scales = [None] * len(outputs)
            if multiple > 0:
                scales = eager_error.element_error_scale(lambda xs: ref.run(xs, path), edge, outputs, exact,
                                                         lambda d: tolerance_for(d, overrides))
            scales = [None if i in bounds else s for i, s in enumerate(scales)]
            outputs = exact
            named = [(f"input.{i}", t) for i, t in enumerate(edge)] + params
            named += [(f"output.{i}", t) for i, t in enumerate(outputs)]
            named += [(f"allowance.output.{i}", s) for i, s in enumerate(scales) if s is not None]
            named += shapes.size_tensors(outputs, bounds, f"edge case '{name}'", path)
            try:
                write_fixture_file(fixtures_dir, file_name, named, {"edge_case": name})
            except OSError as exc:
                raise ProtocolError(f"load_problem: cannot write fixtures to {fixtures_dir}: {exc}") from exc
            written.append((name, file_name, errors, [f"output.{i}" for i, s in enumerate(scales) if s is not None]))
        return written, skipped

    @staticmethod
    def _time(model: torch.nn.Module, inputs: list[torch.Tensor], config: BaselineConfig, path: str) -> list[float]:
        try:
            return time_model(model, inputs, config)
        except (Exception, SystemExit) as exc:  # user code
            raise ProblemError(f"{path}: the reference raised {loader.exception_line(exc)} "
                               "(while timing the baseline)", traceback.format_exc()) from exc

    def time_baseline(self, params: dict[str, Any]) -> dict[str, Any]:
        """{"samples_us": [...]} for the problem loaded last, same thread count.

        Raises:
            ProtocolError: no problem loaded, or bad params.
            ProblemError: forward() raised while timing.
        """
        if self.loaded is None:
            raise ProtocolError("time_baseline: no problem loaded (call load_problem first)")
        config = BaselineConfig.from_params(params, "time_baseline")
        torch.set_num_threads(self.loaded.threads)
        return {"samples_us": self._time(self.loaded.model, self.loaded.inputs, config, self.loaded.path)}
