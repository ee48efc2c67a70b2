"""AutoTileMatmulL0, part 2: the rewrites — K-loops (§3.3) and M/N output grids (§3.4).

Every builder appends statements to a ``Block`` and returns the Var holding its result, so
the pass can splice the statements where the reference puts them (at the matmul for
K-loops and Mat scratch, at the store for direct-store grids). Names follow PyPTO's
(``<base>_l0_ko``, ``<base>_oc``, ``<out>_t0``, ...) so dumps can be read side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ptoc.ir.nodes import replace
from ptoc.dtypes import DataType, ForKind, MemorySpace
from ptoc.errors import SourceLoc
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, Expr, ForStmt, IfStmt, IterArg, SeqStmts, Stmt, Var,
    YieldStmt,
)
from ptoc.ir.types import ScalarType, TileLayout, TileType, TileView
from ptoc.ir.visitor import fold_constants
from ptoc.ops import checks, make_call
from ptoc.passes.auto_tile_analysis import MatmulSite

Mem = MemorySpace
INDEX = ScalarType(DataType.INDEX)
STAGES = "pipeline_stages"
MEMBERSHIP = "pipeline_membership"
#: first pipeline group of dbC straight-line tails: above the groups LowerPipelineLoops opens
#: (it numbers a function's pipelines from 0), so the two never merge
TAIL_GROUP_BASE = 1 << 16
OVERLAP_STORES = "pipeline_overlap_stores"
DOUBLE_BUFFER_C = "pipeline_double_buffer_c"
#: The explicit block layout of L0A tiles on targets that stamp it (``Target.row_major_left_view``).
ROW_MAJOR_LEFT_VIEW = TileView((("blayout", TileLayout.row_major),))

Index = Any  # int or an INDEX Expr


def idx(x: Index) -> Expr:
    return x if isinstance(x, Expr) else ConstInt(int(x))


def add(a: Index, b: Index) -> Index:
    """``a + b`` for offsets, folding zeros and constants so the IR prints as PyPTO's."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, ConstInt) and a.value == 0 or a == 0:
        return b
    if isinstance(b, ConstInt) and b.value == 0 or b == 0:
        return a
    return fold_constants(BinOp("+", idx(a), idx(b)))


@dataclass
class Block:
    """A statement list under construction; ``let`` binds a call to a new named Var.

    ``left_view`` is the view L0A (Left) tiles extracted here carry: the row-major stamp on
    targets whose backend resolves it, None (the implicit layout) elsewhere.
    """

    loc: SourceLoc | None = None
    left_view: TileView | None = None
    stmts: list[Stmt] = field(default_factory=list)

    def let(self, name: str, call: Call, var: Var | None = None) -> Var:
        var = var if var is not None else Var(name, call.type)
        self.stmts.append(AssignStmt(var, call, loc=self.loc))
        return var

    def child(self) -> "Block":
        return Block(self.loc, self.left_view)

    def extract(self, name: str, src: Var, row: Index, col: Index, shape: tuple[int, int],
                space: MemorySpace) -> Var:
        """``name = tile.extract(src, row, col, shape, target_memory=space)``."""
        view = self.left_view if space is Mem.Left else None
        valid = checks.with_valid(checks.window_valid(src.type, (idx(row), idx(col)), shape),
                                  shape)
        if valid is not None:        # a tail window of a partly valid operand stays a tail
            view = TileView((view.fields if view else ()) + valid.fields)
        ty = TileType(tuple(shape), src.type.dtype, space, None, view)
        return self.let(name, make_call("tile.extract", (src, idx(row), idx(col), list(shape)),
                                        {"target_memory": space}, result_type=ty))


def pipeline_loop(b: Block, name: str, start: int, stop: int, step: int, carry: list[tuple[str, Expr]],
                  body: Callable[[Block, Var, list[IterArg]], list[Expr]], return_names: list[str],
                  *, kind: ForKind = ForKind.Pipeline, attrs: dict | None = None,
                  return_vars: list[Var | None] | None = None) -> list[Var]:
    """Emit ``for name, (carry...) in pl.pipeline/range(start, stop, step)``; returns its results."""
    loop_var = Var(name, INDEX)
    iter_args = [IterArg(n, init.type, init=init) for n, init in carry]
    inner = b.child()
    yielded = body(inner, loop_var, iter_args)
    inner.stmts.append(YieldStmt(tuple(yielded), loc=b.loc))
    given = return_vars or [None] * len(iter_args)
    rvs = [g if g is not None else Var(n, ia.type) for g, n, ia in zip(given, return_names, iter_args)]
    b.stmts.append(ForStmt(loop_var, ConstInt(start), ConstInt(stop), ConstInt(step), tuple(iter_args),
                           SeqStmts(tuple(inner.stmts)), tuple(rvs), kind, dict(attrs or {}),
                           loc=b.loc))
    return rvs


