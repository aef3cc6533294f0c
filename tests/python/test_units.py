"""Direct tests of the worker's pure helpers (no subprocess)."""

from __future__ import annotations

import json
import types

import pytest

from kernelevolve_worker.memory_check import format_bytes
from kernelevolve_worker.problem_loader import apply_overrides, parse_override_value
from kernelevolve_worker.protocol import (PROTOCOL_ERROR, ProblemError, ProtocolError, encode_error, encode_ok,
                                          one_line, parse_request)


@pytest.mark.parametrize("raw, expected", [("4", 4), (" 0.5 ", 0.5), ("(1, 2)", (1, 2)), ("True", True),
                                            ("relu", "relu"), ("'x'", "x"), (7, 7)])
def test_parse_override_value(raw: object, expected: object) -> None:
    assert parse_override_value(raw) == expected


def test_apply_overrides_sets_names_and_rejects_unknown() -> None:
    module = types.ModuleType("fake")
    module.batch_size, module.dim, module.flag = 64, 128, True
    apply_overrides(module, {"dim": "16", "batch_size": "2.5"}, "p.py")
    assert (module.batch_size, module.dim) == (2.5, 16)
    with pytest.raises(ProblemError, match=r"p.py: --set nope=1: .*constants: batch_size=2.5, dim=16\)"):
        apply_overrides(module, {"nope": "1"}, "p.py")
    # A numeric constant takes numbers only; an integral float for an int is an int.
    with pytest.raises(ProblemError, match=r"p.py: --set dim=abc: 'dim' is a number in the file \(dim=16\); 'abc'"):
        apply_overrides(module, {"dim": "abc"}, "p.py")
    apply_overrides(module, {"dim": "1e3"}, "p.py")
    assert module.dim == 1000 and isinstance(module.dim, int)


@pytest.mark.parametrize("nbytes, text", [(0, "0 B"), (999, "999 B"), (1536, "1.5 KB"), (4.0e10, "40.0 GB"),
                                          (11_700_000_000, "11.7 GB"), (2.5e15, "2500.0 TB")])
def test_format_bytes(nbytes: float, text: str) -> None:
    assert format_bytes(nbytes) == text


def test_parse_request_errors_keep_the_id_when_readable() -> None:
    assert parse_request(b'{"id": 3, "method": "hello"}\n').params == {}
    with pytest.raises(ProtocolError) as info:
        parse_request('{"id": 3, "method": 5}')
    assert info.value.request_id == 3
    for bad in ('{"id": true, "method": "x"}', "{", "null", '{"id": 1, "method": "x", "params": []}'):
        with pytest.raises(ProtocolError):
            parse_request(bad)


def test_encoded_lines_are_strict_single_line_json() -> None:
    line = encode_ok(1, {"x": float("inf"), "ys": [float("nan"), 1.5]})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["result"] == {"x": "inf", "ys": ["nan", 1.5]}
    error = json.loads(encode_error(None, PROTOCOL_ERROR, "a\nb   c", "tb"))
    assert error == {"id": None, "ok": False, "error": {"kind": "protocol_error", "message": "a b c", "traceback": "tb"}}


def test_one_line_cuts_long_text() -> None:
    assert one_line("x" * 50, limit=10) == "xxxxxxx..."
