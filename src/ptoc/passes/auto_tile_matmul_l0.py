"""AutoTileMatmulL0: fit every L1-resident matmul to L0 (pypto-passes.md §3).

Reads top-down like its reference:

1. Per function (§3.1): move an output grid outside a user split-K loop whose accumulator
   exceeds L0C (``auto_tile_split_k``), plan dbC for the user's own pipeline loops (§3.6,
   ``auto_tile_pipeline_dbc``), then walk each statement list, inner loops first.
2. Per matmul (§3.2, ``auto_tile_analysis``): residency and dtype filters, then
   ``ChooseL0Tile`` under the dbC gate read from the current PassContext.
3. Rewrite (§3.3-§3.4, ``auto_tile_emit``): ``m == M and n == N`` gives a pipelined K-loop
   at the matmul; otherwise an output grid placed into a Mat scratch (result feeds only
   matmul operands, through at most one cast) at the matmul, or direct-stored at the single
   ``tile.store`` that consumes it.
4. The fits-L0C cast fold (§3.5) turns ``cast(acc, bf16, mode="rint")`` feeding matmuls
   into a FIXPIPE write to Mat; the same cast feeding only stores is the FIXPIPE store
   narrowing (the stores take the accumulator; ``tensor.matmul(..., out_dtype=BF16)``
   stays on the cube).
5. PH-AT hints (§3.7) are reported once per program.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.ir.nodes import replace
from ptoc.backend.targets import Target
from ptoc.dtypes import FunctionType, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, EvalStmt, Expr, ForStmt, Function, IfStmt, ListExpr, Program,
    WhileStmt, ReturnStmt, SeqStmts, Stmt, UnaryOp, Var, YieldStmt,
)
from ptoc.ir.types import TileType
from ptoc.ir.visitor import IRMutator, map_if_bodies
from ptoc.ops import make_call
from ptoc.passes.auto_tile_analysis import (
    HintLog, MatmulSite, acc_fits_l0c, cast_foldable_to_fixpipe, choose, match_matmul, row_outer,
)
from ptoc.passes.auto_tile_emit import (
    ROW_MAJOR_LEFT_VIEW, TAIL_GROUP_BASE, Block, KLoopSpec, Placement, build_full_k_pipelined,
    build_k_loop, build_split_k_grid, make_scratch,
)
from ptoc.passes.auto_tile_decisions import record_placement_fallback, record_tile_choice
from ptoc.passes.auto_tile_pipeline_dbc import apply_pipeline_dbc, build_pipeline_dbc_plan
from ptoc.passes.auto_tile_split_k import rewrite_canonical_split_k
from ptoc.passes.base import program_pass, with_functions
from ptoc.passes.context import MemoryPlanner, PassContext
from ptoc.passes.l0_tile_chooser import L0TileResult, Stationarity
from ptoc.passes.manager import register_default_pass

Mem = MemorySpace
KERNEL_TYPES = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
#: (op, argument index) pairs that read a matrix operand (§3.4 Mat-scratch condition).
OPERAND_SLOTS = {("tile.matmul", 0), ("tile.matmul", 1), ("tile.matmul_bias", 0),
                 ("tile.matmul_bias", 1), ("tile.matmul_acc", 1), ("tile.matmul_acc", 2)}


@program_pass(name="AutoTileMatmulL0", required=("SSAForm",), produced=("L0Tiled",),
              handles_while_loops=True)
def auto_tile_matmul_l0(program: Program, ctx: PassContext, *, spread_dbc_tails: bool = True
                        ) -> Program:
    """Tile every matmul of every kernel to the target's L0 (see the module docstring).

    ``spread_dbc_tails`` (default on, a ptoc refinement) tags the straight-line tail tiles of
    a dbC grid as two alternating pipeline stages so they use both L0C buffers; off gives
    PyPTO's output exactly (the conformance tests compare with it)."""
    target = ctx.get_backend()
    hints = HintLog()
    functions = []
    for fn in program.functions:
        if fn.func_type in KERNEL_TYPES:
            fn = _transform_function(fn, target, ctx, hints, spread_dbc_tails)
        functions.append(fn)
    hints.emit(ctx)
    return with_functions(program, functions)


register_default_pass(auto_tile_matmul_l0)


