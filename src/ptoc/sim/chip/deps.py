"""Which tasks wait for which: the device runtime's dependency inference, plus what the
program states.

PyPTO's runtime (simpler's TensorMap / overlap map, docs/orchestrator.md §7 and
docs/buffer-abi.md) infers edges from each task's tensor arguments in submission order:

* an ``In`` (or ``InOut``) region depends on the latest task that wrote overlapping bytes
  (read after write);
* an ``Out`` (or ``InOut``) region becomes the latest writer of its bytes; it gets no edge
  to earlier writers or readers (write after write and write after read are not inferred:
  the program states them with ``deps=[...]``, or the tasks race);
* overlap is by bytes: two views are compared by their byte spans and, when they share a
  row-major layout, axis by axis (``GMTensor.overlaps``); a writer a later write covers
  wholly is forgotten, one it covers in part stays a producer.

Blocks of one SPMD launch never depend on each other through inference, and a later reader
of their output waits for all of them. The launch is one task to the runtime: its lookups are
done once, before any of its blocks registers as a writer — every block waits for what the
first waits for (a block registered first must not hide an earlier launch's writers from the
next block of an ``InOut`` launch).
"""

from __future__ import annotations

from bisect import bisect_left

from ptoc.sim.task import Task


class DependencyMap:
    """The latest writers of every GM allocation, updated task by task."""

    def __init__(self):
        self._writers: dict[str, _Writers] = {}
        self._launch: tuple[int, set[int]] | None = None   # the open launch's lookups

    def add(self, task: Task) -> tuple[int, ...]:
        """The tasks ``task`` must follow (inferred and explicit, sorted); then record its
        writes. Blocks of one launch are submitted one after another and share its lookups."""
        launch = task.launch_id
        if self._launch is None or self._launch[0] != launch:
            inferred: set[int] = set()
            for region in task.reads:
                writers = self._writers.get(region.name)
                if writers is not None:
                    inferred.update(w for w, w_launch in writers.overlapping(region)
                                    if w_launch != launch)
            self._launch = (launch, inferred)
        deps = set(task.deps) | self._launch[1]
        for region in task.produced():
            self._writers.setdefault(region.name, _Writers()).write(region, task.index, launch)
        deps.discard(task.index)
        return tuple(sorted(deps))


class _Writers:
    """One allocation's producer regions, kept sorted by first byte so a lookup visits only
    the regions whose byte spans can reach it."""

    def __init__(self):
        self.los: list[int] = []
        self.entries: list[tuple[object, int, int]] = []
        self.longest = 0

    def overlapping(self, region):
        lo, hi = region.byte_span()
        start = bisect_left(self.los, lo - self.longest)
        end = bisect_left(self.los, hi)
        for written, writer, launch in self.entries[start:end]:
            if written.overlaps(region):
                yield writer, launch

    def write(self, region, task: int, launch: int) -> None:
        """``region`` is now produced by ``task``: earlier producers it covers wholly are
        forgotten (blocks of one launch are kept: a reader waits for all of them)."""
        lo, hi = region.byte_span()
        start = bisect_left(self.los, lo)
        end = bisect_left(self.los, hi)
        kept = [e for e in self.entries[start:end]
                if e[2] == launch or not region.covers(e[0])]
        self.entries[start:end] = kept
        self.los[start:end] = [e[0].byte_span()[0] for e in kept]
        at = bisect_left(self.los, lo)
        self.los.insert(at, lo)
        self.entries.insert(at, (region, task, launch))
        self.longest = max(self.longest, hi - lo)
