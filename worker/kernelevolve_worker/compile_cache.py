"""The eager model and its torch.compile version, kept between problems in one GPU
runner process (issue 22, suite throughput).

A runner now serves many problems (the C++ WorkerPool hands it from one run to the
next); compiling a model with Inductor costs seconds to a minute per problem. A later
``gpu_prepare`` of the same problem file, with the same overrides, tensor specs, seeds
and device, reuses both callables instead of compiling again (``compare`` runs one
problem once per policy; ``bench`` repeats suites). The key is a hash of the file's
bytes, so an edited problem compiles afresh.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable


def baseline_key(source_path: str, overrides: dict[str, Any], input_specs: list[dict[str, Any]],
                 seeds: list[int], device: str) -> str | None:
    """SHA-256 hex of everything that makes two baselines the same: the problem file's
    bytes, ``overrides`` ({NAME: value}), the ABI ``input_specs`` (name, role, shape,
    dtype; parameters come from the first seed's fixtures), ``seeds`` and ``device``
    ("cuda:0"). None when the file cannot be read (then nothing is cached).
    """
    try:
        source = Path(source_path).read_bytes()
    except OSError:
        return None
    h = hashlib.sha256(source)
    h.update(json.dumps([overrides, input_specs, seeds, device], sort_keys=True, default=str).encode())
    return h.hexdigest()


class CompiledBaselines:
    """Least-recently-used store of (eager, compiled) callables by baseline_key.

    Holds at most ``capacity`` problems (their models' parameters stay on the device);
    ``compiled`` may be None (torch.compile failed or was not asked for).
    """

    def __init__(self, capacity: int = 2) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[str, tuple[Callable[..., Any], Callable[..., Any] | None]] = OrderedDict()
        self.hits = 0

    def get(self, key: str | None) -> tuple[Callable[..., Any], Callable[..., Any] | None] | None:
        """The entry of ``key`` (now the most recent), or None."""
        if key is None or key not in self._entries:
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return self._entries[key]

    def put(self, key: str | None, eager: Callable[..., Any], compiled: Callable[..., Any] | None) -> None:
        """Stores an entry, dropping the least recently used beyond capacity."""
        if key is None or self._capacity <= 0:
            return
        self._entries[key] = (eager, compiled)
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
