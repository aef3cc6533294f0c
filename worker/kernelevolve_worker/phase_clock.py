"""Wall-clock seconds per named phase of one request (issue 22: where a problem's fixed
cost goes).

A request handler wraps its steps in ``with clock.phase("name"):``; the request's
answer carries ``clock.seconds`` as "phase_seconds" and the C++ side records them as
parts of its own phase (core/phase_times.h). Phases must not nest: each second belongs
to one of them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class PhaseClock:
    """Accumulates time.perf_counter() seconds per phase name, in first-seen order."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Adds the wall time of the ``with`` body (also when it raises) to ``name``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + (time.perf_counter() - start)
