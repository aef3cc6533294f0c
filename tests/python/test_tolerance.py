"""Per-problem tolerance overrides: TOLERANCE in the problem file -> manifest.json."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from kernelevolve_worker.fixtures import build_manifest
from kernelevolve_worker.problem_loader import problem_tolerance
from kernelevolve_worker.protocol import ProblemError


def _module(**names: object) -> types.ModuleType:
    module = types.ModuleType("fake")
    for key, value in names.items():
        setattr(module, key, value)
    return module


def test_no_tolerance_means_defaults() -> None:
    assert problem_tolerance(_module(), "p.py") == {}
    manifest = build_manifest("p", Path("p.py"), [], [], [0], {})
    assert "tolerance" not in manifest


def test_tolerance_goes_into_the_manifest() -> None:
    tol = problem_tolerance(_module(TOLERANCE={"float32": {"atol": 1e-3, "rtol": 0}}), "p.py")
    assert tol == {"float32": {"atol": 1e-3, "rtol": 0.0}}
    manifest = build_manifest("p", Path("p.py"), [], [], [0], {}, tol)
    assert manifest["tolerance"] == {"float32": {"atol": 1e-3, "rtol": 0.0}}


@pytest.mark.parametrize("value, message", [
    ([1e-3], r"p.py: TOLERANCE is a list"),
    ({"float31": {"atol": 1, "rtol": 1}}, r"p.py: TOLERANCE names dtype 'float31'; known dtypes: bfloat16"),
    ({"float32": {"atol": 1}}, r"TOLERANCE\['float32'\] must have exactly 'atol' and 'rtol'"),
    ({"float32": {"atol": -1, "rtol": 0}}, r"TOLERANCE\['float32'\]\['atol'\] = -1; expected a finite number >= 0"),
    ({"float32": {"atol": "1", "rtol": 0}}, r"\['atol'\] = '1'"),
])
def test_bad_tolerance_names_the_field(value: object, message: str) -> None:
    with pytest.raises(ProblemError, match=message):
        problem_tolerance(_module(TOLERANCE=value), "p.py")
