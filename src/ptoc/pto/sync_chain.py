"""Chaining the loop-carried flags of sibling loops, so a double buffer stays double across
the boundary between two loops.

InsertSync closes each loop's loop-carried pairs with post-loop waits and opens the next
loop's with pre-loop sets. For two back-to-back dbC loops that costs the overlap at the
seam: the waits after loop 1 hold the consumer pipe until loop 1's last drain of *every*
slot is done, and the pre-loop sets of loop 2 only fire once the producer pipe finished
all of loop 1. Here the post-loop wait of loop 1 and the pre-loop set of loop 2 for the
same pipe pair are dropped, and loop 2 takes over loop 1's event ids slot by slot: its
first wait on a slot now consumes the token loop 1's last iteration left on that slot,
which is exactly the hazard (the next write of that slot after its last read).

It is only done where it is evidently equivalent: the two loops are adjacent statements of
one block, both are flat and run at least once (constant bounds), the code between them has no instruction on the consumer pipe, every id of the
pair kind is waited after loop 1 and set before loop 2 in equal numbers, both loops use
each of their ids as one loop-carried pair (a wait, later a set, at the top of the body),
and loop 2 (up to its own post-loop waits) does not already use loop 1's ids for that
pair kind.
"""

from __future__ import annotations

from dataclasses import replace

from ptoc.pto.model import (
    LOOP_OPS, REGION_OPS, ForOp, IfOp, Instruction, Kernel, SyncOp, WhileOp, walk,
)
from ptoc.pto.ops import queue_of


def chain_sibling_loops(kernel: Kernel, target, constants: dict | None = None) -> Kernel:
    """The kernel with loop-carried pairs chained across adjacent loops (see module doc);
    the blocks nothing was chained in are kept as they are. ``constants``: the value of
    every ``arith.constant`` by result name, when the caller has them already."""
    body = _block(kernel.body, _Env(kernel, target, constants))
    return kernel if body is kernel.body else replace(kernel, body=body)


class _Env:
    """The target, and the kernel's constants (by value name), looked up only once a block
    has two loops to compare."""

    def __init__(self, kernel: Kernel, target, constants: dict | None):
        self.kernel, self.target, self._constants = kernel, target, constants

    @property
    def constants(self) -> dict:
        if self._constants is None:
            self._constants = {op.results[0].name: op.attr("value") for op in self.kernel.walk()
                               if isinstance(op, Instruction) and op.opcode == "arith.constant"}
        return self._constants


def _runs(loop: ForOp | WhileOp, constants: dict) -> bool:
    """A flat loop (no nested region) whose constant bounds make it run at least once, so
    its last iteration's set happens and every flag of its body is at the top level."""
    if isinstance(loop, WhileOp) or any(isinstance(op, REGION_OPS) for op in loop.body):
        return False
    bounds = [constants.get(v.name) for v in (loop.lower, loop.upper, loop.step)]
    if any(not isinstance(b, int) for b in bounds):
        return False
    lower, upper, step = bounds
    return step > 0 and upper > lower


def _block(ops: tuple, env: _Env) -> tuple:
    nested = [_nested(op, env) if isinstance(op, REGION_OPS) else op for op in ops]
    if any(new is not op for new, op in zip(nested, ops)):
        ops = tuple(nested)
    first = _next_loop(ops, 0)
    while first is not None:
        second = _next_loop(ops, first + 1)
        if second is None:
            break
        if not any(isinstance(op, IfOp) for op in ops[first + 1:second]) and \
                _runs(ops[first], env.constants) and _runs(ops[second], env.constants):
            ops = _chain(ops, first, second, env.target)  # may drop flags between the loops
            second = _next_loop(ops, first + 1)
        first = second
    return ops


def _next_loop(ops: tuple, start: int) -> int | None:
    return next((i for i in range(start, len(ops)) if isinstance(ops[i], LOOP_OPS)), None)


def _nested(op, env):
    if isinstance(op, LOOP_OPS):
        body = _block(op.body, env)
        return op if body is op.body else replace(op, body=body)
    if isinstance(op, IfOp):
        then_body = _block(op.then_body, env)
        else_body = _block(op.else_body, env)
        if then_body is op.then_body and else_body is op.else_body:
            return op
        return replace(op, then_body=then_body, else_body=else_body)
    return op