# --- §3.3 the K-loop ------------------------------------------------------------------------

@dataclass
class KLoopSpec:
    """One ``[m, n]`` output tile at (row, col) reduced over K in steps of ``k``."""

    lhs: Var
    rhs: Var
    m: int
    n: int
    k: int
    K: int
    row: Index = 0
    col: Index = 0
    bias: Var | None = None      # the bias window for this tile (matmul_bias)
    acc: Var | None = None       # caller accumulator (matmul_acc): uniform matmul_acc
    init_cond: Expr | None = None  # the caller's "overwrite instead of accumulate" predicate


def build_k_loop(b: Block, spec: KLoopSpec, base: str, dtype: DataType,
                 result: Var | None = None) -> Var:
    """The pipelined K-loop of §3.3 (plus its straight-line tail); returns the final Acc Var."""
    num_full = spec.K // spec.k
    k_full = num_full * spec.k
    tail = spec.K - k_full
    final_name = base

    def block_operands(blk: Block, ko: Index, width: int, a_name: str, b_name: str):
        sa = blk.extract(a_name, spec.lhs, spec.row, ko, (spec.m, width), Mem.Left)
        sb = blk.extract(b_name, spec.rhs, ko, spec.col, (width, spec.n), Mem.Right)
        return sa, sb

    def first_call(sa: Var, sb: Var) -> Call:
        if spec.bias is not None:
            return make_call("tile.matmul_bias", (sa, sb, spec.bias))
        return make_call("tile.matmul", (sa, sb))

    if num_full >= 2:
        if spec.acc is not None:
            init = spec.acc
        else:
            init = b.let(f"{base}_l0_init", make_call(
                "tile.create", ([spec.m, spec.n],), {"dtype": dtype, "target_memory": Mem.Acc}))
            init = _narrow_to_product(b, init, spec, f"{base}_l0_init_valid")
        _stage_vec_lhs(b, spec, base)

        def body(blk: Block, ko: Var, iters: list[IterArg]) -> list[Expr]:
            (c_iter,) = iters
            sa, sb = block_operands(blk, ko, spec.k, f"{base}_l0_a", f"{base}_l0_b")
            if spec.acc is not None:
                # A caller's init_cond may only overwrite on the first K block.
                cond = {} if spec.init_cond is None else \
                    {"init_cond": BinOp("and", spec.init_cond, BinOp("==", ko, ConstInt(0)))}
                return [blk.let(f"{base}_l0_c_acc",
                                make_call("tile.matmul_acc", (c_iter, sa, sb), cond))]
            then_b, else_b = blk.child(), blk.child()
            first = then_b.let(f"{base}_l0_c_first", first_call(sa, sb))
            then_b.stmts.append(YieldStmt((first,), loc=b.loc))
            acc = else_b.let(f"{base}_l0_c_acc", make_call("tile.matmul_acc", (c_iter, sa, sb)))
            else_b.stmts.append(YieldStmt((acc,), loc=b.loc))
            phi = Var(f"{base}_l0_c_phi", first.type)
            blk.stmts.append(IfStmt(BinOp("==", ko, ConstInt(0)), SeqStmts(tuple(then_b.stmts)),
                                    SeqStmts(tuple(else_b.stmts)), (phi,), loc=b.loc))
            return [phi]

        main_name = f"{base}_l0_kmain" if tail else final_name
        (current,) = pipeline_loop(
            b, f"{base}_l0_ko", 0, k_full, spec.k, [(f"{base}_l0_c", init)], body, [main_name],
            attrs={STAGES: 2}, return_vars=[None if tail else result])
    else:  # defensive: the chooser never picks k in (K/2, K)
        _stage_vec_lhs(b, spec, base)
        sa, sb = block_operands(b, 0, k_full, f"{base}_l0_a", f"{base}_l0_b")
        name = f"{base}_l0_kmain" if tail else final_name
        cond = {} if spec.init_cond is None else {"init_cond": spec.init_cond}
        call = make_call("tile.matmul_acc", (spec.acc, sa, sb), cond) if spec.acc is not None \
            else first_call(sa, sb)
        current = b.let(name, call, None if tail else result)
    if tail:
        sa, sb = block_operands(b, k_full, tail, f"{base}_l0_ta", f"{base}_l0_tb")
        current = b.let(final_name, make_call("tile.matmul_acc", (current, sa, sb)), result)
    return current