def _transform_function(fn: Function, target: Target, ctx: PassContext, hints: HintLog,
                        spread_dbc_tails: bool = True) -> Function:
    """§3.1: the split-K accumulator pre-phase, the existing-pipeline dbC plan on its result,
    then the per-SeqStmts rewrite."""
    pre = rewrite_canonical_split_k(fn.body, target, ctx, hints)
    staged = fn if pre is fn.body else replace(fn, body=pre)
    plan = build_pipeline_dbc_plan(staged, target, ctx)
    body = _Rewriter(target, ctx, hints, plan, spread_dbc_tails).seq(pre)
    return fn if body is fn.body else replace(fn, body=body)


# --- uses -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Use:
    """One read of a Var: as argument ``arg`` of call ``op`` (None: any other position)."""

    op: str | None
    arg: int
    index: int          # index of the top-level statement of the list that contains it
    nested: bool        # inside a loop or branch of that statement
    stmt: Stmt


def collect_uses(stmts: list[Stmt]) -> dict[Var, list[Use]]:
    """Every read of every Var in ``stmts`` (loops and branches included)."""
    uses: dict[Var, list[Use]] = {}

    def expr(e, index, nested, stmt, op=None, arg=-1):
        if isinstance(e, Var):
            uses.setdefault(e, []).append(Use(op, arg, index, nested, stmt))
        elif isinstance(e, Call):
            for j, a in enumerate(e.args):
                expr(a, index, nested, stmt, None if e.is_function else e.op, j)
            for _, v in e.kwargs:
                expr(v, index, nested, stmt)
        elif isinstance(e, BinOp):
            expr(e.lhs, index, nested, stmt)
            expr(e.rhs, index, nested, stmt)
        elif isinstance(e, UnaryOp):
            expr(e.operand, index, nested, stmt)
        elif isinstance(e, ListExpr):
            for item in e.items:
                expr(item, index, nested, stmt)

    def walk(s, index, nested, top):
        if isinstance(s, SeqStmts):
            for x in s.stmts:
                walk(x, index, nested, top)
        elif isinstance(s, AssignStmt):
            expr(s.value, index, nested, top)
        elif isinstance(s, EvalStmt):
            expr(s.expr, index, nested, top)
        elif isinstance(s, (YieldStmt, ReturnStmt)):
            for v in s.values:
                expr(v, index, nested, top)
        elif isinstance(s, ForStmt):
            for e in (s.start, s.stop, s.step, *(ia.init for ia in s.iter_args)):
                expr(e, index, nested, top)
            walk(s.body, index, True, top)
        elif isinstance(s, WhileStmt):
            for e in (s.cond, *(ia.init for ia in s.iter_args)):
                expr(e, index, nested, top)
            walk(s.body, index, True, top)
        elif isinstance(s, IfStmt):
            expr(s.cond, index, nested, top)
            walk(s.then_body, index, True, top)
            if s.else_body is not None:
                walk(s.else_body, index, True, top)

    for i, s in enumerate(stmts):
        walk(s, i, False, s)
    return uses


def _is_operand_use(u: Use) -> bool:
    return (u.op, u.arg) in OPERAND_SLOTS


_NOT_APPLICABLE = object()


def fold_store_casts(stmts: list[Stmt]) -> list[Stmt] | None:
    """A rint cast of an accumulator to bf16/f16 used only by stores is the FIXPIPE store
    narrowing: the stores write the accumulator itself (the drain converts), so the result
    stays on the cube and the matmul can still be direct-stored grid by grid. None when no
    cast folds."""
    uses = collect_uses(stmts)
    subst: dict[Var, Expr] = {}
    for s in stmts:
        if not (isinstance(s, AssignStmt) and isinstance(s.value, Call)
                and s.value.op == "tile.cast" and s.value.args):
            continue
        src = s.value.args[0]
        if not (isinstance(src, Var) and isinstance(src.type, TileType)
                and src.type.memory_space is Mem.Acc
                and cast_foldable_to_fixpipe(src.type, s.value)):
            continue
        mine = uses.get(s.var, [])
        if mine and all(u.op == "tile.store" and u.arg == 0 and not u.nested for u in mine):
            subst[s.var] = src
    if not subst:
        return None
    kept = [st for st in stmts if not (isinstance(st, AssignStmt) and st.var in subst)]
    return [IRMutator(subst).mutate(st) for st in kept]


