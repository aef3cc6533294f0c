"""The GPU runner: checks and times Triton and CUDA C++ candidates on one GPU.

Runs as a separate worker process (``python -m kernelevolve_worker``, the same
JSON-lines protocol), never inside the problem worker: the C++ side
(src/platforms/triton/) kills and restarts it after a crash, a timeout or a sticky
CUDA error, and records the candidate with that status. Methods:

  gpu_hello           device facts (and whether a GPU is usable at all)
  gpu_prepare         loads a problem's fixtures onto the device, builds the eager
                      model (fixture parameters) and its torch.compile version
  gpu_run             loads one candidate file, checks it on every seed, times it
                      interleaved with eager and torch.compile
  gpu_time_baselines  times eager and torch.compile alone (the run's first baseline)
  gpu_bandwidth       device-to-device copy bandwidth (roofline peak)
  gpu_matmul_peak     torch.mm FLOP/s per dtype (roofline compute peak; gpu_peaks.py)

Without a GPU, TRITON_INTERPRET=1 makes it work on CPU tensors through Triton's
interpreter (for tests: correctness only, timings meaningless).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import torch

from . import gpu_peaks, gpu_profile, set_shapes
from . import device_fixtures
from . import edge_cases as edges
from . import eager_error
from . import problem_loader as loader
from .compile_cache import CompiledBaselines, baseline_key
from .gpu_checks import (EdgeSet, allowance_note, compare, fill_poison, mismatch_message, same_bits,
                         tolerance_for)
from .gpu_timing import Clock, TimingConfig, time_interleaved
from .guarded_buffers import first_guard_message, guarded_clone, guarded_empty
from .phase_clock import PhaseClock
from .protocol import ProblemError, ProtocolError, WorkerError, get_param
from .candidate_kinds import CandidateLoadError, classify_exception, forget_candidate, load_candidate, own_kernels
from .kernel_origin import SUSPICIOUS_SOURCE, foreign_kernels, profile_launches

INTERPRET_NOTE = "TRITON_INTERPRET=1 on the CPU: timings say nothing about GPU speed"


class PoisonedError(WorkerError):
    """A sticky CUDA error happened earlier: this process must be replaced."""


def interpret_mode() -> bool:
    """True when TRITON_INTERPRET=1 (Triton kernels run on the CPU)."""
    return os.environ.get("TRITON_INTERPRET", "") == "1"


def _device() -> torch.device | None:
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu") if interpret_mode() else None


def _timing_config(params: dict[str, Any], method: str) -> TimingConfig:
    d = TimingConfig()
    return TimingConfig(
        warmup_seconds=get_param(params, method, "warmup_seconds", float, d.warmup_seconds),
        min_time_seconds=get_param(params, method, "min_time_seconds", float, d.min_time_seconds),
        min_repetitions=get_param(params, method, "min_repetitions", int, d.min_repetitions),
        max_repetitions=get_param(params, method, "max_repetitions", int, d.max_repetitions),
        rounds=get_param(params, method, "rounds", int, d.rounds))


class GpuRunner:
    """State of one runner process: the prepared problem on the device."""

    def __init__(self) -> None:
        self.device: torch.device | None = None
        self.clock: Clock | None = None
        self.manifest: dict[str, Any] = {}
        self.inputs: list[list[torch.Tensor]] = []   # per seed, ABI order, pristine
        self.outputs: list[list[torch.Tensor]] = []  # per seed, reference outputs
        # Edge-case sets (manifest "edge_cases"), checked once per candidate after the
        # seeds, never timed (as the CPU harness).
        self.edges: list[EdgeSet] = []
        # Eager PyTorch's own max error on each seed on this device, by output name
        # (_measure_eager_errors, when the problem sets EAGER_ERROR_MULTIPLE): where the
        # reference runs a product in TF32 (cuDNN's float32 convolutions by default), a
        # candidate may then be as far off as that multiple of it.
        self.seed_errors: list[dict[str, float]] = []
        # Per seed, eager's per-element error scale by output name (eager_error.py).
        self.seed_allowances: list[dict[str, torch.Tensor]] = []
        self.num_forward_inputs = 0
        # The forward() inputs eager and torch.compile are warmed up and timed on
        # (_baseline_inputs): the first set's own tensors, or a private copy of them.
        self.baseline_inputs: list[torch.Tensor] = []
        self.eager: Callable[..., Any] | None = None
        self.compiled: Callable[..., Any] | None = None
        self.notes: list[str] = []
        self.poisoned = ""
        # Issue 22: eager and torch.compile models of recent problems, reused by a later
        # gpu_prepare of the same problem and sizes (compile_cache.py).
        self.baselines = CompiledBaselines()

    def methods(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        """The protocol methods this runner serves."""
        return {"gpu_hello": self.hello, "gpu_prepare": self.prepare, "gpu_run": self.run,
                "gpu_time_baselines": self.time_baselines, "gpu_bandwidth": self.bandwidth,
                # Profiling (gpu_profile.py): eager breakdown by torch.profiler; ncu of a candidate.
                "gpu_profile_baseline": lambda p: gpu_profile.profile_baseline(self, p),
                "gpu_ncu": gpu_profile.ncu_method,
                "gpu_matmul_peak": gpu_peaks.matmul_peak}  # issue 6: roofline compute peak

    def release(self) -> list[str]:
        """Frees the prepared problem's fixtures and models (the compiled-baseline cache
        keeps its models for a later gpu_prepare of the same problem) and returns the
        device's cached blocks to the driver. Returns ["gpu_fixtures"] when a problem
        was prepared, else []. A poisoned runner stays poisoned."""
        if not self.inputs and self.eager is None:
            return []
        self.inputs, self.outputs, self.edges, self.notes, self.baseline_inputs = [], [], [], [], []
        self.eager = self.compiled = None
        self.clock = None
        if torch.cuda.is_available() and not self.poisoned:
            torch.cuda.empty_cache()
        return ["gpu_fixtures"]

    def hello(self, params: dict[str, Any]) -> dict[str, Any]:
        """{"cuda", "interpret", "device_name", "capability", "sm_count", "l2_bytes",
        "memory_bytes", "shared_memory_per_block_optin", "shared_memory_per_sm" (bytes; 0
        when this torch does not report them), "torch_version", "triton_version", "pid"}."""
        result: dict[str, Any] = {"cuda": torch.cuda.is_available(), "interpret": interpret_mode(),
                                  "torch_version": torch.__version__, "pid": os.getpid(),
                                  "device_name": "", "capability": "", "sm_count": 0, "l2_bytes": 0,
                                  "memory_bytes": 0, "shared_memory_per_block_optin": 0,
                                  "shared_memory_per_sm": 0, "triton_version": ""}
        try:
            import triton
            result["triton_version"] = triton.__version__
        except ImportError as exc:
            result["triton_error"] = f"cannot import triton: {exc}"
        if result["cuda"]:
            p = torch.cuda.get_device_properties(torch.cuda.current_device())
            result.update(device_name=p.name, capability=f"{p.major}.{p.minor}",
                          sm_count=p.multi_processor_count, l2_bytes=int(p.L2_cache_size),
                          memory_bytes=int(p.total_memory),
                          shared_memory_per_block_optin=int(getattr(p, "shared_memory_per_block_optin", 0)),
                          shared_memory_per_sm=int(getattr(p, "shared_memory_per_multiprocessor", 0)))
        elif result["interpret"]:
            result["device_name"] = "cpu (TRITON_INTERPRET=1)"
        return result

    def _require_device(self, method: str) -> torch.device:
        if self.poisoned:
            raise PoisonedError(f"{method}: this runner hit a sticky CUDA error earlier ({self.poisoned}); "
                                "restart it")
        device = _device()
        if device is None:
            raise ProtocolError(f"{method}: no CUDA GPU is visible (torch.cuda.is_available() is False) "
                                "and TRITON_INTERPRET is not 1")
        return device

    def prepare(self, params: dict[str, Any]) -> dict[str, Any]:
        """Loads the fixtures of ``manifest_path`` onto the device and builds baselines.

        Params: manifest_path, eager (bool, default true), compile (bool, default: a
        GPU is present).
        Returns: {"device", "seeds", "edge_cases", "flush_bytes", "notes": [str] (notes
        say why a baseline is missing), "phase_seconds" {"fixtures" (files read, or sets
        drawn on the device), "baselines" (eager model built, torch.compile's first call),
        "eager_error" (eager run once on every set: _measure_eager_errors; only for a
        problem with EAGER_ERROR_MULTIPLE)}}.
        Raises:
            ProtocolError: bad params, unreadable manifest or fixtures.
        """
        method = "gpu_prepare"
        self.device = self._require_device(method)
        path = Path(get_param(params, method, "manifest_path", str))
        want_eager = get_param(params, method, "eager", bool, True)
        want_compile = get_param(params, method, "compile", bool, self.device.type == "cuda")
        try:
            self.manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ProtocolError(f"{method}: cannot read {path}: {exc}") from exc
        from safetensors.torch import load_file
        self.inputs, self.outputs, self.edges, self.notes, self.seed_errors = [], [], [], [], []
        self.seed_allowances = []
        in_names = [t["name"] for t in self.manifest["inputs"]]
        out_names = [t["name"] for t in self.manifest["outputs"]]
        self.num_forward_inputs = sum(1 for t in self.manifest["inputs"] if t.get("role") == "input")

        def load(file: str, allowance: tuple[str, ...] = ()) -> tuple[list[torch.Tensor], list[torch.Tensor],
                                                                       dict[str, torch.Tensor]]:
            """A fixture file's inputs, outputs and, for the outputs named in ``allowance``,
            their "allowance.<output>" tensors (eager_error.py)."""
            try:
                tensors = load_file(str(path.parent / file), device=str(self.device))
                scales = {n: tensors[f"allowance.{n}"].contiguous() for n in allowance}
            except Exception as exc:  # safetensors raises several types; KeyError for a missing tensor
                raise ProtocolError(f"{method}: cannot load {path.parent / file}: {loader.exception_line(exc)}") from exc
            return [tensors[n].contiguous() for n in in_names], [tensors[n].contiguous() for n in out_names], scales

        phases = PhaseClock()
        with phases.phase("fixtures"):
            if device_fixtures.on_device(self.manifest):
                # Issue 22: no files; every set drawn again from its seed on the device.
                self.inputs, self.outputs, self.edges, skipped = device_fixtures.generate(self.manifest, self.device)
                self.notes.append("fixtures drawn on the device from their seeds (KE_FIXTURES=device; no files)")
                self.notes += [f"edge case '{name}' left out: {reason}" for name, reason in skipped]
            for file in [] if device_fixtures.on_device(self.manifest) else self.manifest["files"]:
                ins, outs, _ = load(file)
                self.inputs.append(ins)
                self.outputs.append(outs)
            for edge in [] if device_fixtures.on_device(self.manifest) else self.manifest.get("edge_cases", []):
                ins, outs, scales = load(edge["file"], tuple(edge.get("allowance", [])))
                self.edges.append(EdgeSet(edge["name"], edge.get("description", ""), ins, outs,
                                          edge.get("reference_error", {}), scales))
        self.clock = Clock(self.device)
        self.eager = self.compiled = None
        if want_eager:
            with phases.phase("baselines"):
                self._build_baselines(want_compile)
            if self._eager_error_multiple() > 0:  # 0: the problem turned the allowance off
                with phases.phase("eager_error"):
                    self._measure_eager_errors()
        return {"device": str(self.device), "seeds": len(self.inputs), "edge_cases": len(self.edges),
                "flush_bytes": self.clock.flush_bytes(), "notes": self.notes, "phase_seconds": phases.seconds}

    def _build_baselines(self, want_compile: bool) -> None:
        source = self.manifest.get("source_path", "")
        key = baseline_key(source, self.manifest.get("overrides", {}), self.manifest["inputs"],
                           self.manifest.get("seeds", []), str(self.device))
        cached = self.baselines.get(key)
        if cached is not None and (cached[1] is not None or not want_compile):
            self.eager, self.compiled = cached[0], cached[1] if want_compile else None
            self.notes.append("eager and torch.compile models reused from an earlier gpu_prepare of this problem "
                              "and sizes in this runner")
            self.baseline_inputs = self._baseline_inputs()
            return
        try:
            module = loader.import_problem(source)
            loader.apply_overrides(module, self.manifest.get("overrides", {}), source)
            model = loader.build_model(module, source)
            params = {t["name"].removeprefix("param."): x for t, x in
                      zip(self.manifest["inputs"], self.inputs[0]) if t.get("role") == "parameter"}
            if params:
                model.load_state_dict(params, strict=False)
            model = model.to(self.device).eval()
        except (ProblemError, Exception) as exc:
            self.notes.append(f"no eager baseline: {loader.exception_line(exc)}")
            return
        self.eager = model
        self.baseline_inputs = self._baseline_inputs()
        if want_compile:
            try:
                compiled = torch.compile(model)
                with torch.no_grad():
                    compiled(*self.baseline_inputs)
                self.clock.synchronize()
                self.compiled = compiled
            except Exception as exc:  # inductor failures are the baseline's, not ours
                self.notes.append(f"no torch.compile baseline: {loader.exception_line(exc)}")
        self.baselines.put(key, self.eager, self.compiled)

    def _baseline_inputs(self) -> list[torch.Tensor]:
        """The first set's forward() inputs for warming up and timing the baselines: the
        set's own tensors, or a private copy of them when forward() writes its inputs in
        place (x.add_(1)). self.inputs must stay as drawn: every candidate is checked on
        them against references computed from them, and eager timed a hundred times on
        the set itself would leave it a hundred updates away (every candidate then fails
        its check). One eager call on a copy tells which; a forward() that raises gets
        the copy, and raises again where it is timed. Inputs of more than a quarter of
        the device's free memory are not copied (a note says so): the baselines then run
        on the set itself, as they did before the copy."""
        forward = self.inputs[0][:self.num_forward_inputs]
        size = sum(t.numel() * t.element_size() for t in forward)
        on_gpu = self.device is not None and self.device.type == "cuda"
        if on_gpu and size > torch.cuda.mem_get_info(self.device)[0] // 4:
            self.notes.append(f"eager is timed on the first input set itself: a copy of its {size / 2**30:.1f} GiB of "
                              "inputs would take more than a quarter of the free device memory; a forward() that "
                              "writes its inputs in place then changes the inputs candidates are checked on")
            return forward
        copy = [t.clone() for t in forward]
        try:
            with torch.no_grad():
                self.eager(*copy)
        except Exception:  # user code; the timing reports it
            return copy
        self.clock.synchronize()
        written = any(a.shape != b.shape or not torch.equal(a, b) for a, b in zip(copy, forward))
        return copy if written else forward

    def _measure_eager_errors(self) -> None:
        """Eager's own error on every input set, run here, against the set's reference:
        the max per output (self.seed_errors; each edge set's reference_error raised to
        it) and, where rounding moves elements by about the tolerance, the per-element
        allowance scale
        (eager_error.element_error_scale: self.seed_allowances; each edge set's
        allowance raised element-wise to it). A reference of record is float64 rounded
        once, or the CPU's float32 result, while eager on this device may run products
        in TF32 (torch.backends.cudnn.allow_tf32, on by default for convolutions): each
        run then carries cuDNN's own TF32 rounding, so the scale, and the tolerance,
        follow the precision the reference really ran in (issue 18), TF32 where cuDNN
        used it and float32 where it did not. Nothing is measured without an eager
        model; a forward() that raises here is a note."""
        if self.eager is None:
            return
        names = [t["name"] for t in self.manifest["outputs"]]
        source = self.manifest.get("source_path", "")
        overrides = self.manifest.get("tolerance", {})
        bounded = {t["name"] for t in self.manifest["outputs"] if "size_output" in t}  # no allowance: shapes vary

        def run(inputs: list[torch.Tensor], refs: list[torch.Tensor]) -> list[torch.Tensor]:
            outs = loader.run_reference(self.eager, inputs[:self.num_forward_inputs], source, keep_device=True)
            return set_shapes.trim_outputs(self.manifest["outputs"], outs, refs)

        def measure(inputs: list[torch.Tensor], refs: list[torch.Tensor]) -> tuple[dict[str, float],
                                                                                   dict[str, torch.Tensor]]:
            outs = run(inputs, refs)
            errors = {n: e for n, e in zip(names, edges.reference_error(outs, refs, lambda d: tolerance_for(d, overrides)))
                      if e > 0}
            forward = inputs[:self.num_forward_inputs]
            scales = eager_error.element_error_scale(lambda xs: run(xs, refs), forward, outs, refs,
                                                     lambda d: tolerance_for(d, overrides),
                                                     coarse_eager=self.device.type == "cuda")
            return errors, {n: x for n, x in zip(names, scales) if x is not None and n not in bounded}

        try:
            measured = [measure(ins, refs) for ins, refs in zip(self.inputs, self.outputs)]
            self.seed_errors = [m[0] for m in measured]
            self.seed_allowances = [m[1] for m in measured]
            for i, edge in enumerate(self.edges):
                errors, scales = measure(edge.inputs, edge.outputs)
                merged = {n: max(errors.get(n, 0.0), edge.reference_error.get(n, 0.0))
                          for n in set(errors) | set(edge.reference_error)}
                for n, x in edge.allowance.items():
                    scales[n] = torch.maximum(scales[n], x) if n in scales else x
                self.edges[i] = edge._replace(reference_error=merged, allowance=scales)
        except (ProblemError, Exception) as exc:  # user code: the tolerances stay as they are
            self.seed_errors, self.seed_allowances = [], []
            self.notes.append(f"eager's own error not measured: {loader.exception_line(exc)}")
        self.clock.synchronize()

    def _eager_error_multiple(self) -> float:
        """The problem's EAGER_ERROR_MULTIPLE (manifest "eager_error_multiple"; 0 = off;
        absent, from a worker before the per-element allowance: 0)."""
        return float(self.manifest.get("eager_error_multiple", 0.0))

    def _seed_errors(self, k: int) -> tuple[dict[str, float], dict[str, torch.Tensor]]:
        """Eager's own max error and per-element allowance scale on seed k by output
        name; ({}, {}) when not measured."""
        if k >= len(self.seed_errors):
            return {}, {}
        return self.seed_errors[k], self.seed_allowances[k]

    def _require_prepared(self, method: str) -> None:
        self._require_device(method)
        if self.clock is None or not self.inputs:
            raise ProtocolError(f"{method}: no problem prepared (call gpu_prepare first)")

    def _baseline_fns(self) -> dict[str, Callable[[], Any]]:
        fwd = self.baseline_inputs
        fns: dict[str, Callable[[], Any]] = {}
        if self.eager is not None:
            fns["eager"] = lambda: self.eager(*fwd)
        if self.compiled is not None:
            fns["compile"] = lambda: self.compiled(*fwd)
        return fns

    def time_baselines(self, params: dict[str, Any]) -> dict[str, Any]:
        """{"samples_us": {"eager": [...], "compile": [...]}, "notes", "timing_note"}."""
        method = "gpu_time_baselines"
        self._require_prepared(method)
        config = _timing_config(params, method)
        fns = self._baseline_fns()
        try:
            with torch.no_grad():
                samples = time_interleaved(self.clock, fns, config) if fns else {}
        except Exception as exc:  # only the reference's code runs here
            source = self.manifest.get("source_path", "")
            raise ProblemError(f"{source}: the reference raised {loader.exception_line(exc)} "
                               "(while timing the baseline)", traceback.format_exc()) from exc
        return {"samples_us": samples, "notes": self.notes,
                "timing_note": INTERPRET_NOTE if self.device.type != "cuda" else ""}

    def run(self, params: dict[str, Any]) -> dict[str, Any]:
        """Checks one candidate on every seed, then on every edge-case set, and times it
        when correct.

        Params: candidate_path, measure (bool, default true), timing fields
        (warmup_seconds, min_time_seconds, min_repetitions, max_repetitions, rounds).
        Returns: {"status", "message", "correct", "checks", "traceback",
        "cuda_error", "samples_us": {"candidate", "candidate_dropin", "eager",
        "compile"} (those timed), "timing_note", "kernel_origin": {"checked",
        "own", "allowed", "foreign", "note"} (kernel_origin.py; checked once the
        outputs are right)}.
        """
        method = "gpu_run"
        self._require_prepared(method)
        path = get_param(params, method, "candidate_path", str)
        measure = get_param(params, method, "measure", bool, True)
        config = _timing_config(params, method)
        result: dict[str, Any] = {"status": "ok", "message": "ok", "correct": False, "checks": [],
                                  "traceback": "", "cuda_error": False, "samples_us": {},
                                  "timing_note": INTERPRET_NOTE if self.device.type != "cuda" else ""}
        module = None
        try:
            module, entry = load_candidate(path)
        except CandidateLoadError as exc:
            result.update(status=exc.status, message=exc.message, traceback=exc.traceback_text)
            return result
        own = own_kernels(module, path)
        try:
            with torch.no_grad():
                self._check_and_time(entry, measure, config, result, own)
        except Exception as exc:  # the candidate's failure, as a status
            status, sticky = classify_exception(exc)
            result.update(status=status, correct=False, cuda_error=sticky, traceback=traceback.format_exc(),
                          message=f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}")
            if not sticky and self.device.type == "cuda":
                try:
                    torch.cuda.synchronize(self.device)
                except Exception:  # the error surfaced late: still sticky
                    result["cuda_error"] = True
            if result["cuda_error"]:
                self.poisoned = result["message"][:200]
        finally:
            forget_candidate(module)
        return result

    def _check_seed(self, entry: Callable[..., Any], k: int, when: str) -> tuple[list[dict[str, Any]], str]:
        """Runs the candidate on seed k with poisoned outputs; returns (checks, cheat).
        Seed 0 is run twice on the same buffers (``again``)."""
        return self._check_set(entry, self.inputs[k], self.outputs[k], k, "", when, self._seed_errors(k)[1],
                               again=k == 0)

    def _check_set(self, entry: Callable[..., Any], pristine: list[torch.Tensor], refs: list[torch.Tensor],
                   k: int, edge: str, when: str, allowance: dict[str, torch.Tensor] | None = None,
                   again: bool = False) -> tuple[list[dict[str, Any]], str]:
        """Runs the candidate on one input set (seed k, or edge case ``edge`` with k = 0)
        with poisoned outputs; returns (checks, cheat). ``allowance`` (eager's per-element
        error scale on the set, by output name) widens each element's tolerance by the
        problem's EAGER_ERROR_MULTIPLE times it (gpu_checks.compare).

        Inputs and outputs are guarded buffers (guarded_buffers.py): poison before and
        after each, so a float read past an input is NaN (the output comes out wrong)
        and a write outside any buffer is a cheat ("wrote outside output.0: ...").

        With ``again``, a candidate correct on the first call is called once more on the
        same buffers, outputs poisoned again, and checked again: every other check uses
        fresh buffers, while a caller reusing its buffers meets what a candidate keeps
        per buffer (a CUDA-graph entry replays its captured graph there)."""
        inputs = [guarded_clone(t) for t in pristine]
        outs = self._guarded_outputs(refs)
        for o in outs:
            fill_poison(o)
        guarded = inputs + outs  # our own references: the candidate may rebind list items
        self.clock.synchronize()
        entry(inputs, outs)
        # Snapshot on the current stream: work the candidate left on another stream
        # is not ordered before it.
        snapshot = [o.clone() for o in outs]
        self.clock.synchronize()
        overrides = self.manifest.get("tolerance", {})
        names = [t["name"] for t in self.manifest["outputs"]]

        def tampered(when: str) -> str:
            """A write outside the buffers or into an input, as the cheat message, or ""."""
            outside = first_guard_message(guarded, [t["name"] for t in self.manifest["inputs"]] + names)
            if outside:
                return f"{outside} ({when})"
            for spec, a, b in zip(self.manifest["inputs"], inputs, pristine):
                if not same_bits(a, b):
                    return f"mutated input {spec['name']} ({when})"
            return ""

        cheat = tampered(when)
        if cheat:
            return [], cheat
        snapshot = set_shapes.trim_outputs(self.manifest["outputs"], snapshot, refs)
        multiple = self._eager_error_multiple()
        extra = [(allowance or {}).get(n) for n in names]
        checks = [compare(s, ref, k, n, overrides, x, multiple) for s, ref, n, x in zip(snapshot, refs, names, extra)]
        for c in checks:
            c["edge_case"] = edge
        if not all(c["passed"] for c in checks):
            late_outs = set_shapes.trim_outputs(self.manifest["outputs"], outs, refs)
            late = [compare(o, ref, k, n, overrides, x, multiple)
                    for o, ref, n, x in zip(late_outs, refs, names, extra)]
            if all(c["passed"] for c in late):
                return checks, ("outputs were complete only after a device-wide synchronize: work left "
                                f"running on another stream after return ({when})")
            return checks, ""
        if not again:
            return checks, ""
        for o in outs:
            fill_poison(o)
        self.clock.synchronize()
        entry(inputs, outs)
        self.clock.synchronize()
        cheat = tampered(f"{when}, second call with the same buffers")
        if cheat:
            return [], cheat
        second = set_shapes.trim_outputs(self.manifest["outputs"], outs, refs)
        repeated = [compare(o, ref, k, n, overrides, x, multiple) for o, ref, n, x in zip(second, refs, names, extra)]
        if all(c["passed"] for c in repeated):
            return checks, ""
        for c in repeated:
            c["edge_case"] = edge
            c["note"] = (c["note"] + "; " if c["note"] else "") + "on a second call with the same buffers"
        return repeated, ""

    def _guarded_outputs(self, refs: list[torch.Tensor]) -> list[torch.Tensor]:
        """Guarded, uninitialized output buffers for one call: the shapes and dtypes of
        set_shapes.output_buffers (a bounded output at its bound shape), asked of it on
        the meta device so nothing is allocated twice."""
        shapes = set_shapes.output_buffers(self.manifest["outputs"],
                                           [torch.empty_like(r, device="meta") for r in refs])
        return [guarded_empty(m.shape, m.dtype, r.device) for m, r in zip(shapes, refs)]

    def _stale_result(self, entry: Callable[..., Any], pristine: list[torch.Tensor], refs: list[torch.Tensor],
                      edge: str) -> str:
        """Why an output wrong on edge case ``edge`` is a result reused from an earlier
        call (it equals the reference of a seed or of another edge case), else ""."""
        inputs = [t.clone() for t in pristine]
        outs = set_shapes.output_buffers(self.manifest["outputs"], refs)
        entry(inputs, outs)
        self.clock.synchronize()
        outs = set_shapes.trim_outputs(self.manifest["outputs"], outs, refs)
        earlier = [(f"seed {k}", o) for k, o in enumerate(self.outputs)]
        earlier += [(f"edge case '{e.name}'", e.outputs) for e in self.edges if e.name != edge]
        for i, (out, ref) in enumerate(zip(outs, refs)):
            for where, other in earlier:
                if not same_bits(other[i], ref) and same_bits(out, other[i]):
                    return (f"{self.manifest['outputs'][i]['name']} on edge case '{edge}' is the result for {where}: "
                            "a result reused from an earlier call")
        return ""

    def _kernel_origin(self, entry: Callable[..., Any], own: tuple[list[str], bool, str]) -> tuple[dict[str, Any], str]:
        """Profiles one call on seed 0 and checks that every device kernel it ran is
        the candidate's own or allowed (kernel_origin.py). Returns (the result's
        "kernel_origin" object, the rejection message or "")."""
        names, exact, source = own
        report: dict[str, Any] = {"checked": False, "own": [], "allowed": [], "foreign": [], "note": ""}
        if SUSPICIOUS_SOURCE.search(source):
            word = SUSPICIOUS_SOURCE.search(source).group(0)
            return report, (f"the candidate's source mentions '{word}': a launcher that can tell when it is "
                            "profiled could dodge the kernel-origin check")
        if self.device.type != "cuda":
            report["note"] = "not checked: no CUDA device (TRITON_INTERPRET=1 records no kernels)"
            return report, ""
        if not source:
            report["note"] = "not checked: no source beside the shared object to read the __global__ names from"
            return report, ""
        inputs = [t.clone() for t in self.inputs[0]]
        outs = set_shapes.output_buffers(self.manifest["outputs"], self.outputs[0])
        launched = profile_launches(lambda: entry(inputs, outs), self.clock.synchronize)
        verdict = foreign_kernels(launched, names, exact)
        report.update(checked=True, own=verdict.own, allowed=[f"{r}: {n}" for n, r in verdict.allowed],
                      foreign=[n for n, _ in verdict.foreign])
        if not verdict.own and not verdict.foreign:
            report["note"] = "the call launched none of the candidate's kernels"
        return report, verdict.reason()

    def _check_and_time(self, entry: Callable[..., Any], measure: bool, config: TimingConfig,
                        result: dict[str, Any], own: tuple[list[str], bool, str] = ([], True, "")) -> None:
        # Each step's wall time on stderr (the run's logs/gpu_runner.log), so that a
        # candidate killed at --candidate-timeout leaves where its time went.
        started = [time.monotonic()]

        def step(what: str) -> None:
            now = time.monotonic()
            print(f"gpu_run: {what}: {now - started[0]:.1f} s", file=sys.stderr, flush=True)
            started[0] = now

        for k in range(len(self.inputs)):
            checks, cheat = self._check_seed(entry, k, "seed check")
            step(f"seed {k} checked (the first call compiles)" if k == 0 else f"seed {k} checked")
            result["checks"].extend(checks)
            if cheat:
                result.update(status="rejected_by_check", message=cheat)
                return
        if all(c["passed"] for c in result["checks"]):
            for edge_set in self.edges:
                name, ins, refs = edge_set.name, edge_set.inputs, edge_set.outputs
                checks, cheat = self._check_set(entry, ins, refs, 0, name, f"edge case '{name}'",
                                                edge_set.allowance)
                step(f"edge case '{name}' checked")
                result["checks"].extend(checks)
                if cheat:
                    result.update(status="rejected_by_check", message=cheat)
                    return
                if not all(c["passed"] for c in checks):
                    stale = self._stale_result(entry, ins, refs, name)
                    if stale:
                        result.update(status="rejected_by_check", message=stale)
                        return
                    break
        failed = [c for c in result["checks"] if not c["passed"]]
        if failed:
            c = failed[0]
            index = [t["name"] for t in self.manifest["outputs"]].index(c["output"])
            edge = next((e for e in self.edges if e.name == c["edge_case"]), None) if c["edge_case"] else None
            if edge is not None:
                where, refs = f"edge case '{edge.name}' ({edge.description})", edge.outputs
                errors, scales = edge.reference_error, edge.allowance
            else:
                k = c["seed_index"]
                (errors, scales), where, refs = self._seed_errors(k), f"seed {k}", self.outputs[k]
            dtype_atol = tolerance_for(refs[index].dtype, self.manifest.get("tolerance", {}))[0]
            result.update(status="incorrect", message=mismatch_message(c, where, refs[index].numel())
                          + allowance_note(errors, scales.get(c["output"]), self._eager_error_multiple(), dtype_atol,
                                           c["output"]))
            return
        origin, foreign = self._kernel_origin(entry, own)
        step("kernel origin profiled")
        result["kernel_origin"] = origin
        if foreign:
            result.update(status="rejected_by_check", message=foreign)
            return
        result["correct"] = True
        if not measure:
            return
        inputs = [t.clone() for t in self.inputs[0]]
        outs = set_shapes.output_buffers(self.manifest["outputs"], self.outputs[0])
        shapes = [(o.shape, o.dtype) for o in outs]
        fns = {"candidate": lambda: entry(inputs, outs),
               "candidate_dropin": lambda: entry(inputs, [torch.empty(s, dtype=d, device=self.device)
                                                          for s, d in shapes])}
        fns.update(self._baseline_fns())
        result["samples_us"] = time_interleaved(self.clock, fns, config)
        step(f"timed ({', '.join(fns)})")
        # Results must not depend on earlier calls: check every seed again, last first.
        for k in reversed(range(len(self.inputs))):
            checks, cheat = self._check_seed(entry, k, "after timing")
            step(f"seed {k} checked again")
            if cheat or not all(c["passed"] for c in checks):
                result.update(status="rejected_by_check", correct=False, message=cheat or (
                    f"seed {k} is wrong when checked again after timing: results depend on earlier calls"))
                return

    def bandwidth(self, params: dict[str, Any]) -> dict[str, Any]:
        """Device-to-device copy bandwidth: {"copy_gbps", "bytes", "samples_us"}.

        Params: bytes (default 1 GiB; each copy reads and writes this many). The figure
        counts bytes read plus bytes written per second (1e9), median of 20 copies
        (STREAM's copy convention; the H200 datasheet gives 4.8 TB/s peak).
        """
        method = "gpu_bandwidth"
        device = self._require_device(method)
        nbytes = get_param(params, method, "bytes", int, 1 << 30)
        if nbytes < (1 << 20):
            raise ProtocolError(f"{method}: bytes must be at least 1 MiB, got {nbytes}")
        src = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
        dst = torch.empty_like(src)
        clock = Clock(device)
        for _ in range(3):
            dst.copy_(src)
        clock.synchronize()
        samples = clock.time_calls(lambda: dst.copy_(src), 20)
        median = sorted(samples)[len(samples) // 2]
        del src, dst
        return {"copy_gbps": 2 * (nbytes // 4) * 4 / (median * 1e-6) / 1e9, "bytes": nbytes,
                "samples_us": samples}
