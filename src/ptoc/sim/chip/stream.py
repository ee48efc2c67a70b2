"""A task's timing record: its instruction stream reduced to what the chip's timing needs.

Why a record apart from the instructions: the chip times a task graph from each task's
pipes, flags, costs and GM transfers — never from tile values. Kept compact (parallel
lists, no data closures), the record of a task is also valid for every *identical* task:
the same kernel with the same scalar arguments issues the same instructions whatever GM
regions its pointers are bound to, so its GM transfers are kept relative to the
parameters (param index, byte offset from the region's start) and re-based on each task's
own regions when it is timed. A task graph of many identical tasks is therefore issued
once when only timing is wanted (``ChipSimulator(numerics=False)``); with numerics every
task still runs its own data, exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.backend.pipes import QUEUE_PIPES, Pipe
from ptoc.errors import PtocError

from ptoc.sim.global_memory import GMTensor
from ptoc.sim.instr import BARRIER, WORK, Instr

_PIPE_INDEX = {p: i for i, p in enumerate(QUEUE_PIPES)}
#: pipe index of ``barrier(PIPE_ALL)`` (it has no queue)
ALL_PIPES = -1
_CUBE = {_PIPE_INDEX[p] for p in (Pipe.PIPE_M, Pipe.PIPE_MTE1, Pipe.PIPE_FIX)}
_VECTOR = {_PIPE_INDEX[Pipe.PIPE_V]}


@dataclass(frozen=True, slots=True)
class Transfer:
    """A GM transfer, relative to a parameter's region: ``rows`` runs of ``row_bytes``
    bytes, ``pitch`` apart, the first ``offset`` bytes after the region's start."""

    param: int
    write: bool
    nbytes: int
    offset: int
    rows: int
    pitch: int
    row_bytes: int
    atomic: bool = False
    op: str = ""            # the PTO op, e.g. ``pto.tstore at k.pto line 19`` (for reports)


@dataclass
class TaskStream:
    """One task's instructions for timing (index = ``seq``).

    ``core``: the task-local core of each instruction (0 for a one-core task; 0 = AIC and
    1.. = AIVs for a core group); ``pipe``: index in ``QUEUE_PIPES`` (``ALL_PIPES`` for a
    ``barrier(PIPE_ALL)``); ``kind``: ``instr.WORK/SET/WAIT/BARRIER``; ``flag``: an interned
    flag id (-1 for none); ``cost`` in cycles; ``deps``: task-local instructions that must
    end first (cross-core pipes); ``gm``: index in ``transfers`` or -1. ``reach`` is how
    many bytes after each parameter's region start the task touches (a record is reused
    only for regions at least that long). ``units`` names the cores; ``placement`` is
    ``aic``, ``aiv`` or ``group`` (what cores the task needs).
    """

    units: tuple[str, ...]
    placement: str
    core: list[int] = field(default_factory=list)
    pipe: list[int] = field(default_factory=list)
    kind: list[int] = field(default_factory=list)
    flag: list[int] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    deps: list[tuple[int, ...]] = field(default_factory=list)
    gm: list[int] = field(default_factory=list)
    transfers: list[Transfer] = field(default_factory=list)
    reach: dict[int, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.kind)

    def by_core(self) -> list[list[int]]:
        """The instructions of each task-local core, in issue order (computed once)."""
        found = self.__dict__.get("_by_core")
        if found is None:
            found = [[] for _ in self.units]
            for seq, local in enumerate(self.core):
                found[local].append(seq)
            self.__dict__["_by_core"] = found
        return found

    def fits(self, args) -> bool:
        """Whether every parameter's region leaves room for what the stream touches."""
        for param, reach in self.reach.items():
            region = args[param]
            if region.alloc.nbytes - region.start < reach:
                return False
        return True


class StreamError(PtocError, RuntimeError):
    """A GM access of a task that lies in none of its parameters' regions."""