# --- the rewriter -----------------------------------------------------------------------------

@dataclass
class _Deferred:
    """A direct-store grid waiting for its store statement."""

    site: MatmulSite
    result: L0TileResult


class _Rewriter:
    """Walks one function; each statement list is rewritten after its nested lists."""

    def __init__(self, target: Target, ctx: PassContext, hints: HintLog, plan: set[int],
                 spread_dbc_tails: bool = True):
        self.target = target
        self.ctx = ctx
        self.hints = hints
        self.plan = plan
        self.left_view = ROW_MAJOR_LEFT_VIEW if target.row_major_left_view else None
        self.spread_dbc_tails = spread_dbc_tails
        self.tail_groups = TAIL_GROUP_BASE  # pipeline groups of dbC straight-line tails

    # ---- structure ----------------------------------------------------------------------
    def seq(self, seq: SeqStmts) -> SeqStmts:
        stmts = [self.nested(s) for s in seq.stmts]
        changed = any(a is not b for a, b in zip(stmts, seq.stmts))
        out = self.rewrite_list(stmts)
        if out is None:
            return replace(seq, stmts=tuple(stmts)) if changed else seq
        return replace(seq, stmts=tuple(out))

    def nested(self, s: Stmt) -> Stmt:
        if isinstance(s, ForStmt):
            body = self.seq(s.body)
            new = s if body is s.body else replace(s, body=body)
            if id(s) in self.plan:
                new = apply_pipeline_dbc(new)
            return new
        if isinstance(s, WhileStmt):
            body = self.seq(s.body)
            return s if body is s.body else replace(s, body=body)
        if isinstance(s, IfStmt):
            return map_if_bodies(s, self.seq)
        if isinstance(s, SeqStmts):
            return self.seq(s)
        return s

    # ---- one statement list ---------------------------------------------------------------
    def rewrite_list(self, stmts: list[Stmt]) -> list[Stmt] | None:
        """Rewrite matmuls and casts of one list; None when nothing changed."""
        folded = fold_store_casts(stmts)
        if folded is not None:
            return self.rewrite_list(folded) or folded
        subst: dict[Var, Expr] = {}
        deferred: dict[Var, _Deferred] = {}
        dropped: set[Var] = set()
        out: list[Stmt] = []
        changed = False
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, AssignStmt) and stmt.var in dropped:
                changed = True  # a cast folded into a Mat-scratch drain
                continue
            if subst:
                stmt = IRMutator(subst).mutate(stmt)
            if isinstance(stmt, AssignStmt) and stmt.var in deferred:
                new = self.emit_direct_store(stmt, deferred.pop(stmt.var), subst)
                out.extend(new)
                changed = True
                continue
            new = self.rewrite_stmt(stmt, stmts[i + 1:], i, subst, deferred, dropped)
            if new is None:
                out.append(stmt)
                changed |= stmt is not stmts[i]
            else:
                out.extend(new)
                changed = True
        return out if changed else None

    def rewrite_stmt(self, stmt: Stmt, rest: list[Stmt], index: int, subst, deferred,
                     dropped) -> list[Stmt] | None:
        if isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call):
            if stmt.value.op == "tile.cast":
                return self.fold_cast(stmt, rest, subst)
            site = match_matmul(stmt, self.target, self.hints)
            if site is not None:
                return self.rewrite_matmul(site, rest, subst, deferred, dropped)
        return None

    # ---- §3.3 / §3.4 -----------------------------------------------------------------------
    def rewrite_matmul(self, site: MatmulSite, rest, subst, deferred, dropped) -> list[Stmt] | None:
        result = choose(site, self.target, self.ctx, self.hints)
        if result is None:
            return None
        record_tile_choice(site, result, self.target, self.ctx)
        m, n, k = result.m, result.n, result.k
        if (m, n, k) == (site.M, site.N, site.K):
            return None
        b = Block(site.loc, self.left_view)
        if m == site.M and n == site.N:
            return self.k_only(b, site, k)
        return self.mn_tiling(b, site, result, rest, subst, deferred, dropped)

    def k_only(self, b: Block, site: MatmulSite, k: int) -> list[Stmt]:
        spec = KLoopSpec(site.lhs, site.rhs, site.M, site.N, k, site.K, bias=site.bias,
                         acc=site.acc, init_cond=_init_cond(site.call))
        build_k_loop(b, spec, site.result.name, site.out_dtype, result=site.result)
        return b.stmts

    def mn_tiling(self, b: Block, site: MatmulSite, result: L0TileResult, rest, subst, deferred,
                  dropped) -> list[Stmt] | None:
        """§3.4: choose the placement, then the grid builder."""
        reason = None
        if site.op == "tile.matmul_acc":
            reason = f"its accumulator '{site.acc.name}' is owned by the caller"
        elif site.lhs_space is Mem.Vec:
            reason = f"its lhs '{site.lhs.name}' is in Vec"
        elif site.bias is not None and site.bias.type.memory_space is Mem.Bias \
                and result.n < site.N:
            reason = f"its Bias-resident bias '{site.bias.name}' would need an N split"
        if reason is None:
            uses = collect_uses(rest)
            scratch = self.mat_scratch(b, site, result, uses, subst, dropped)
            if scratch is not _NOT_APPLICABLE:
                return scratch  # the grid's statements, or None when refused with a hint
            store = self.direct_store_target(site, uses)
            if store is not None:
                deferred[store] = _Deferred(site, result)
                return []
            reason = "its result feeds something other than one tile.store or matmul operands"
        fits = acc_fits_l0c((site.M, site.N), site.out_dtype, self.target)
        if fits and result.double_buffer_c:
            # The grid only existed to double-buffer L0C; without a placement, fall back to
            # the single-accumulator choice (inferred: PH-AT-006 is for outputs over L0C).
            single = choose(site, self.target, self.ctx, HintLog(), double_buffer_c=False)
            record_placement_fallback(site, single)
            if single is not None and (single.m, single.n) == (site.M, site.N):
                if single.k == site.K:
                    return None
                return self.k_only(b, site, single.k)
        self.hints.add("PH-AT-006", f"{site.describe()}: the chosen L0 tile is "
                       f"[{result.m}, {result.n}] (k={result.k}) but no M/N placement applies: "
                       f"{reason}; left untiled", site.loc)
        return None

    def mat_scratch(self, b: Block, site: MatmulSite, result: L0TileResult, uses, subst,
                    dropped):
        """§3.4 TryFoldMatScratch: a result used only as matmul operands (through at most one
        cast) is drained sub-tile by sub-tile into one [M, N] L1 scratch. Returns the grid's
        statements, None when it applies but is refused (hint given), else _NOT_APPLICABLE."""
        r_uses = uses.get(site.result, [])
        cast_stmt = None
        if len(r_uses) == 1 and r_uses[0].op == "tile.cast" and r_uses[0].arg == 0 \
                and not r_uses[0].nested and isinstance(r_uses[0].stmt, AssignStmt):
            cast_stmt = r_uses[0].stmt
            final_uses = uses.get(cast_stmt.var, [])
        else:
            final_uses = r_uses
        if not final_uses or not all(_is_operand_use(u) for u in final_uses):
            return _NOT_APPLICABLE
        foldable = cast_stmt is not None and cast_foldable_to_fixpipe(site.result.type,
                                                                      cast_stmt.value)
        if cast_stmt is not None and not foldable or \
                cast_stmt is None and self.target.requires_low_precision_mat_scratch:
            what = (f"its cast '{cast_stmt.var.name}' is not an f32 -> bf16/f16 rint cast"
                    if cast_stmt is not None else f"it is consumed as {site.out_dtype.value}")
            self.hints.add("PH-AT-009", f"{site.describe()} is chained into another matmul but "
                           f"{what}; target {self.target.name} needs a bf16/f16 Mat scratch; "
                           "left untiled", site.loc)
            return None
        dtype = cast_stmt.value.type.dtype if cast_stmt is not None else site.out_dtype
        need = site.M * site.N * dtype.nbytes
        if need > self.target.capacity(Mem.Mat):
            self.hints.add("PH-AT-006", f"{site.describe()}: the [{site.M}, {site.N}] "
                           f"{dtype.value} Mat scratch needs {need} bytes but Mat holds "
                           f"{self.target.capacity(Mem.Mat)}; left untiled", site.loc)
            return None
        if self.ctx.memory_planner is MemoryPlanner.PYPTO:  # issue #1908: keep the producer OS
            result = choose(site, self.target, self.ctx, HintLog(), force_output_stationary=True) \
                or result
            record_tile_choice(site, result, self.target, self.ctx, force_output_stationary=True,
                               note="Mat scratch under PYPTO keeps the producer output-stationary")
        base = site.result.name
        scratch = make_scratch(b, f"{base}_scratch", (site.M, site.N), dtype)
        place = Placement("scratch", scratch, f"{base}_scratch", scratch_dtype=dtype)
        final = self.grid(b, site, result, place)
        if cast_stmt is not None:
            dropped.add(cast_stmt.var)
            subst[cast_stmt.var] = final
        else:
            subst[site.result] = final
        return b.stmts

    @staticmethod
    def direct_store_target(site: MatmulSite, uses) -> Var | None:
        """§3.4 TryFoldMNTiling: the result's only use is one top-level 2-D ``tile.store``."""
        r_uses = uses.get(site.result, [])
        if len(r_uses) != 1:
            return None
        u = r_uses[0]
        if u.op != "tile.store" or u.arg != 0 or u.nested or not isinstance(u.stmt, AssignStmt):
            return None
        offsets = u.stmt.value.args[1]
        if not isinstance(offsets, ListExpr) or len(offsets.items) != 2:
            return None
        return u.stmt.var

    def emit_direct_store(self, store_stmt: AssignStmt, d: _Deferred, subst) -> list[Stmt]:
        """The deferred grid, emitted at the store's position; the store's result is remapped."""
        call = store_stmt.value
        out = call.args[2]
        b = Block(d.site.loc, self.left_view)
        place = Placement("store", out, out.name if isinstance(out, Var) else d.site.result.name,
                          store=call)
        subst[store_stmt.var] = self.grid(b, d.site, d.result, place)
        return b.stmts

    def grid(self, b: Block, site: MatmulSite, result: L0TileResult, place: Placement) -> Expr:
        base = site.result.name
        if result.k == site.K:
            tail_group = None
            if result.double_buffer_c and self.spread_dbc_tails:
                tail_group, self.tail_groups = self.tail_groups, self.tail_groups + 1
            return build_full_k_pipelined(
                b, site, site.lhs, site.rhs, result.m, result.n, row_outer(result),
                result.double_buffer_c, result.stationarity is Stationarity.OutputStationary,
                place, base, tail_group=tail_group)
        return build_split_k_grid(b, site, site.lhs, site.rhs, result.m, result.n, result.k,
                                  place, base)

    # ---- §3.5 the fits-L0C cast fold ---------------------------------------------------------
    def fold_cast(self, stmt: AssignStmt, rest, subst) -> list[Stmt] | None:
        call = stmt.value
        src = call.args[0] if call.args else None
        if not (isinstance(src, Var) and isinstance(src.type, TileType)
                and src.type.memory_space is Mem.Acc and isinstance(stmt.var.type, TileType)):
            return None
        dims = tuple(src.type.shape)
        if len(dims) != 2 or not all(isinstance(d, int) for d in dims) \
                or not acc_fits_l0c(dims, src.type.dtype, self.target):
            return None
        cast_uses = collect_uses(rest).get(stmt.var, [])
        if not cast_uses or not all(_is_operand_use(u) for u in cast_uses):
            return None
        if not cast_foldable_to_fixpipe(src.type, call):
            self.hints.add("PH-AT-010", f"tile.cast '{stmt.var.name}' of the accumulator "
                           f"'{src.name}' ({src.type.dtype.value} -> {stmt.var.type.dtype.value}, "
                           f"mode={call.kwarg('mode', 'round')!r}) feeds a matmul but cannot be "
                           "folded into the FIXPIPE write to Mat (needs f32 -> bf16/f16 with "
                           "mode='rint'); it stays a vector conversion", stmt.loc or call.loc)
            return None
        b = Block(stmt.loc, self.left_view)
        scratch = make_scratch(b, f"{stmt.var.name}_scratch", dims, stmt.var.type.dtype)
        folded = b.let(f"{stmt.var.name}_mat",
                       make_call("tile.assemble", (scratch, src, [0, 0])))
        subst[stmt.var] = folded
        return b.stmts


def _init_cond(call: Call) -> Expr | None:
    """A matmul_acc's "overwrite instead of accumulate" predicate (its 4th argument), if any."""
    return call.args[3] if call.op == "tile.matmul_acc" and len(call.args) > 3 else None
