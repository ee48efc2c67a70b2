"""Copies at loop and branch joins that keep a shared buffer from clobbering a live value.

InitMemRef lets a loop's iter-arg take its init value's buffer, and an ``if`` result its
then-branch value's buffer (PyPTO's sharing: no copy at the join). That is right only while
nothing else needs the old contents: the carry overwrites the init value on the first trip,
and the else-branch's value lands in the result's buffer at its yield. When the init (or a
value sharing its buffer) is still read inside the loop or after it, or the then-branch
value after the ``if`` (or in a later trip of an enclosing loop), sharing would hand that
reader the wrong bytes with no error. PyPTO shares anyway; ptoc copies the value first
(``tile.move`` into a buffer of its own) and carries or yields the copy. The same holds when
one buffer would feed two carries or two results. An accumulator cannot be copied (there is
no Acc -> Acc path), so there the program is rejected with the reader named.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import MemorySpace
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, ForStmt, Function, IfStmt, ScopeStmt, SeqStmts, Stmt, Var, WhileStmt,
)
from ptoc.ir.types import MemRef, TileType
from ptoc.ir.visitor import IRMutator, substitute
from ptoc.ops import make_call
from ptoc.passes.memory_lifetimes import value_ranges
from ptoc.passes.memref_rewrite import last_yield


def insert_join_copies(fn: Function, memrefs: dict[Var, MemRef]) -> Function:
    """``fn`` with a copy before every join whose buffer sharing would clobber a live value."""
    if not _tile_joins(fn.body):
        return fn   # no loop carries a tile from a variable and no if yields one
    ranges = value_ranges(fn)
    mates: dict[object, list[Var]] = {}
    for var, memref in memrefs.items():
        mates.setdefault(memref.base, []).append(var)
    return _JoinCopier(fn, memrefs, mates, ranges).mutate(fn)


class _JoinCopier(IRMutator):
    def __init__(self, fn, memrefs, mates, ranges):
        super().__init__()
        self.fn = fn
        self.memrefs = memrefs
        self.mates = mates
        self.ranges = ranges

    def _reader(self, value: Var, span: tuple[int, int], after: int,
                claimed: set) -> tuple[bool, Var | None]:
        """Whether sharing ``value``'s buffer at this join is unsafe, and the reader: a
        value in that buffer, defined before the statement spanning ``span`` and read after
        point ``after`` (None when another carry/result of the statement took the buffer)."""
        memref = self.memrefs.get(value)
        if memref is None:
            return False, None
        if memref.base in claimed:
            return True, None
        claimed.add(memref.base)
        for mate in self.mates.get(memref.base, []):
            d = self.ranges.defs.get(mate)
            if d is not None and d < span[0] and self.ranges.last_use.get(mate, -1) > after:
                return True, mate
        return False, None

    def _copy(self, value: Var, reader: Var | None, join: str, stmt: Stmt) -> AssignStmt:
        ty = value.type
        if ty.memory_space is MemorySpace.Acc:
            why = ("another carry or result of the same statement already takes it"
                   if reader is None else f"'{reader.name}' in that buffer is still read "
                   "afterwards")
            reader = reader or value
            raise PassError(
                f"in function '{self.fn.name}': {join} would take over the buffer of "
                f"accumulator '{value.name}', but {why}, and an Acc tile cannot be copied "
                "(no Acc -> Acc path)", stmt.loc,
                hint=f"use '{reader.name}' before the {join.split()[0]}, or compute the "
                     "accumulator the join carries with a matmul of its own")
        copy = Var(f"{value.name}_mv", replace(ty, memref=None))
        call = make_call("tile.move", (value,), {"target_memory": ty.memory_space},
                         result_type=copy.type)
        return AssignStmt(copy, call, stmt.loc)

    def mutate_while_stmt(self, node: WhileStmt):
        return self.carry_copies(node, super().mutate_while_stmt(node))

    def mutate_for_stmt(self, node: ForStmt):
        return self.carry_copies(node, super().mutate_for_stmt(node))

    def carry_copies(self, node: ForStmt | WhileStmt, out: ForStmt | WhileStmt):
        """Copy a carry's init first when its buffer is still read after the loop starts."""
        start, _ = self.ranges.spans.get(id(node), (None, None))
        if start is None:
            return out
        before, mapping, claimed = [], {}, set()
        iter_args = list(out.iter_args)
        for i, ia in enumerate(out.iter_args):
            init = ia.init
            if not (isinstance(ia.type, TileType) and isinstance(init, Var)):
                continue
            unsafe, reader = self._reader(init, (start, start), start, claimed)
            if not unsafe:
                continue
            copy = self._copy(init, reader, f"loop carry '{ia.name}'", node)
            before.append(copy)
            iter_args[i] = mapping[ia] = replace(ia, init=copy.var)
        if not before:
            return out
        loop = replace(out, iter_args=tuple(iter_args), body=substitute(out.body, mapping))
        return SeqStmts(tuple(before) + (loop,), node.loc)

    def mutate_if_stmt(self, node: IfStmt):
        out = super().mutate_if_stmt(node)
        span = self.ranges.spans.get(id(node))
        y = last_yield(out.then_body)
        if span is None or y is None or out.else_body is None:
            return out
        copies, values, claimed = [], list(y.values), set()
        for i, rv in enumerate(out.return_vars):
            value = values[i] if i < len(values) else None
            if not (isinstance(rv.type, TileType) and isinstance(value, Var)):
                continue
            unsafe, reader = self._reader(value, span, span[1], claimed)
            if not unsafe:
                continue
            copy = self._copy(value, reader, f"if result '{rv.name}'", node)
            copies.append(copy)
            values[i] = copy.var
        if not copies:
            return out
        then_body = _replace_tail_yield(out.then_body, copies, replace(y, values=tuple(values)))
        return replace(out, then_body=then_body)


def _tile_joins(stmt: Stmt | None) -> bool:
    """Whether any loop under ``stmt`` carries a tile initialised from a variable, or any
    ``if`` has a tile result: the only joins a copy can go before."""
    if isinstance(stmt, SeqStmts):
        return any(_tile_joins(s) for s in stmt.stmts)
    if isinstance(stmt, (ForStmt, WhileStmt)):
        return any(isinstance(ia.type, TileType) and isinstance(ia.init, Var)
                   for ia in stmt.iter_args) or _tile_joins(stmt.body)
    if isinstance(stmt, IfStmt):
        return any(isinstance(rv.type, TileType) for rv in stmt.return_vars) \
            or _tile_joins(stmt.then_body) or _tile_joins(stmt.else_body)
    if isinstance(stmt, ScopeStmt):
        return _tile_joins(stmt.body)
    return False


def _replace_tail_yield(body: SeqStmts, before: list[Stmt], new_yield) -> SeqStmts:
    """``body`` with its trailing yield replaced by ``before`` + ``new_yield``."""
    *rest, tail = body.stmts
    if isinstance(tail, SeqStmts):
        return replace(body, stmts=tuple(rest) + (_replace_tail_yield(tail, before, new_yield),))
    return replace(body, stmts=tuple(rest) + tuple(before) + (new_yield,))


__all__ = ["insert_join_copies"]
