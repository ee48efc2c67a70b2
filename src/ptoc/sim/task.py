"""One task of a task graph: a kernel call with its arguments bound to regions of GM.

Why a record of its own, in the simulator: the orchestration interpreter (``ptoc.runtime``)
produces tasks and a dispatcher runs them — today one after the other on one core, on the
chip (``ptoc.sim.chip``) over many cores in dependency order. Both sides agree on this
record: which kernel, which GM regions it reads and writes (from its parameters'
directions), where in the user's source it was launched, and the dependencies the program
states explicitly.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from ptoc.errors import SimulationError, SourceLoc

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
        launch: the launch the task belongs to: the blocks of one SPMD launch share it and
            get no inferred dependencies among themselves (None: its own ``index``).
        block: (block index, block count) of an SPMD block, None for a plain task (a
            kernel that reads its block identity gets them as its last two ``args``:
            ``ptoc.pto.launch``).
        sync_start: the blocks of this launch start together.
        directions: per argument, how the runtime tracks it (``ptoc.dtypes.ArgDirection``
            from DeriveCallDirections; empty when the pass did not run): ``input`` waits for
            the region's last writer, ``output_existing`` only becomes its writer, ``inout``
            both, ``no_dep`` neither.
        manual: launched inside ``pl.manual_scope``: only ``deps`` order it.
        produces: the regions the task registers as their latest writer, for later tasks'
            lookups (None: all of ``writes``); a ``pl.manual_scope`` task or a ``no_dep``
            slot registers nothing, though it may still write its ``writes``.
        predicate: the dispatch predicate (``predicate=(t[i] > 0)``): evaluated when the
            task's dependencies are met; when false the task is skipped — it runs nothing
            and writes nothing, but still settles as a dependency of later tasks.
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
    launch: int | None = None
    block: tuple[int, int] | None = None
    sync_start: bool = False
    directions: tuple = ()
    manual: bool = False
    produces: tuple[GMTensor, ...] | None = None
    predicate: "DispatchPredicate | None" = None

    def produced(self) -> tuple[GMTensor, ...]:
        return self.writes if self.produces is None else self.produces

    @property
    def launch_id(self) -> int:
        return self.index if self.launch is None else self.launch

    def name(self) -> str:
        """``matmul#3`` (``matmul#3[5/24]`` for block 5 of a 24-block launch)."""
        block = f"[{self.block[0]}/{self.block[1]}]" if self.block else ""
        return f"{self.kernel}#{self.index}{block}"

    def where(self) -> str:
        return f"{self.loc.file}:{self.loc.line}" if self.loc is not None else "<unknown>"

    def label(self) -> str:
        """``matmul#3 at prog.py:42``: what reports call the task."""
        where = f" at {self.where()}" if self.loc is not None else ""
        return f"{self.name()}{where}"


@dataclass(frozen=True)
class DispatchPredicate:
    """``tensor[index] OP target``, read by the scheduler at a task's dispatch point (after
    its dependencies; the orchestration never reads it). ``text`` is how the source wrote it
    (for reports)."""

    tensor: GMTensor
    index: tuple[int, ...]
    op: str
    target: int
    text: str

    def holds(self) -> bool:
        """The comparison on the element's current value."""
        value = int(self.tensor.array()[self.index])
        return COMPARE[self.op](value, self.target)

    def element(self) -> GMTensor:
        """The one-element region the dispatch point reads."""
        return self.tensor.slice(self.index, (1,) * len(self.index))

    def byte_span(self) -> tuple[int, int]:
        """[lo, hi) of the element in its allocation (what the dispatch point reads)."""
        return self.element().byte_span()


def check_predicate_read(defined, task: "Task") -> None:
    """The dispatch point reads the predicate's element: report it if nothing wrote it
    (``ptoc.sim.unwritten``)."""
    pred = task.predicate
    defined.host_read(pred.element(), f"the dispatch predicate ({pred.text}) of {task.name()}",
                      task.loc)


#: the comparisons a dispatch predicate (and an orchestration expression) may make
COMPARE = {"==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt,
           ">=": operator.ge, "<=": operator.le}


class UndeclaredWriteError(SimulationError):
    """A task wrote GM bytes that none of its written (``Out``/``InOut``) regions holds."""


def check_writes(task: Task, instructions) -> None:
    """Every GM byte the task wrote (``instructions``: its records or Instrs) lies in a
    region it declared written (``Out``/``InOut``): the dependencies of later tasks are
    inferred from those declarations."""
    check_write_spans(task, ((access.buffer, access.lo, access.hi,
                              f"{record.name} at {record.file} line {record.line}")
                             for record in instructions for access in record.writes))


def check_write_spans(task: Task, spans) -> None:
    """``check_writes`` on (buffer, lo, hi, which op) spans."""
    declared: dict[str, list[tuple[int, int]]] = {}
    for region in task.writes:
        declared.setdefault(f"GM %{region.name}", []).append(region.byte_span())
    for buffer, lo, hi, op in spans:
        if not buffer.startswith("GM %"):
            continue
        if any(a <= lo and hi <= b for a, b in declared.get(buffer, ())):
            continue
        name = _param_of(task, buffer, lo)
        what = f"its In parameter {name!r}" if name else "GM outside its Out parameters"
        raise UndeclaredWriteError(
            f"kernel '{task.kernel}' wrote {what} ({buffer} bytes [{lo}, {hi}), {op}); the "
            "write would go unseen by the tasks that depend on it", task.loc,
            hint="declare the parameter pl.Out or pl.InOut")


def _param_of(task: Task, buffer: str, lo: int) -> str | None:
    """The parameter whose region holds byte ``lo`` of ``buffer`` (for the message)."""
    for name, arg in zip(task.params, task.args):
        span = getattr(arg, "byte_span", None)
        if span is not None and f"GM %{arg.name}" == buffer:
            a, b = span()
            if a <= lo < b:
                return name
    return None