def record_stream(instrs: list[Instr], args, params: tuple[str, ...], units: tuple[str, ...],
                  task_label: str) -> TaskStream:
    """The timing record of ``instrs`` (one task, issued with ``args`` bound to its
    parameters)."""
    flags: dict[tuple, int] = {}
    regions = [(i, a) for i, a in enumerate(args) if isinstance(a, GMTensor)]
    by_buffer: dict[str, list[tuple[int, GMTensor]]] = {}
    for i, region in regions:
        by_buffer.setdefault(f"GM %{region.name}", []).append((i, region))
    stream = TaskStream(units, "group" if len(units) > 1 else "aiv")
    cube = vector = False
    transfer_index: dict[tuple, int] = {}
    for ins in instrs:
        stream.core.append(ins.core)
        if ins.kind == BARRIER and ins.pipe is Pipe.PIPE_ALL:
            pipe = ALL_PIPES
        else:
            pipe = _PIPE_INDEX.get(ins.pipe, ALL_PIPES)
        stream.pipe.append(pipe)
        stream.kind.append(ins.kind)
        stream.flag.append(-1 if ins.flag is None else
                           flags.setdefault((ins.core, ins.flag), len(flags)))
        stream.cost.append(float(ins.cost))
        stream.deps.append(tuple(ins.deps))
        if ins.kind == WORK:
            cube |= pipe in _CUBE
            vector |= pipe in _VECTOR
        gm = -1
        for write, accesses in ((False, ins.reads), (True, ins.writes)):
            for access in accesses:
                if access.buffer.startswith("GM %"):
                    key = _transfer(access, write, by_buffer, params, task_label, ins)
                    gm = transfer_index.get(key[0])
                    if gm is None:
                        gm = transfer_index[key[0]] = len(stream.transfers)
                        stream.transfers.append(key[0])
                    reach = key[1]
                    if reach > stream.reach.get(key[0].param, 0):
                        stream.reach[key[0].param] = reach
        stream.gm.append(gm)
    if len(units) == 1:
        stream.placement = "aic" if cube else "aiv"
    return stream


def _transfer(access, write: bool, by_buffer, params, task_label: str, ins: Instr):
    """(Transfer, reach) of one GM access: which parameter's region holds it (the one whose
    region contains its first byte, else the last one starting before it) and where."""
    best = None
    for param, region in by_buffer.get(access.buffer, ()):
        start = region.offset * region.dtype.nbytes
        if access.lo < start:
            continue
        key = (access.lo < region.byte_span()[1], start)
        if best is None or key > best[0]:
            best = (key, param, start)
    if best is not None:
        _, param, start = best
        rect = access.rect
        atomic = getattr(access, "atomic", False)
        op = f"{ins.name} at {ins.file} line {ins.line}"
        if rect is not None and isinstance(rect[0], tuple) and rect[0][0] == access.buffer:
            pitch_elems = rect[0][1]
            rows, cols = rect[2] - rect[1], rect[4] - rect[3]
            span = (rows - 1) * pitch_elems + cols
            item = (access.hi - access.lo) // span if span else 1
            if pitch_elems == cols or rows == 1:          # one contiguous run of bytes
                t = Transfer(param, write, rows * cols * item, access.lo - start, 1,
                             rows * cols * item, rows * cols * item, atomic, op)
            else:
                t = Transfer(param, write, rows * cols * item, access.lo - start, rows,
                             pitch_elems * item, cols * item, atomic, op)
        else:
            size = access.hi - access.lo
            t = Transfer(param, write, size, access.lo - start, 1, size, size, atomic, op)
        return t, access.hi - start
    raise StreamError(
        f"task {task_label}: {ins.label()} touches {access.buffer} bytes [{access.lo}, "
        f"{access.hi}), which no parameter of the task is bound to "
        f"({', '.join(params) or 'no parameters'})",
        hint="pass the tensor the kernel accesses as one of its arguments")
