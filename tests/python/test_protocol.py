"""Worker lifecycle and framing: malformed lines, unknown methods, EOF, shutdown.

Each fresh worker costs a torch import (~3 s), so the lifecycle checks share two.
"""

from __future__ import annotations

from pathlib import Path

from conftest import FAST_BASELINE, PROBLEMS_DIR, WorkerProcess, load_params


def test_lifecycle_errors_keep_the_worker_serving_until_shutdown(fresh_worker: WorkerProcess,
                                                                 tmp_path: Path) -> None:
    # Nothing loaded yet.
    response = fresh_worker.request("time_baseline", FAST_BASELINE)
    assert response["error"]["kind"] == "protocol_error" and "no problem loaded" in response["error"]["message"]

    # Malformed lines: protocol_error, id null when unreadable.
    fresh_worker.send_raw(b"{not json")
    response = fresh_worker.read_response()
    assert response["id"] is None and response["ok"] is False
    assert response["error"]["kind"] == "protocol_error"
    fresh_worker.send_raw(b"[1, 2]")
    assert fresh_worker.read_response()["error"]["kind"] == "protocol_error"
    fresh_worker.send_raw(b'{"id": "seven", "method": "hello"}')
    assert fresh_worker.read_response()["id"] is None
    fresh_worker.send_raw(b"")  # blank lines are ignored
    response = fresh_worker.request("frobnicate", {})
    assert response["ok"] is False and response["error"]["kind"] == "protocol_error"
    assert "frobnicate" in response["error"]["message"]

    # A load, then a failed load: the failed one forgets the previous problem.
    fresh_worker.call("load_problem", load_params(PROBLEMS_DIR / "tanh.py", tmp_path, seeds=[0],
                                                  overrides={"batch_size": "2", "dim": "8"}))
    assert fresh_worker.call("time_baseline", FAST_BASELINE)["samples_us"]
    failed = fresh_worker.request("load_problem", load_params(PROBLEMS_DIR / "tanh.py", tmp_path, overrides={"x": "1"}))
    assert failed["ok"] is False
    assert fresh_worker.request("time_baseline", FAST_BASELINE)["error"]["kind"] == "protocol_error"

    assert fresh_worker.call("shutdown") == {}
    assert fresh_worker.proc.wait(timeout=30) == 0


def test_eof_exits_zero(fresh_worker: WorkerProcess) -> None:
    fresh_worker.call("hello")
    assert fresh_worker.close() == 0