def _chain(ops: tuple, first: int, second: int, target) -> tuple:
    between = ops[first + 1:second]
    # chaining one pair kind drops only its own flags from between the loops and renames
    # only its own flags in loop 2: what is gathered here holds for every other kind
    flags1, flags2 = _BodyFlags(ops[first].body), _BodyFlags(ops[second].body)
    waits_of: dict[tuple, list[int]] = {}
    sets_of: dict[tuple, list[int]] = {}
    for op in between:
        if _flag(op):
            uses = waits_of if op.kind == "wait_flag" else sets_of
            uses.setdefault((op.src, op.dst), []).append(op.event)
    for kind in sorted(waits_of.keys() | sets_of.keys()):
        dst = kind[1]
        waits, sets = waits_of.get(kind, []), sets_of.get(kind, [])
        if not waits or len(waits) != len(sets) or len(set(waits)) != len(waits):
            continue
        if any(isinstance(op, Instruction) and queue_of(op, target) is dst for op in between):
            continue
        if flags1.carried_ids(kind) != set(waits) or flags2.carried_ids(kind) != set(sets):
            continue
        renamed = dict(zip(flags2.first_use_order(kind), flags1.first_use_order(kind)))
        if sorted(renamed) != sorted(sets) or sorted(renamed.values()) != sorted(waits):
            continue
        scope_end = _closing_waits_end(ops, second, kind, set(sets))
        if scope_end is None:
            continue
        scope = ops[second:scope_end]
        taken = set(waits) - set(sets)  # loop 1's ids that loop 2 does not rename onto
        # scope[1:] holds no region (_closing_waits_end stops at one)
        if flags2.events.get(kind, set()) & taken or any(
                _flag(op, None, kind) and op.event in taken for op in scope[1:]):
            continue
        kept = tuple(op for op in between if not _flag(op, None, kind))
        scope = (_rename(scope[0], kind, renamed),) + _rename_closing_waits(scope[1:], kind,
                                                                            renamed)
        ops = ops[:first + 1] + kept + scope + ops[scope_end:]
        second = first + 1 + len(kept)
        between = kept
    return ops


def _closing_waits_end(ops: tuple, loop: int, pair: tuple, ids: set) -> int | None:
    """Index after the post-loop waits that close ``ids`` of ``pair`` after loop 2 (the
    renaming scope), or None when they are not all found before the next region."""
    open_ids = set(ids)
    for index in range(loop + 1, len(ops)):
        op = ops[index]
        if isinstance(op, REGION_OPS):
            return None
        if _flag(op, None, pair) and op.event in open_ids:
            if op.kind != "wait_flag":
                return None
            open_ids.discard(op.event)
            if not open_ids:
                return index + 1
    return None


def _rename_closing_waits(ops: tuple, pair: tuple, renamed: dict) -> tuple:
    """``ops`` (after loop 2, up to its post-loop waits) with only those waits renamed: the
    first wait of each id. Other pairs in between keep their ids; renaming them too would
    split a pair whose set is in this stretch and whose wait comes after it."""
    open_ids, out = set(renamed), []
    for op in ops:
        if _flag(op, "wait_flag", pair) and op.event in open_ids:
            open_ids.discard(op.event)
            op = replace(op, event=renamed[op.event])
        out.append(op)
    return tuple(out)


def _flag(op, kind_name: str | None = None, pair: tuple | None = None) -> bool:
    if not (isinstance(op, SyncOp) and op.kind in ("set_flag", "wait_flag")
            and isinstance(op.event, int)):
        return False
    if kind_name is not None and op.kind != kind_name:
        return False
    return pair is None or (op.src, op.dst) == pair


class _BodyFlags:
    """The flags of one loop body per pipe pair, gathered in one pass: ``top[pair]`` its
    top-level flags in order, ``nested`` the pairs with a flag inside a region of the body,
    ``events[pair]`` every id the body (regions included) uses for the pair."""

    def __init__(self, body: tuple):
        self.top: dict[tuple, list[SyncOp]] = {}
        self.nested: set[tuple] = set()
        self.events: dict[tuple, set[int]] = {}
        for top in body:
            inner = isinstance(top, REGION_OPS)
            for op in walk((top,)) if inner else (top,):
                if _flag(op):
                    pair = (op.src, op.dst)
                    self.events.setdefault(pair, set()).add(op.event)
                    if inner:
                        self.nested.add(pair)
                    else:
                        self.top.setdefault(pair, []).append(op)

    def carried_ids(self, pair: tuple) -> set | None:
        """The ids of ``pair`` the body uses only as one loop-carried pair each: a wait at
        the top of the body followed later by a set (None when it uses them any other way)."""
        if pair in self.nested:
            return None
        uses: dict = {}
        for op in self.top.get(pair, ()):
            uses.setdefault(op.event, []).append(op.kind)
        if any(kinds != ["wait_flag", "set_flag"] for kinds in uses.values()):
            return None
        return set(uses)

    def first_use_order(self, pair: tuple) -> list[int]:
        order: list[int] = []
        for op in self.top.get(pair, ()):
            if op.event not in order:
                order.append(op.event)
        return order


def _rename(op, pair: tuple, renamed: dict):
    if _flag(op, None, pair) and op.event in renamed:
        return replace(op, event=renamed[op.event])
    if isinstance(op, LOOP_OPS):
        return replace(op, body=tuple(_rename(o, pair, renamed) for o in op.body))
    if isinstance(op, IfOp):
        return replace(op, then_body=tuple(_rename(o, pair, renamed) for o in op.then_body),
                       else_body=tuple(_rename(o, pair, renamed) for o in op.else_body))
    return op