def _narrow_to_product(b: Block, init: Var, spec: KLoopSpec, name: str) -> Var:
    """The accumulator placeholder narrowed to the valid region its K blocks produce (a tail
    of a partly valid lhs/rhs, as PyPTO's valid-shaped Acc init), so every step the loop
    carries has the same type and the store writes only the valid rows and columns."""
    rows = checks.window_valid(spec.lhs.type, (idx(spec.row), ConstInt(0)), (spec.m, spec.k))
    cols = checks.window_valid(spec.rhs.type, (ConstInt(0), idx(spec.col)), (spec.k, spec.n))
    if rows is None and cols is None:
        return init
    valid = [rows[0] if rows else spec.m, cols[1] if cols else spec.n]
    for axis, extent in enumerate(valid):      # a run-time extent is a scalar of its own
        if isinstance(extent, Call):
            valid[axis] = b.let(f"{name}_{('rows', 'cols')[axis]}", extent)
    return b.let(name, make_call("tile.set_validshape", (init, *map(idx, valid))))


def _stage_vec_lhs(b: Block, spec: KLoopSpec, base: str) -> None:
    """A Vec lhs (the PV pattern: probabilities computed on the vector core) is moved to Mat
    once, before the K-loop, so every K block can be extracted into L0A."""
    if spec.lhs.type.memory_space is Mem.Vec:
        spec.lhs = b.let(f"{base}_l0_lhs_mat", make_call("tile.move", (spec.lhs,),
                                                          {"target_memory": Mem.Mat}))


# --- §3.4 placements --------------------------------------------------------------------------

@dataclass
class Placement:
    """Where the sub-tiles of an output grid go: a DDR tensor (direct store) or a Mat scratch.

    ``chain`` is the SSA value threaded through the grid (the tensor, or the scratch tile);
    ``place`` writes one sub-tile and returns the next chain value.
    """

    kind: str                     # "store" or "scratch"
    chain: Expr                   # initial chain value
    chain_name: str               # base of the per-step result names (<name>_t{s})
    store: Call | None = None     # the original tile.store (direct store)
    scratch_dtype: DataType | None = None

    def place(self, b: Block, sub: Var, row: Index, col: Index, step: int, chain: Expr) -> Var:
        name = f"{self.chain_name}_t{step}"
        if self.kind == "scratch":
            return b.let(name, make_call("tile.assemble", (chain, sub, [idx(row), idx(col)])))
        st = self.store
        r0, c0 = st.args[1].items
        args = [sub, [add(r0, row), add(c0, col)], chain]
        if len(st.args) > 3 and st.args[3] is not None:
            args.append(list(sub.type.shape))
        call = make_call("tile.store", tuple(args), dict(st.kwargs), attrs=dict(st.attrs),
                         loc=st.loc)
        return b.let(name, call)


def _bias_window(b: Block, bias: Var | None, col: Index, n: int, N: int, name: str) -> Var | None:
    """The ``[1, n]`` bias columns of one output tile; the whole row when n == N."""
    if bias is None or n == N:
        return bias
    return b.extract(name, bias, 0, col, (1, n), Mem.Bias)


def _full_k_tile(b: Block, site: MatmulSite, lhs: Var, rhs: Var, bias: Var | None,
                 row: Index, col: Index, m: int, n: int, names: tuple[str, str, str, str]) -> Var:
    """One straight-line full-K output tile (tails): extract, extract, matmul."""
    a_name, b_name, c_name, bias_name = names
    sa = b.extract(a_name, lhs, row, 0, (m, site.K), Mem.Left)
    sb = b.extract(b_name, rhs, 0, col, (site.K, n), Mem.Right)
    bw = _bias_window(b, bias, col, n, site.N, bias_name)
    call = make_call("tile.matmul_bias", (sa, sb, bw)) if bw is not None \
        else make_call("tile.matmul", (sa, sb))
    return b.let(c_name, call)


def build_split_k_grid(b: Block, site: MatmulSite, lhs: Var, rhs: Var, m: int, n: int, k: int,
                       place: Placement, base: str) -> Expr:
    """§3.4 BuildSplitKGrid: an unrolled grid (N fastest), one K-loop per output tile."""
    chain = place.chain
    step = 0
    for mi in range(0, site.M, m):
        for ni in range(0, site.N, n):
            tm, tn = min(m, site.M - mi), min(n, site.N - ni)
            tbase = f"{base}_t{step}"
            bias = _bias_window(b, site.bias, ni, tn, site.N, f"{tbase}_bias")
            spec = KLoopSpec(lhs, rhs, tm, tn, k, site.K, mi, ni, bias)
            sub = build_k_loop(b, spec, tbase, site.out_dtype)
            chain = place.place(b, sub, mi, ni, step, chain)
            step += 1
    return chain


