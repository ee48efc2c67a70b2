"""InitMemRef: give every tile and tensor a MemRef (reference/pypto-passes.md §7).

One walk per function, in program order, hands out MemRefs from a function-wide counter:
parameters first, then each definition. A fresh on-chip MemRef is based on a new pointer
``mem_<space>_<n>`` whose ``tile.alloc`` is prepended to the body; a DDR tensor's MemRef
carries the name ``mem_ddr_<n>`` and needs no allocation. Values that are the same buffer
share their producer's MemRef instead of getting one:

- view ops (``tile.slice``) sit inside their source (byte offset, narrowed size);
- in-place ops write an input: ``tile.store`` its output tensor, ``tile.matmul_acc`` its
  accumulator, ``tile.assemble`` its target (the op registry's ``reuses_input``);
- a bare tile alias ``a = b``; a loop's iter-args share their init values, and a tile loop
  result shares its iter-arg; an if's tile result shares the then-branch's yielded value.
  Where that sharing would overwrite a value still read later, ``join_copies`` first copies
  the shared value (ptoc's safety net; PyPTO shares regardless).

A tile popped from a cross-core pipe gets no MemRef: it lives in a ring slot the pipe picks at
run time, inside the buffer ``system.reserve_buffer`` reserved.

Loop and branch results still use up a counter value (PyPTO numbers them, then lets tile
results share), and tensor results keep their own fresh name; that is what makes
ptoc's numbering match PyPTO's dumps exactly (``mem_acc_10`` followed by ``mem_acc_12``).
Sizes are physical (§1.2): an Acc tile's M rows are padded to the target's row alignment.
Nothing special happens for double-buffered accumulators: each clone is its own SSA value
and therefore its own MemRef, which MemoryReuse later keeps apart or merges.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import DataType, MemorySpace
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, Call, ConstInt, ForStmt, Function, IfStmt, ListExpr, ScopeStmt, SeqStmts, Stmt, Var,
    WhileStmt,
)
from ptoc.ir.types import MemRef, PtrType, TensorType, TileType
from ptoc.ops import get_op, make_call
from ptoc.ops.registry import has_op
from ptoc.passes.base import function_pass
from ptoc.passes.join_copies import insert_join_copies
from ptoc.passes.manager import register_default_pass
from ptoc.passes.memref_rewrite import (
    is_alloc, last_yield, new_ptr, physical_bytes, retype_function, with_memref, zero_offset,
)


@function_pass(name="InitMemRef", required={"MemoryInferred"}, produced={"MemRefsAssigned"},
               func_types=None,
               handles_while_loops=True)
def init_mem_ref(fn: Function, ctx) -> Function:
    """Assign one MemRef per tile/tensor value and prepend the ``tile.alloc`` statements."""
    if any(is_alloc(s) for s in fn.body.stmts):
        return fn  # already has MemRefs: the pass is idempotent
    planner = _MemRefPlanner(ctx.get_backend(), fn.name)
    planner.plan(fn)
    copied = insert_join_copies(fn, planner.memrefs)
    if copied is not fn:
        fn = copied
        planner = _MemRefPlanner(ctx.get_backend(), fn.name)
        planner.plan(fn)
    if not planner.memrefs:
        return fn
    out = retype_function(fn, lambda v: planner.type_for(v))
    return replace(out, body=replace(out.body, stmts=_alloc_stmts(planner.allocs)
                                      + out.body.stmts))


def _alloc_stmts(allocs: list[tuple[Var, MemorySpace, int]]) -> tuple[AssignStmt, ...]:
    """``ptr = tile.alloc(space, size)`` per allocation. The op binds and checks its
    arguments once per space; the other calls of the space are that call with their own
    size (what ``make_call`` gives them: no keyword, a PtrType result)."""
    first: dict[MemorySpace, Call] = {}
    stmts = []
    for ptr, space, size in allocs:
        made = first.get(space)
        if made is None:
            call = first[space] = make_call("tile.alloc", (space, size))
        else:
            call = replace(made, args=(space, size), type=PtrType(), attrs={})
        stmts.append(AssignStmt(ptr, call))
    return tuple(stmts)


class _MemRefPlanner:
    """Decides, in PyPTO's order, which MemRef each tile/tensor definition gets."""

    def __init__(self, target, fn_name: str):
        self.target = target
        self.fn_name = fn_name
        self.counter = 0
        self.memrefs: dict[Var, MemRef] = {}
        self.allocs: list[tuple[Var, MemorySpace, int]] = []

    # ---- the walk ------------------------------------------------------------------
    def plan(self, fn: Function) -> None:
        for p in fn.params:
            if _is_buffer(p.var):
                self.memrefs[p.var] = self.fresh(p.var)
        self.block(fn.body)

    def block(self, body: SeqStmts | None) -> None:
        if body is None:
            return
        for s in body.stmts:
            self.stmt(s)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmts):
            self.block(s)
        elif isinstance(s, AssignStmt):
            if _is_buffer(s.var) and not is_ring_tile(s.value):
                self.memrefs[s.var] = self.assigned(s)
        elif isinstance(s, (ForStmt, WhileStmt)):
            for ia in s.iter_args:
                if _is_buffer(ia):
                    shared = self.memrefs.get(ia.init) if isinstance(ia.init, Var) else None
                    self.memrefs[ia] = shared if shared is not None else self.fresh(ia)
            self.block(s.body)
            for ia, rv in zip(s.iter_args, s.return_vars):
                self.result(rv, self.memrefs.get(ia))
        elif isinstance(s, ScopeStmt):      # a runtime scope of an orchestration body
            self.block(s.body)
        elif isinstance(s, IfStmt):
            self.block(s.then_body)
            self.block(s.else_body)
            then_y, else_y = last_yield(s.then_body), last_yield(s.else_body)
            for i, rv in enumerate(s.return_vars):
                source = None
                for y in (then_y, else_y):
                    if source is None and y is not None and i < len(y.values):
                        source = self.memrefs.get(y.values[i])
                self.result(rv, source)

    def result(self, rv: Var, shared: MemRef | None) -> None:
        """A loop or branch result: it takes a counter value; a tile result then shares."""
        if not _is_buffer(rv):
            return
        if isinstance(rv.type, TileType) and shared is not None:
            self.counter += 1
            self.memrefs[rv] = shared
        else:
            self.memrefs[rv] = self.fresh(rv)

    def assigned(self, s: AssignStmt) -> MemRef:
        value = s.value
        if isinstance(value, Var):
            source = self.memrefs.get(value)
            if isinstance(s.var.type, TileType) and source is not None:
                return source
            return self.fresh(s.var)
        if isinstance(value, Call) and not value.is_function and has_op(value.op):
            op = get_op(value.op)
            if op.view and value.args and isinstance(value.args[0], Var):
                source = self.memrefs.get(value.args[0])
                if source is not None:
                    return _view_memref(source, value.args[0].type, value)
            if op.reuses_input is not None and op.reuses_input < len(value.args):
                arg = value.args[op.reuses_input]
                source = self.memrefs.get(arg) if isinstance(arg, Var) else None
                if source is not None:
                    return source
        return self.fresh(s.var)

    # ---- fresh MemRefs -------------------------------------------------------------
    def fresh(self, var: Var) -> MemRef:
        n = self.counter
        self.counter += 1
        ty = var.type
        if isinstance(ty, TensorType):
            size = physical_bytes(ty, self.target) or 0
            return MemRef(f"mem_ddr_{n}", zero_offset(), size)
        space = ty.memory_space
        if space is None:
            raise PassError(f"tile '{var.name}' in function '{self.fn_name}' has no memory space",
                            hint="run InferTileMemorySpace before InitMemRef, or give the op a "
                                 "target_memory")
        size = physical_bytes(ty, self.target)
        if size is None:
            raise PassError(
                f"tile '{var.name}' in function '{self.fn_name}' has a dynamic shape "
                f"{list(ty.shape)}; InitMemRef needs a static buffer size",
                hint="give the tile a static shape and put the runtime extent in valid_shape")
        if space is MemorySpace.DDR:
            return MemRef(f"mem_ddr_{n}", zero_offset(), size)
        ptr = new_ptr(f"mem_{space.lower}_{n}")
        self.allocs.append((ptr, space, size))
        return MemRef(ptr, zero_offset(), size)

    def type_for(self, var: Var):
        memref = self.memrefs.get(var)
        return None if memref is None else with_memref(var.type, memref)


