"""Pausing Python's cyclic garbage collector around work that allocates many small,
acyclic objects: a compile (IR nodes, PTO records) and a simulation (per-instruction
records). Collector passes triggered by the allocation count find nothing to free there
and cost 3-10 % of the work; reference counting still frees everything acyclic at once.
The previous state is restored, so a pause nested in another (a simulation inside the
compile's dbC check) and a caller that disabled the collector itself are both respected.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body with the cyclic collector disabled, then restore its state."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
