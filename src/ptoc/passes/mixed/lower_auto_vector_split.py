"""LowerAutoVectorSplit (PyPTO pass 20): a ``pl.split`` mixed InCore function in explicit
per-lane form, before ExpandMixedKernel splits it into AIC and AIV functions.

For a function with ``attrs["split"]`` UP_DOWN (rows) or LEFT_RIGHT (columns) that really
mixes cube and vector work:

* ``subblock_idx = pl.tile.get_subblock_idx()`` is prepended (the AIV lane, 0 or 1);
* a cube -> vector boundary ``v = pl.move(acc, target_memory=pl.Mem.Vec)`` becomes
  ``v = pl.tile.aiv_shard(acc, split=code)``: each lane gets half the tile;
* a vector -> cube boundary ``m = pl.move(x, target_memory=Mat/Left/Right)`` becomes
  ``m_mat = pl.tile.aic_gather(x, split=code)`` (the halves joined in Mat), followed by the
  original move when the target is Left or Right;
* only the vector sub-region is halved: Vec loads and tile creations take half the split
  axis and their offsets move by ``subblock_idx * half``; stores write at the same lane
  offset; every other vector op is re-typed from its (halved) operands; cube work stays full;
* the function is stamped ``split_aiv``.

Rejected with a fix (the split is the author's performance choice and is never dropped
silently): a reduction or transpose across the split axis, a vector op with its own shape
argument the pass does not know how to halve, an odd split axis, a store of a tile that is
not split (both lanes would write the same bytes), a halved tile reaching a cube op.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import DataType, FunctionType, MemorySpace, SplitMode
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, EvalStmt, Expr, ForStmt, Function, IfStmt, ListExpr,
    ReturnStmt, SeqStmts, Stmt, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.types import ScalarType, TileType
from ptoc.ir.visitor import IRMutator, defined_names
from ptoc.ops import get_op, make_call
from ptoc.passes.base import function_pass
from ptoc.passes.manager import register_default_pass
from ptoc.passes.mixed.affinity import Affinity, call_affinity, crosses_cores, stmt_affinity

Mem = MemorySpace
#: Reductions that collapse one axis: (op, reduced axis).
REDUCED_AXIS = {"tile.row_max": 1, "tile.row_sum": 1, "tile.row_min": 1, "tile.row_prod": 1,
                "tile.col_max": 0, "tile.col_sum": 0, "tile.col_min": 0, "tile.col_prod": 0}
#: Vector ops whose shape/offset arguments this pass rewrites itself.
SHAPED = {"tile.load", "tile.store", "tile.create", "tile.full"}


@function_pass(name="LowerAutoVectorSplit", required=("SSAForm", "MemoryInferred"),
               func_types=(FunctionType.InCore,),
               handles_while_loops=True)
def lower_auto_vector_split(fn: Function, ctx) -> Function:
    """Rewrite one split mixed InCore function into per-lane form (module docstring)."""
    mode = fn.attrs.get("split")
    if not isinstance(mode, SplitMode) or mode is SplitMode.NONE or fn.attrs.get("split_aiv"):
        return fn
    if stmt_affinity(fn.body) is not Affinity.MIXED:
        return fn    # pure vector (or pure cube): ExpandMixedKernel converts it as it is
    body = _Halver(fn, mode).run()
    return replace(fn, body=body, attrs={**fn.attrs, "split_aiv": True})


register_default_pass(lower_auto_vector_split)


class _Halver:
    """One function's rewrite: ``sub`` maps every halved (or renamed) Var to its new Var."""

    def __init__(self, fn: Function, mode: SplitMode):
        self.fn = fn
        self.mode = mode
        self.axis = mode.axis
        self.sub: dict[Var, Expr] = {}
        self.halved: set[Var] = set()     # new Vars holding one lane's part
        taken = defined_names(fn)
        name = "subblock_idx"
        while name in taken:
            name = "_" + name
        self.sb = Var(name, ScalarType(DataType.INDEX), fn.loc)

    def run(self) -> SeqStmts:
        first = AssignStmt(self.sb, make_call("tile.get_subblock_idx", loc=self.fn.loc), self.fn.loc)
        body = self.seq(self.fn.body)
        return replace(body, stmts=(first,) + body.stmts)

    # ---- statements -------------------------------------------------------------------
    def seq(self, seq: SeqStmts) -> SeqStmts:
        out: list[Stmt] = []
        for s in seq.stmts:
            out.extend(self.stmt(s))
        return replace(seq, stmts=tuple(out))

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and not s.value.is_function:
            return self.assign(s)
        if isinstance(s, EvalStmt) and isinstance(s.expr, Call) and not s.expr.is_function \
                and call_affinity(s.expr) is Affinity.VECTOR:
            # a bare 'pl.store(t, offs, out)' is a write like 'out = pl.store(...)': each
            # lane stores its own part
            return [replace(s, expr=self.vector(s, self.subst(s.expr)))]
        if isinstance(s, (ForStmt, WhileStmt)):
            return [self.loop(s)]
        if isinstance(s, IfStmt):
            return [self.branch(s)]
        return [self.subst(s)]

    def subst(self, node):
        return IRMutator(self.sub).mutate(node)

    def assign(self, s: AssignStmt) -> list[Stmt]:
        call = s.value
        side = call_affinity(call)
        if side is Affinity.MIXED and call.op == "tile.move":
            return self.boundary(s)
        if side is Affinity.VECTOR:
            new = self.vector(s, self.subst(call))
            return [self.rebind(s, new)]
        new = self.subst(call)
        for arg in new.args:
            if isinstance(arg, Var) and arg in self.halved:
                raise PassError(
                    f"LowerAutoVectorSplit: '{arg.name}' is split across the AIV lanes but "
                    f"reaches the cube op pl.{call.op} (for '{s.var.name}')", s.loc,
                    hint="move vector results back to the cube with pl.move(x, "
                         "target_memory=pl.Mem.Mat), which gathers the halves")
        return [s if new is call else replace(s, value=new)]

    def rebind(self, s: AssignStmt, call: Call) -> AssignStmt:
        if call.type is s.var.type or _same_type(call.type, s.var.type):
            return replace(s, value=replace(call, type=s.var.type))
        var = Var(s.var.name, call.type, s.var.loc)
        self.sub[s.var] = var
        self.halved.add(var)
        return AssignStmt(var, call, s.loc)

    def boundary(self, s: AssignStmt) -> list[Stmt]:
        call = s.value
        src = self.subst(call.args[0])
        target = call.kwarg("target_memory")
        if target is Mem.Vec:      # cube -> vector: each lane takes its part
            shard = make_call("tile.aiv_shard", (src,), {"split": self.mode.code}, loc=call.loc)
            return [self.rebind(s, shard)]
        gather = make_call("tile.aic_gather", (src,), {"split": self.mode.code}, loc=call.loc)
        if target is Mem.Mat:
            return [self.rebind(s, gather)]
        joined = Var(f"{s.var.name}_mat", gather.type, s.var.loc)
        move = make_call("tile.move", (joined,), dict(call.kwargs), loc=call.loc)
        return [AssignStmt(joined, gather, s.loc), replace(s, value=move)]

    def loop(self, s: ForStmt | WhileStmt) -> ForStmt | WhileStmt:
        inits = [self.subst(ia.init) for ia in s.iter_args]
        iter_args = []
        for ia, init in zip(s.iter_args, inits):
            resized = _is_tile(init) and not _same_type(init.type, ia.type)
            new = replace(ia, type=init.type, init=init) if resized else replace(ia, init=init)
            self.sub[ia] = new
            if resized:
                self.halved.add(new)
            iter_args.append(new)
        body = self.seq(s.body)
        rvs = self._results(s.return_vars, body)
        if isinstance(s, WhileStmt):
            return replace(s, cond=self.subst(s.cond), iter_args=tuple(iter_args), body=body,
                           return_vars=rvs)
        bounds = [self.subst(e) for e in (s.start, s.stop, s.step)]
        return replace(s, start=bounds[0], stop=bounds[1], step=bounds[2],
                       iter_args=tuple(iter_args), body=body, return_vars=rvs)

    def branch(self, s: IfStmt) -> IfStmt:
        then_body = self.seq(s.then_body)
        else_body = self.seq(s.else_body) if s.else_body is not None else None
        rvs = self._results(s.return_vars, then_body)
        return replace(s, cond=self.subst(s.cond), then_body=then_body, else_body=else_body,
                       return_vars=rvs)

    def _results(self, rvs, body: SeqStmts) -> tuple:
        """Loop/if results re-typed like the values the body yields."""
        last = body.stmts[-1] if body.stmts else None
        if not isinstance(last, YieldStmt):
            return rvs
        out = []
        for rv, value in zip(rvs, last.values):
            if _is_tile(value) and not _same_type(value.type, rv.type):
                new = Var(rv.name, value.type, rv.loc)
                self.sub[rv] = new
                self.halved.add(new)
                out.append(new)
            else:
                out.append(rv)
        return tuple(out)

    # ---- vector ops -------------------------------------------------------------------
    def vector(self, s: AssignStmt, call: Call) -> Call:
        op = call.op
        if op in REDUCED_AXIS and REDUCED_AXIS[op] == self.axis:
            raise self._refuse(s, f"pl.{op} reduces the axis the split halves")
        if "transpose" in op:
            raise self._refuse(s, f"pl.{op} swaps the split axis away")
        if op == "tile.load":
            return self._load(s, call)
        if op == "tile.store":
            return self._store(s, call)
        if op in ("tile.create", "tile.full"):
            shape = self._half_list(s, call.args[0])
            return make_call(op, (shape,) + call.args[1:], dict(call.kwargs), loc=call.loc)
        if any(p.kind == "list" for p in get_op(op).params):
            raise self._refuse(s, f"pl.{op} has its own shape/offset arguments, which "
                                  "LowerAutoVectorSplit cannot split")
        return make_call(op, call.args, dict(call.kwargs), loc=call.loc, attrs=call.attrs)

    def _load(self, s, call: Call) -> Call:
        tensor, offsets, shapes, *rest = call.args
        half = self._extent(s, shapes)
        if half is None:
            return call
        new_shapes = self._half_list(s, shapes)
        valid = self._half_list(s, rest[0]) if rest and rest[0] is not None else None
        args = (tensor, self._shift(offsets, half), new_shapes) + ((valid,) if valid else ())
        return make_call("tile.load", args, dict(call.kwargs), loc=call.loc)

    def _store(self, s, call: Call) -> Call:
        tile, offsets, out, *rest = call.args
        original = (s.value if isinstance(s, AssignStmt) else s.expr).args[0]
        if not (_is_tile(tile) and _is_tile(original)):
            return call
        full, mine = original.type.shape[self.axis], tile.type.shape[self.axis]
        if full == mine:
            raise self._refuse(s, f"pl.store of '{original.name}' ({list(original.type.shape)}) "
                                  "writes a tile that is not split, so both AIV lanes would write "
                                  "the same bytes")
        args = (tile, self._shift(offsets, mine), out) + tuple(rest)
        return make_call("tile.store", args, dict(call.kwargs), loc=call.loc)

    def _extent(self, s, shapes: ListExpr) -> int | None:
        """The split-axis extent of a shape list; None when it is 1 (nothing to split)."""
        item = shapes.items[self.axis]
        if not isinstance(item, ConstInt):
            raise self._refuse(s, "a dynamic extent on the split axis")
        if item.value == 1:
            return None
        if item.value % 2:
            raise self._refuse(s, f"an odd extent ({item.value}) on the split axis")
        return item.value // 2

    def _half_list(self, s, shapes: ListExpr) -> ListExpr:
        half = self._extent(s, shapes)
        if half is None:
            return shapes
        items = list(shapes.items)
        items[self.axis] = ConstInt(half)
        return ListExpr(tuple(items))

    def _shift(self, offsets: ListExpr, half: int) -> ListExpr:
        items = list(offsets.items)
        lane = BinOp("*", self.sb, ConstInt(half))
        items[self.axis] = BinOp("+", items[self.axis], lane)
        return ListExpr(tuple(items))

    def _refuse(self, s: Stmt, what: str) -> PassError:
        other = "LEFT_RIGHT" if self.mode is SplitMode.UP_DOWN else "UP_DOWN"
        return PassError(
            f"LowerAutoVectorSplit in '{self.fn.name}': pl.split({self.mode!r}) cannot split "
            f"'{s.var.name if isinstance(s, AssignStmt) else 'pl.' + s.expr.op}': {what}", s.loc,
            hint=f"use pl.split(pl.SplitMode.{other}) or pl.SplitMode.NONE, or restructure "
                 "the vector code")


def _is_tile(e) -> bool:
    return isinstance(getattr(e, "type", None), TileType)


def _same_type(a, b) -> bool:
    if isinstance(a, TileType) and isinstance(b, TileType):
        return tuple(a.shape) == tuple(b.shape) and a.dtype is b.dtype and \
            a.memory_space is b.memory_space
    return a is b
