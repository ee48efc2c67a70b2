"""AutoTileMatmulL0, pre-phase: the canonical split-K accumulator (pypto-passes.md §3.1 step 1).

Users write a split-K GEMM as ``acc = create([M, N], Acc)``, a pipelined K-loop that loads
one ``[M, kk]`` / ``[kk, N]`` block pair from GM into Mat per iteration (``matmul`` on the
first block, loop-carried ``matmul_acc`` after), and one 2-D store of the result. When the
physical ``[M, N]`` accumulator exceeds L0C no per-matmul rewrite can help, because the
accumulator lives across the loop. This phase moves an ``[m, n]`` output grid outside the
K-loop instead: one clone of the loop per output tile, its two loads narrowed to the
tile's rows and columns, and each tile stored at its offset (the stores chained in SSA).
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.ir.nodes import replace
from ptoc.backend.targets import Target
from ptoc.dtypes import MemorySpace
from ptoc.errors import PtocError
from ptoc.ir.nodes import (
    AssignStmt, Call, ForStmt, IfStmt, IterArg, ListExpr, SeqStmts, Stmt, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.types import TensorType, TileType, static_shape
from ptoc.ir.visitor import IRMutator
from ptoc.ops import make_call
from ptoc.passes.auto_tile_analysis import HintLog, acc_fits_l0c
from ptoc.passes.auto_tile_emit import add
from ptoc.passes.context import PassContext
from ptoc.backend.layouts import C0_BYTES
from ptoc.passes.l0_tile_chooser import L0TileConfig, choose_l0_tile

Mem = MemorySpace


@dataclass
class _SplitK:
    """The recognised pattern inside one statement list (indices into it)."""

    create: int
    loop: int
    store: int
    M: int
    N: int
    kk: int
    load_a: AssignStmt
    load_b: AssignStmt
    branch: IfStmt


def rewrite_canonical_split_k(body: SeqStmts, target: Target, ctx: PassContext,
                              hints: HintLog) -> SeqStmts:
    """Apply the pre-phase to every statement list of a function body (inner lists first)."""
    stmts = []
    for s in body.stmts:
        if isinstance(s, (ForStmt, WhileStmt)):
            new_body = rewrite_canonical_split_k(s.body, target, ctx, hints)
            s = s if new_body is s.body else replace(s, body=new_body)
        elif isinstance(s, IfStmt):
            then_b = rewrite_canonical_split_k(s.then_body, target, ctx, hints)
            else_b = rewrite_canonical_split_k(s.else_body, target, ctx, hints) \
                if s.else_body is not None else None
            if then_b is not s.then_body or else_b is not s.else_body:
                s = replace(s, then_body=then_b, else_body=else_b)
        stmts.append(s)
    changed = any(a is not b for a, b in zip(stmts, body.stmts))
    i = 0
    while i < len(stmts):
        match = _match(stmts, i, target)
        if match is None:
            i += 1
            continue
        grid = _grid(match, stmts, target, hints)
        if grid is None:
            i += 1
            continue
        stmts, i = _apply(stmts, match, grid), match.create + 1
        changed = True
    return replace(body, stmts=tuple(stmts)) if changed else body


def _is_call(s: Stmt, op: str) -> bool:
    return isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == op


def _reads(node, var: Var) -> int:
    """How many times ``var`` is read anywhere under ``node``."""
    count = 0

    class _Counter(IRMutator):
        def mutate_var(self, v):
            nonlocal count
            if v is var:
                count += 1
            return v

    _Counter().mutate(node)
    return count


def _mat_load(s: Stmt) -> tuple[int, int] | None:
    if not _is_call(s, "tile.load") or s.value.kwarg("target_memory") is not Mem.Mat:
        return None
    dims = static_shape(tuple(s.var.type.shape))
    offsets = s.value.args[1]
    if dims is None or len(dims) != 2 or not isinstance(offsets, ListExpr) or len(offsets.items) != 2 \
            or not isinstance(s.value.args[0].type, TensorType):
        return None
    return dims


def _match(stmts: list[Stmt], i: int, target: Target) -> _SplitK | None:
    create = stmts[i]
    if not _is_call(create, "tile.create") or create.var.type.memory_space is not Mem.Acc:
        return None
    dims = static_shape(tuple(create.var.type.shape))
    if dims is None or len(dims) != 2 or acc_fits_l0c(dims, create.var.type.dtype, target):
        return None
    j = next((x for x in range(i + 1, len(stmts)) if isinstance(stmts[x], ForStmt)
              and len(stmts[x].iter_args) == 1 and stmts[x].iter_args[0].init is create.var), None)
    if j is None or sum(_reads(s, create.var) for s in stmts[i + 1:]) != 1:
        return None
    loop: ForStmt = stmts[j]
    body = list(loop.body.stmts)
    if len(body) != 4 or not isinstance(body[2], IfStmt) or not isinstance(body[3], YieldStmt):
        return None
    loads = [_mat_load(s) for s in body[:2]]
    if None in loads:
        return None
    branch: IfStmt = body[2]
    (it,) = loop.iter_args
    then_s, else_s = branch.then_body.stmts, branch.else_body.stmts if branch.else_body else ()
    if len(then_s) != 2 or len(else_s) != 2 or len(branch.return_vars) != 1 \
            or body[3].values != (branch.return_vars[0],):
        return None
    first, acc = then_s[0], else_s[0]
    if not (_is_call(first, "tile.matmul") and _is_call(acc, "tile.matmul_acc")
            and then_s[1].values == (first.var,) and else_s[1].values == (acc.var,)):
        return None
    a_var, b_var = first.value.args
    if tuple(acc.value.args[:3]) != (it, a_var, b_var) or acc.value.kwargs:
        return None
    by_var = {s.var: s for s in body[:2]}
    if set(by_var) != {a_var, b_var}:
        return None
    load_a, load_b = by_var[a_var], by_var[b_var]
    M, kk = static_shape(tuple(load_a.var.type.shape))
    kk2, N = static_shape(tuple(load_b.var.type.shape))
    if (M, N) != dims or kk != kk2:
        return None
    result = loop.return_vars[0]
    later = stmts[j + 1:]
    users = [x for x, s in enumerate(later) if _reads(s, result)]
    if len(users) != 1 or _reads(later[users[0]], result) != 1:
        return None
    store = later[users[0]]
    if not (_is_call(store, "tile.store") and store.value.args[0] is result
            and isinstance(store.value.args[1], ListExpr) and len(store.value.args[1].items) == 2
            and len(store.value.args) == 3):
        return None
    return _SplitK(i, j, j + 1 + users[0], M, N, kk, load_a, load_b, branch)


def _grid(match: _SplitK, stmts: list[Stmt], target: Target, hints: HintLog):
    """The ``[m, n]`` output tile for the accumulator, from the chooser."""
    a_ty: TileType = match.load_a.var.type
    b_ty: TileType = match.load_b.var.type
    create = stmts[match.create]
    acc_dtype = create.var.type.dtype
    cfg = L0TileConfig.for_target(
        target, M=match.M, N=match.N, K=match.kk, bytes_a=a_ty.dtype.nbytes,
        bytes_b=b_ty.dtype.nbytes, bytes_c=acc_dtype.nbytes,
        l0c_align_m=target.acc_row_alignment_for(acc_dtype), c_read=True,
        allow_padding=False, allow_k_boundary=True,
        # the narrowed GM->Mat loads keep whole NZ boxes (16 rows x 32 bytes)
        box_align_m=target.fractal_alignment, box_align_n=max(1, C0_BYTES // b_ty.dtype.nbytes))
    try:
        result = choose_l0_tile(cfg)
    except PtocError as exc:
        hints.add("PH-AT-005", f"split-K accumulator '{create.var.name}' ([{match.M}, {match.N}] "
                  f"{acc_dtype.value}): ChooseL0Tile rejected the configuration: {exc.message}",
                  create.loc)
        return None
    if (result.m, result.n) == (match.M, match.N):
        return None
    return result.m, result.n


def _apply(stmts: list[Stmt], match: _SplitK, grid: tuple[int, int]) -> list[Stmt]:
    m, n = grid
    create: AssignStmt = stmts[match.create]
    loop: ForStmt = stmts[match.loop]
    store: AssignStmt = stmts[match.store]
    r0, c0 = store.value.args[1].items
    chain = store.value.args[2]
    chain_name = chain.name if isinstance(chain, Var) else create.var.name
    out: list[Stmt] = []
    step = 0
    for mi in range(0, match.M, m):
        for ni in range(0, match.N, n):
            tm, tn = min(m, match.M - mi), min(n, match.N - ni)
            tag = f"_t{step}"
            init = Var(create.var.name + tag, TileType((tm, tn), create.var.type.dtype, Mem.Acc))
            out.append(AssignStmt(init, make_call(
                "tile.create", ([tm, tn],), {"dtype": create.var.type.dtype,
                                             "target_memory": Mem.Acc}), loc=create.loc))
            res = _clone_loop(loop, match, init, mi, ni, tm, tn, tag, out)
            call = make_call("tile.store", (res, [add(r0, mi), add(c0, ni)], chain),
                             dict(store.value.kwargs), attrs=dict(store.value.attrs))
            chain = Var(f"{chain_name}{tag}", call.type)
            out.append(AssignStmt(chain, call, loc=store.loc))
            step += 1
    subst = {store.var: chain}
    rest = [IRMutator(subst).mutate(s) for s in stmts[match.store + 1:]]
    between = [s for x, s in enumerate(stmts[match.create + 1:match.store], match.create + 1)
               if x != match.loop]
    return stmts[:match.create] + between + out + rest


def _clone_loop(loop: ForStmt, match: _SplitK, init: Var, mi: int, ni: int, tm: int, tn: int,
                tag: str, out: list[Stmt]) -> Var:
    """One K-loop for the ``[tm, tn]`` tile at (mi, ni): loads narrowed, calls re-typed."""
    kv = Var(loop.loop_var.name + tag, loop.loop_var.type)
    (old_it,) = loop.iter_args
    it = IterArg(old_it.name + tag, init.type, init=init)
    sub = IRMutator({loop.loop_var: kv})

    def load(s: AssignStmt, rows: int, cols: int, d_row: int, d_col: int) -> AssignStmt:
        o_row, o_col = (sub.mutate(e) for e in s.value.args[1].items)
        call = make_call("tile.load", (s.value.args[0], [add(o_row, d_row), add(o_col, d_col)],
                                       [rows, cols]), {"target_memory": Mem.Mat}, loc=s.value.loc)
        return AssignStmt(Var(s.var.name + tag, call.type), call, loc=s.loc)

    la = load(match.load_a, tm, match.kk, mi, 0)
    lb = load(match.load_b, match.kk, tn, 0, ni)
    body = [la, lb] if loop.body.stmts[0] is match.load_a else [lb, la]
    branch = match.branch
    first = branch.then_body.stmts[0]
    acc = branch.else_body.stmts[0]
    v_first = Var(first.var.name + tag, init.type)
    v_acc = Var(acc.var.name + tag, init.type)
    phi = Var(branch.return_vars[0].name + tag, init.type)
    then_b = SeqStmts((AssignStmt(v_first, make_call("tile.matmul", (la.var, lb.var)), loc=first.loc),
                       YieldStmt((v_first,), loc=branch.then_body.stmts[1].loc)))
    else_b = SeqStmts((AssignStmt(v_acc, make_call("tile.matmul_acc", (it, la.var, lb.var)),
                                  loc=acc.loc),
                       YieldStmt((v_acc,), loc=branch.else_body.stmts[1].loc)))
    body.append(IfStmt(sub.mutate(branch.cond), then_b, else_b, (phi,), loc=branch.loc))
    body.append(YieldStmt((phi,), loc=loop.body.stmts[3].loc))
    result = Var(loop.return_vars[0].name + tag, init.type)
    out.append(replace(loop, loop_var=kv, iter_args=(it,), body=SeqStmts(tuple(body)),
                       return_vars=(result,)))
    return result
