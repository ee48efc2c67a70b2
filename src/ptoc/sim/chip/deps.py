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
of their output waits for all of them.
"""

from __future__ import annotations

from ptoc.sim.task import Task


class DependencyMap:
    """The latest writers of every GM allocation, updated task by task."""

    def __init__(self):
        self._writers: dict[str, list[tuple[object, int, int]]] = {}

    def add(self, task: Task) -> tuple[int, ...]:
        """The tasks ``task`` must follow (inferred and explicit, sorted); then record its
        writes."""
        deps = {d for d in task.deps}
        launch = task.launch_id
        for region in task.reads:
            for written, writer, writer_launch in self._writers.get(region.name, ()):
                if writer_launch != launch and written.overlaps(region):
                    deps.add(writer)
        for region in task.writes:
            kept = [entry for entry in self._writers.get(region.name, ())
                    if entry[2] == launch or not region.covers(entry[0])]
            kept.append((region, task.index, launch))
            self._writers[region.name] = kept
        deps.discard(task.index)
        return tuple(sorted(deps))
