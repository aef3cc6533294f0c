"""Entry point: ``python -m kernelevolve_worker`` serves JSON-lines requests.

The real stdout (fd 1) carries protocol lines only. Before anything else is
imported, fd 1 is duplicated to a private handle for responses and then pointed at
stderr (fd 2), and sys.stdout is set to sys.stderr, so prints in problem files
(Python or C level) land on stderr and cannot corrupt the stream.

One bad request never ends the worker; EOF on stdin or a "shutdown" request exits 0.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO


def _claim_stdout() -> BinaryIO:
    """Returns a private binary handle on the original stdout and sends every later
    write to fd 1 (and sys.stdout) to stderr."""
    private_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(private_fd, "wb", buffering=0)


def main() -> int:
    """Serves requests until EOF or shutdown. Returns the exit status (0)."""
    response_stream = _claim_stdout()

    # Imported after the redirect: torch and problem files may print at import.
    import traceback

    from .protocol import (INTERNAL_ERROR, PROTOCOL_ERROR, ProtocolError, ResponseWriter, WorkerError,
                           encode_error, encode_ok, parse_request)
    from .session import WorkerSession

    writer = ResponseWriter(response_stream)
    session = WorkerSession()
    methods = {
        "hello": session.hello,
        "redirect_log": session.redirect_log,
        "load_problem": session.load_problem,
        "time_baseline": session.time_baseline,
    }
    # GPU runner methods (gpu_*): served by a separate worker process that the C++
    # side restarts after a crash, timeout or sticky CUDA error (gpu_runner.py).
    from .gpu_runner import GpuRunner
    runner = GpuRunner()
    methods.update(runner.methods())

    def release(params: dict) -> dict:
        """Frees the finished run's problem in both roles (issue 22: a pooled worker
        idles, then serves another run). Returns {"released": [what was freed]}."""
        return {"released": session.release() + runner.release()}

    methods["release"] = release
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return 0
        if not line.strip():
            continue
        request_id = None
        shutdown = False
        try:
            request = parse_request(line)
            request_id = request.id
            if request.method == "shutdown":
                response, shutdown = encode_ok(request_id, {}), True
            elif request.method in methods:
                response = encode_ok(request_id, methods[request.method](request.params))
            else:
                raise ProtocolError(f"unknown method '{request.method}' (known: "
                                    f"{', '.join(sorted([*methods, 'shutdown']))})")
        except ProtocolError as exc:
            rid = exc.request_id if exc.request_id is not None else request_id
            response = encode_error(rid, PROTOCOL_ERROR, exc.message, exc.traceback_text)
        except WorkerError as exc:
            response = encode_error(request_id, exc.kind, exc.message, exc.traceback_text)
        except (Exception, SystemExit) as exc:  # never let one request end the worker
            response = encode_error(request_id, INTERNAL_ERROR,
                                    f"internal error in the worker: {type(exc).__name__}: {exc}",
                                    traceback.format_exc())
        try:
            writer.write(response)
        except BrokenPipeError:
            return 0
        if shutdown:
            return 0


if __name__ == "__main__":
    sys.exit(main())