def is_ring_tile(value) -> bool:
    """True for a ``tpop`` (its tile lives in the pipe's ring, not in a MemRef of its own)."""
    return isinstance(value, Call) and value.op in ("tile.tpop_from_aic", "tile.tpop_from_aiv")


def _is_buffer(var: Var) -> bool:
    return isinstance(var.type, (TileType, TensorType))


def _view_memref(source: MemRef, src_type, call: Call) -> MemRef:
    """A sub-view of ``source``: same base, byte offset of the window, span up to its end.

    Only a static window is narrowed; a dynamic one conservatively keeps the whole source.
    The span of an Acc slice is not re-padded (the padding belongs to the root tile).
    """
    if call.op != "tile.slice" or not isinstance(src_type, TileType):
        return source
    shape = call.args[1] if len(call.args) > 1 else None
    offset = call.args[2] if len(call.args) > 2 else None
    dims = tuple(src_type.shape)
    if not (isinstance(shape, ListExpr) and isinstance(offset, ListExpr)
            and all(isinstance(x, ConstInt) for x in shape.items + offset.items)
            and all(isinstance(d, int) for d in dims) and isinstance(source.offset, ConstInt)):
        return source
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    nbytes = src_type.dtype.get_byte()
    start = sum(o.value * st for o, st in zip(offset.items, strides)) * nbytes
    last = sum((s.value - 1) * st for s, st in zip(shape.items, strides)) * nbytes + nbytes
    return MemRef(source.base, ConstInt(source.offset.value + start, DataType.INT64), last)


register_default_pass(init_mem_ref)

__all__ = ["init_mem_ref"]
