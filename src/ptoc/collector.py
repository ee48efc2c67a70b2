"""Pausing Python's cyclic garbage collector around a simulation, which allocates many
small, acyclic per-instruction records: collector passes triggered by the allocation count
find nothing to free there; reference counting still frees everything acyclic at once.
The previous state is restored, so a nested pause and a caller that disabled the collector
itself are both respected.

Not used around a compile: measured there, the pause only defers the work (the first
allocation after it collects everything the compile allocated), 0 % net.
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
