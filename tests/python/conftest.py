"""Shared pytest fixtures: puts worker/ on sys.path and drives the worker as a
subprocess over pipes, the way the C++ side does."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKER_DIR = REPO_ROOT / "worker"
PROBLEMS_DIR = REPO_ROOT / "problems" / "level1"
TEST_PROBLEMS_DIR = Path(__file__).resolve().parent / "problems"
BAD_PROBLEMS_DIR = Path(__file__).resolve().parent / "bad_problems"

if str(WORKER_DIR) not in sys.path:
    sys.path.insert(0, str(WORKER_DIR))

# Small timing budget so a load costs milliseconds, not seconds.
FAST_BASELINE = {"warmup_seconds": 0.0, "min_time_seconds": 0.0, "min_repetitions": 3, "max_repetitions": 5}
RESPONSE_TIMEOUT_S = 60.0


class WorkerProcess:
    """A running ``python -m kernelevolve_worker`` with JSON-line request helpers."""

    def __init__(self, extra_env: dict[str, str] | None = None) -> None:
        """Starts the worker with this process's environment plus ``extra_env`` (e.g.
        {"TRITON_INTERPRET": "1"} for a GPU runner on CPU tensors)."""
        env = dict(os.environ, PYTHONPATH=str(WORKER_DIR), **(extra_env or {}))
        self.proc = subprocess.Popen([sys.executable, "-m", "kernelevolve_worker"], cwd=REPO_ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._lines: queue.Queue[bytes] = queue.Queue()
        self.stderr_chunks: list[bytes] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self._lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr_chunks.append), daemon=True).start()
        self._next_id = 1

    @staticmethod
    def _pump(stream: Any, sink: Any) -> None:
        for line in iter(stream.readline, b""):
            sink(line)

    def send_raw(self, line: bytes) -> None:
        """Writes one raw line (newline appended) to the worker's stdin."""
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read_response(self, timeout: float = RESPONSE_TIMEOUT_S) -> dict[str, Any]:
        """Next stdout line, parsed as JSON (fails the test when it is not JSON)."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"worker sent no response within {timeout} s; stderr: {self.stderr_text()[-2000:]}")
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Sends a request and returns its response (checks the id is echoed)."""
        request_id = self._next_id
        self._next_id += 1
        doc = {"id": request_id, "method": method}
        if params is not None:
            doc["params"] = params
        self.send_raw(json.dumps(doc).encode())
        response = self.read_response()
        assert response["id"] == request_id
        return response

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """request() that asserts ok and returns the result."""
        response = self.request(method, params)
        assert response["ok"], response
        return response["result"]

    def stderr_text(self) -> str:
        return b"".join(self.stderr_chunks).decode(errors="replace")

    def close(self) -> int:
        """Closes stdin (EOF) and returns the exit status."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def write_problem(path: Path, args: str, result: str, inputs: str, prelude: str = "") -> Path:
    """Writes a KernelBench-format problem file: ``prelude`` lines after ``import torch``,
    ``forward(self, <args>)`` returning ``result``, ``get_inputs()`` returning ``inputs``
    (a Python list expression) and no init inputs. Returns ``path``."""
    path.write_text(f"import torch\n{prelude}"
                    "class Model(torch.nn.Module):\n"
                    f"    def forward(self, {args}):\n"
                    f"        return {result}\n"
                    "def get_inputs():\n"
                    f"    return {inputs}\n"
                    "def get_init_inputs():\n"
                    "    return []\n")
    return path


def load_params(path: Path, fixtures_dir: Path, **extra: Any) -> dict[str, Any]:
    """load_problem params with test defaults (one thread, 2 GB budget, fast baseline)."""
    params: dict[str, Any] = {"path": str(path), "overrides": {}, "seeds": [0, 1, 2],
                              "fixtures_dir": str(fixtures_dir), "threads": 1,
                              "memory_budget_bytes": 2 * 10**9, "baseline": dict(FAST_BASELINE)}
    params.update(extra)
    return params


@pytest.fixture(scope="session")
def worker() -> Iterator[WorkerProcess]:
    """One worker shared by the whole run (starting one imports torch, ~3 s)."""
    process = WorkerProcess()
    yield process
    process.close()


@pytest.fixture
def fresh_worker() -> Iterator[WorkerProcess]:
    """A worker of its own, for lifecycle tests."""
    process = WorkerProcess()
    yield process
    if process.proc.poll() is None:
        process.close()
