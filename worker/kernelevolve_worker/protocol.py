"""JSON-lines protocol between the C++ side and the worker.

One request per line on stdin::

    {"id": <int>, "method": <str>, "params": {...}}

One response per line on the worker's private stdout handle::

    {"id": <int>, "ok": true, "result": {...}}
    {"id": <int|null>, "ok": false,
     "error": {"kind": "problem_error"|"protocol_error"|"internal_error",
               "message": "<one line>", "traceback": "<text or empty>"}}

Responses are strict JSON (no NaN/Infinity), UTF-8, terminated by a newline.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, BinaryIO

PROBLEM_ERROR = "problem_error"
PROTOCOL_ERROR = "protocol_error"
INTERNAL_ERROR = "internal_error"

# Longest message kept on the one error line; the full text stays in the traceback.
_MAX_MESSAGE_CHARS = 2000


def one_line(text: str, limit: int = _MAX_MESSAGE_CHARS) -> str:
    """Collapses ``text`` onto a single line (newlines and runs of spaces become one
    space) and cuts it to ``limit`` characters, marking the cut with "...".
    """
    collapsed = " ".join(str(text).split())
    if len(collapsed) > limit:
        collapsed = collapsed[: limit - 3] + "..."
    return collapsed


class WorkerError(Exception):
    """An error answered to the caller as ``ok: false``; the worker keeps serving.

    Attributes:
        kind: one of PROBLEM_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR.
        message: one readable line (newlines are collapsed).
        traceback_text: full traceback of the underlying cause, or "".
    """

    kind = INTERNAL_ERROR

    def __init__(self, message: str, traceback_text: str = "") -> None:
        self.message = one_line(message)
        self.traceback_text = traceback_text
        super().__init__(self.message)


class ProblemError(WorkerError):
    """The problem file is at fault (syntax, missing functions, reference raised,
    too big for the memory budget, ...). The message names the file and the cause."""

    kind = PROBLEM_ERROR


class ProtocolError(WorkerError):
    """The request is at fault (malformed JSON, unknown method, bad params).

    Attributes:
        request_id: the request's id when it could be read, else None.
    """

    kind = PROTOCOL_ERROR

    def __init__(self, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


@dataclass
class Request:
    """One parsed request line."""

    id: int
    method: str
    params: dict[str, Any] = field(default_factory=dict)


def parse_request(line: bytes | str) -> Request:
    """Parses one request line.

    Args:
        line: the raw line (UTF-8 bytes or str), with or without its newline.
    Returns:
        The Request.
    Raises:
        ProtocolError: malformed JSON, not an object, id not an int, method not a
            string, or params not an object. ``request_id`` is set when the id was
            readable so the caller can answer with it (None otherwise).
    """
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        doc = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"malformed request line: {exc}") from exc
    if not isinstance(doc, dict):
        raise ProtocolError(f"a request must be a JSON object, got {type(doc).__name__}")
    request_id = doc.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int):
        raise ProtocolError(f"request field 'id' must be an integer, got {request_id!r}")
    method = doc.get("method")
    if not isinstance(method, str):
        raise ProtocolError(f"request field 'method' must be a string, got {method!r}", request_id)
    params = doc.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ProtocolError(f"request field 'params' must be an object, got {type(params).__name__}",
                            request_id)
    return Request(id=request_id, method=method, params=params)


def _finite(value: Any) -> Any:
    """Replaces non-finite floats (which strict JSON cannot hold) by strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def encode_ok(request_id: int, result: dict[str, Any]) -> bytes:
    """Encodes a success response line (UTF-8, newline-terminated)."""
    doc = {"id": request_id, "ok": True, "result": _finite(result)}
    return (json.dumps(doc, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")


def encode_error(request_id: int | None, kind: str, message: str, traceback_text: str = "") -> bytes:
    """Encodes an error response line (UTF-8, newline-terminated).

    Args:
        request_id: the request's id, or None when it could not be read.
        kind: PROBLEM_ERROR, PROTOCOL_ERROR or INTERNAL_ERROR.
        message: collapsed to one line.
        traceback_text: full traceback text or "".
    """
    doc = {
        "id": request_id,
        "ok": False,
        "error": {"kind": kind, "message": one_line(message), "traceback": traceback_text},
    }
    return (json.dumps(doc, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")


class ResponseWriter:
    """Writes response lines to a private binary handle (the original stdout)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def write(self, line: bytes) -> None:
        """Writes one encoded line and flushes. Raises BrokenPipeError if the reader left."""
        self._stream.write(line)
        self._stream.flush()


# ---- parameter validation helpers -------------------------------------------------------

_MISSING = object()


def get_param(params: dict[str, Any], method: str, name: str, kind: type | tuple[type, ...],
              default: Any = _MISSING) -> Any:
    """Reads ``params[name]`` and checks its type.

    Args:
        params: the request's params object.
        method: method name, for the message.
        name: the field.
        kind: accepted type(s); ints are accepted where float is asked for, bools never
            count as numbers.
        default: returned when the field is absent (or null); without it the field is
            required.
    Raises:
        ProtocolError: missing required field or wrong type.
    """
    value = params.get(name)
    if value is None:
        if default is _MISSING:
            raise ProtocolError(f"{method}: missing required param '{name}'")
        return default
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool) and bool not in kinds:
        raise ProtocolError(f"{method}: param '{name}' must be {_kind_name(kinds)}, got {value!r}")
    if not isinstance(value, kinds):
        raise ProtocolError(f"{method}: param '{name}' must be {_kind_name(kinds)}, got {value!r}")
    return value


def _kind_name(kinds: tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", dict: "an object",
             list: "a list", bool: "a boolean"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)