def build_full_k_pipelined(b: Block, site: MatmulSite, lhs: Var, rhs: Var, m: int, n: int,
                           rows_outer: bool, double_buffer_c: bool, output_stationary: bool,
                           place: Placement, base: str, tail_group: int | None = None) -> Expr:
    """§3.4 BuildFullKPipelined: stationary panel outside, moving panel in a pipelined loop.

    With ``tail_group`` (dbC on) the straight-line tail tiles are tagged as the two stages
    of that pipeline group, alternately, so MemoryReuse gives consecutive tails different
    accumulators (and operand buffers) and the drain of one overlaps the next matmul,
    instead of packing every tail onto one L0C buffer by lifetime (a ptoc refinement;
    PyPTO's tails share one buffer)."""
    M, N, K = site.M, site.N, site.K
    full_m, full_n = (M // m) * m, (N // n) * n
    inner_attrs = {STAGES: 2, OVERLAP_STORES: False}
    if double_buffer_c:
        inner_attrs[DOUBLE_BUFFER_C] = True
    outer_kind = ForKind.Pipeline if output_stationary else ForKind.Sequential
    outer_attrs = {STAGES: 2, OVERLAP_STORES: False} if output_stationary else {}
    outer_stop, outer_step = (full_m, m) if rows_outer else (full_n, n)
    inner_stop, inner_step = (full_n, n) if rows_outer else (full_m, m)

    def outer_body(ob: Block, o: Var, iters: list[IterArg]) -> list[Expr]:
        (oc,) = iters
        if rows_outer:
            held = ob.extract(f"{base}_a", lhs, o, 0, (m, K), Mem.Left)
            bias_outer = None
        else:
            held = ob.extract(f"{base}_b", rhs, 0, o, (K, n), Mem.Right)
            bias_outer = _bias_window(ob, site.bias, o, n, N, f"{base}_bias")

        def inner_body(ib: Block, i: Var, inner_iters: list[IterArg]) -> list[Expr]:
            (ic,) = inner_iters
            if rows_outer:
                sa, row, col = held, o, i
                sb = ib.extract(f"{base}_b", rhs, 0, i, (K, n), Mem.Right)
                bias = _bias_window(ib, site.bias, i, n, N, f"{base}_bias")
            else:
                sb, row, col = held, i, o
                sa = ib.extract(f"{base}_a", lhs, i, 0, (m, K), Mem.Left)
                bias = bias_outer
            call = make_call("tile.matmul_bias", (sa, sb, bias)) if bias is not None \
                else make_call("tile.matmul", (sa, sb))
            c = ib.let(f"{base}_c", call)
            return [place.place(ib, c, row, col, 0, ic)]

        return pipeline_loop(ob, f"{base}_i", 0, inner_stop, inner_step, [(f"{base}_ic", oc)],
                             inner_body, [f"{base}_irv"], attrs=inner_attrs)

    (chain,) = pipeline_loop(b, f"{base}_o", 0, outer_stop, outer_step, [(f"{base}_oc", place.chain)],
                             outer_body, [f"{base}_orv"], kind=outer_kind, attrs=outer_attrs)
    step = 1
    tiles = []
    if full_m < M:  # bottom strip, in n-steps
        tiles += [(full_m, c, M - full_m, min(n, N - c)) for c in range(0, N, n)]
    if full_n < N:  # right strip, in m-steps
        tiles += [(r, full_n, m, N - full_n) for r in range(0, full_m, m)]
    for row, col, tm, tn in tiles:
        names = (f"{base}_ta{step}", f"{base}_tb{step}", f"{base}_tc{step}", f"{base}_tbias{step}")
        mark = len(b.stmts)
        c = _full_k_tile(b, site, lhs, rhs, site.bias, row, col, tm, tn, names)
        if tail_group is not None:
            _tag_stage(b, mark, f"{tail_group}:{(step - 1) % 2}")
        chain = place.place(b, c, row, col, step, chain)
        step += 1
    return chain


def _tag_stage(b: Block, mark: int, membership: str) -> None:
    """Tag the calls ``b`` gained since ``mark`` with a pipeline membership."""
    for i in range(mark, len(b.stmts)):
        stmt = b.stmts[i]
        attrs = {**stmt.value.attrs, MEMBERSHIP: membership}
        b.stmts[i] = replace(stmt, value=replace(stmt.value, attrs=attrs))


def make_scratch(b: Block, name: str, shape: tuple[int, int], dtype: DataType) -> Var:
    """``tile.create(shape, dtype, target_memory=Mat)``: the L1 scratch an Acc is drained into."""
    return b.let(name, make_call("tile.create", (list(shape),),
                                 {"dtype": dtype, "target_memory": Mem.Mat}))
