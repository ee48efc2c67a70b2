"""InsertSync: turn a Level-2 PTO module (tiles, no sync) into Level 3 (explicit
``set_flag`` / ``wait_flag`` / ``barrier``), in the manner of PTOAS ``--enable-insert-sync``
(hw-model.md §3.2, anchors.md §1.3). Our own implementation; see the helper modules:

* ``sync_access`` — the pipe and byte ranges of every instruction (dependences);
* ``sync_walk``   — the virtual-trace walk that decides pairs, barriers and fallbacks;
* ``sync_plan``   — the pairs and barriers of a kernel and where they sit;
* ``sync_events`` — event ids (at most 8 per pipe pair) from happens-before interference;
* ``sync_emit``   — writing the plan into the structured program.

Decisions, in order: every RAW/WAR/WAW between two pipes gets a set after the producer and
a wait before the consumer (transitive chains pruned, hazards into a loop or branch waited
before it, hazards out of it set after it, loop-carried hazards chained through a pre-loop
set and a post-loop wait); same-pipe hazards get ``pipe_barrier`` on ``PIPE_V`` only; each
pair gets an event id such that a bit is never set twice; a pair whose consecutive uses
could set its bit twice first gets a *rendezvous* (a reverse pair that holds the next set
back until the previous wait has passed); a pair left without an id falls back to
``barrier(PIPE_ALL)`` with a ``SyncNote``.

Usage::

    result = insert_sync(module, target="a2a3")
    result.module          # Level-3 Module (print with ptoc.pto.print_module)
    result.notes           # SyncNote per PIPE_ALL fallback or skipped kernel
    result.stats["kernel"] # static counts of pairs, flags and barriers
    strip_sync(module)     # Level 3 -> Level 2 (drop every set/wait/barrier)

Guarantees (checked by the tests with the simulator): the output has no data race under
the happens-before checker, never deadlocks, and every flag is balanced for any loop trip
count (zero included) and either arm of every branch. Kernels that already contain flags
are left untouched (as PTOAS skips hand-synchronised functions), with a note; a user's
``pto.barrier`` is kept and counted as ordering.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ptoc.backend.pipes import NUM_EVENT_IDS, Pipe
from ptoc.backend.targets import Target, get_target
from ptoc.errors import PtocError, SourceLoc
from ptoc.pto.model import LOOP_OPS, ForOp, IfOp, Kernel, Module, SyncOp
from ptoc.pto.sync_access import AccessResolver, has_sync
from ptoc.pto.sync_chain import chain_sibling_loops
from ptoc.pto.sync_emit import emit_kernel
from ptoc.pto.sync_events import SELF_OVERLAP, allocate_events
from ptoc.pto.sync_plan import BlockTree, SyncPlan
from ptoc.pto.sync_walk import KernelSteps, Walker

#: Bound on analysis rounds; each round only adds sync, so this is never reached in practice.
MAX_ROUNDS = 12


class SyncInsertionError(PtocError, RuntimeError):
    """InsertSync could not produce a balanced program (an internal limit was hit)."""


@dataclass(frozen=True)
class SyncNote:
    """Why InsertSync did something a user may want to know about.

    ``kind`` is ``"pipe_all_fallback"`` (a flag pair became ``barrier(PIPE_ALL)``, which is
    correct but serialises every pipe) or ``"skipped"`` (the kernel already had sync).
    ``producer``/``consumer`` are ``(opcode, PTO line)`` of the two instructions ordered by
    the fallback, ``producer_loc``/``consumer_loc`` their DSL ``loc(...)`` when the PTO
    carries one; ``src``/``dst`` the pipe pair; ``reason`` says why no flag could be used.
    """

    kernel: str
    kind: str
    reason: str
    src: Pipe | None = None
    dst: Pipe | None = None
    producer: tuple[str, int] | None = None
    consumer: tuple[str, int] | None = None
    producer_loc: SourceLoc | None = None
    consumer_loc: SourceLoc | None = None

    def __str__(self) -> str:
        if self.kind == "skipped":
            return f"@{self.kernel}: {self.reason}"
        return (f"@{self.kernel}: barrier(PIPE_ALL) instead of a {self.src.short}->"
                f"{self.dst.short} flag between {_where(self.producer)} and "
                f"{_where(self.consumer)}: {self.reason}")


def _where(op: tuple[str, int] | None) -> str:
    return "?" if op is None else f"{op[0]} (line {op[1]})"


def _fallback_note(kernel: str, reason: str, src: Pipe, dst: Pipe, producer, consumer):
    def describe(op) -> tuple[str, int]:
        return (getattr(op, "opcode", type(op).__name__), getattr(op, "line", 0))
    return SyncNote(kernel, "pipe_all_fallback", reason, src, dst, describe(producer),
                    describe(consumer), getattr(producer, "loc", None),
                    getattr(consumer, "loc", None))


@dataclass
class SyncResult:
    """The Level-3 module plus what InsertSync decided (``notes``, per-kernel ``stats``)."""

    module: Module
    notes: list[SyncNote] = field(default_factory=list)
    stats: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def text(self) -> str:
        from ptoc.pto.printer import print_module  # noqa: PLC0415
        return print_module(self.module)

    @property
    def fallbacks(self) -> list[SyncNote]:
        return [n for n in self.notes if n.kind == "pipe_all_fallback"]


def insert_sync(module: "Module | str", target: "str | Target | None" = None, *,
                event_ids: int = NUM_EVENT_IDS) -> SyncResult:
    """Insert intra-core synchronisation into every kernel of ``module`` (a parsed Module or
    PTO text; see the module doc).

    ``event_ids`` is the number of ids per (src, dst) pipe pair (8 on hardware); a smaller
    pool shows what id starvation costs (pairs fall back to ``barrier(PIPE_ALL)``).

    ``target`` defaults to the module's ``pto.target_arch`` (else ``a2a3``); it decides the
    pipe of each move and the physical size of each tile.
    """
    if not 1 <= event_ids <= NUM_EVENT_IDS:
        raise SyncInsertionError(f"event_ids={event_ids} is outside 1..{NUM_EVENT_IDS}",
                                 hint=f"hardware has {NUM_EVENT_IDS} ids per pipe pair")
    if isinstance(module, str):
        from ptoc.pto.parser import parse  # noqa: PLC0415
        module = parse(module)
    tgt = get_target(target or module.target_arch or "a2a3")
    notes: list[SyncNote] = []
    stats: dict[str, dict[str, int]] = {}
    kernels = []
    for kernel in module.kernels:
        if has_sync(kernel):
            notes.append(SyncNote(kernel.name, "skipped", "the kernel already contains "
                                  "set_flag/wait_flag; left unchanged"))
            kernels.append(kernel)
            continue
        new, plan, kernel_notes = sync_kernel(kernel, tgt, event_ids=event_ids)
        kernels.append(new)
        notes.extend(kernel_notes)
        stats[kernel.name] = plan.count()
    return SyncResult(replace(module, kernels=tuple(kernels)), notes, stats)


def sync_kernel(kernel: Kernel, target: Target, *, event_ids: int = NUM_EVENT_IDS,
                ) -> tuple[Kernel, SyncPlan, list[SyncNote]]:
    """Plan and emit the sync of one kernel; returns (new kernel, plan, notes)."""
    resolver = AccessResolver(kernel, target)
    plan = SyncPlan(BlockTree(kernel), resolver=resolver)
    notes: list[SyncNote] = []
    seen: set = set()
    steps = KernelSteps(plan.tree, resolver)
    rounds = 0
    while True:
        rounds += 1
        if rounds > 4 * plan.next_id + MAX_ROUNDS:
            # every round answers a pair with a rendezvous (once per pair) or removes pairs,
            # so this bound is never reached
            raise SyncInsertionError(f"InsertSync did not converge on kernel @{kernel.name}",
                                     hint="report this kernel; it has an unusual structure")
        walker, fallbacks = _settle(plan, resolver, steps)
        for fb in fallbacks:
            key = (fb.block, fb.gap, fb.src, fb.dst)
            if key in seen:
                continue
            seen.add(key)
            notes.append(_fallback_note(kernel.name, fb.reason, fb.src, fb.dst, fb.producer,
                                        fb.consumer))
        failed = [(pid, "the pair is not balanced in the block structure")
                  for pid in sorted(walker.broken) if pid in plan.pairs]
        if not failed:
            failed = allocate_events(plan, walker.instances, limit=event_ids)
        if not failed:
            return chain_sibling_loops(emit_kernel(kernel, plan), target,
                                       resolver.literals), plan, notes
        # first answer every flag that could be set twice with a rendezvous; otherwise the
        # first failing pair of each pipe pair falls back (its PIPE_ALL barrier often orders
        # what made the others fail), and the plan is walked again
        if any([reason == SELF_OVERLAP and plan.add_rendezvous(pid) is not None
                for pid, reason in failed]):
            continue
        first: dict[tuple, tuple[int, str]] = {}
        for pid, reason in failed:
            pair = plan.pairs[pid]
            first.setdefault((pair.src, pair.dst), (pid, reason))
        for pid, reason in first.values():
            pair = plan.remove_pair(pid)
            plan.add_barrier(pair.block, pair.wait_gap, Pipe.PIPE_ALL)
            notes.append(_fallback_note(kernel.name, reason, pair.src, pair.dst, pair.producer,
                                        pair.consumer))


def strip_sync(module: Module) -> Module:
    """``module`` without any set_flag / wait_flag / barrier: Level 3 back to Level 2 (to
    re-synchronise a hand-written kernel, or to compare with its hand-written protocol)."""
    def strip(body: tuple) -> tuple:
        out = []
        for op in body:
            if isinstance(op, SyncOp):
                continue
            if isinstance(op, LOOP_OPS):
                op = replace(op, body=strip(op.body))
            elif isinstance(op, IfOp):
                op = replace(op, then_body=strip(op.then_body), else_body=strip(op.else_body))
            out.append(op)
        return tuple(out)
    return replace(module, kernels=tuple(replace(k, body=strip(k.body))
                                         for k in module.kernels))


def _settle(plan: SyncPlan, resolver: AccessResolver, steps: KernelSteps) -> tuple[Walker, list]:
    """Walk until a walk decides nothing new; that walk's instance log is exact.
    Returns it with the PIPE_ALL fallbacks decided on the way (``steps``: shared by every
    walk of the kernel)."""
    fallbacks: list = []
    for _ in range(MAX_ROUNDS):
        walker = Walker(plan, resolver, log=True, steps=steps)
        walker.run()
        fallbacks.extend(walker.fallbacks)
        if not walker.discovered:
            return walker, fallbacks
    raise SyncInsertionError("InsertSync analysis did not reach a fixed point",
                             hint="report this kernel; it has an unusual loop structure")
