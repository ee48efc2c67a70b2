"""One task of a task graph: a kernel call with its arguments bound to regions of GM.

Why a record of its own, in the simulator: the orchestration interpreter (``ptoc.runtime``)
produces tasks and a dispatcher runs them — today one after the other on one core, on the
chip (``ptoc.sim.chip``) over many cores in dependency order. Both sides agree on this
record: which kernel, which GM regions it reads and writes (from its parameters'
directions), where in the user's source it was launched, and the dependencies the program
states explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.errors import SourceLoc

from ptoc.sim.global_memory import GMTensor


@dataclass(eq=False)
class Task:
    """A kernel launch.

    Fields:
        index: position in submission order (unique in a run).
        kernel: the kernel's name; ``module`` its parsed Level-3 PTO.
        args: one value per kernel parameter, in order: a ``GMTensor`` for a tensor, a
            number for a scalar.
        reads / writes: the GM regions the task may read / write (``In`` parameters are
            read, ``Out`` written, ``InOut`` both) — what dependencies are inferred from.
        deps: indices of earlier tasks this one must follow, as the program states them
            (``pl.at(..., deps=[...])``), besides the inferred ones.
        loc: where the launch is in the user's source.
        params: the parameter names of ``args`` (for messages).
    """

    index: int
    kernel: str
    module: object
    args: tuple
    reads: tuple[GMTensor, ...] = ()
    writes: tuple[GMTensor, ...] = ()
    deps: tuple[int, ...] = ()
    loc: SourceLoc | None = None
    params: tuple[str, ...] = field(default=())

    def label(self) -> str:
        """``matmul#3 at prog.py:42``: what reports call the task."""
        where = f" at {self.loc.file}:{self.loc.line}" if self.loc is not None else ""
        return f"{self.kernel}#{self.index}{where}"
