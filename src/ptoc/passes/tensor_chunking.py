"""Row chunking of tensor-level ops whose tiles do not fit Vec (the first step of
ConvertTensorToTileOps; a ptoc extension).

PyPTO lowers a tensor-level program by giving every tensor value one whole tile, and rejects
it when those tiles do not fit the Vec buffer ("Vec buffer usage ... exceeds platform
limit"). ConvertTensorToTileOps first rewrites such a program instead:

* a *run* is a maximal sequence of statements of one body made of row-local tensor ops
  (``OpDef.row_local``: each result row needs only the same row of its [R, x] operands and
  whole [1, C] operands), row slices of tensors and ``tensor.assemble`` into an output;
* the run's Vec footprint is modelled as ConvertTensorToTileOps will lay it out (one tile per
  loaded operand and per value, live from definition to last use, plus each op's scratch);
  a run that fits is left alone, so programs that fit keep exactly PyPTO's lowering;
* otherwise the run becomes a loop over blocks of ``rc`` rows (the largest divisor of R that
  fits): each [R, x] input is sliced to the block, each op computes [rc, x], each assemble
  writes the block's rows. When two blocks fit at once the loop is ``pl.pipeline(stage=2)``,
  so the next block's loads overlap this block's compute (double buffering).

* when even one row overflows Vec (very wide rows) and every op of the run is element-wise
  across columns (its result is [R, C] and its operands [R, C], [1, C] or [R, 1]: column j
  of the result needs only column j), the run becomes a loop over blocks of ``cc`` columns
  of all R rows instead ([1, C] operands and output windows sliced by columns, [R, 1] ones
  whole), ``cc`` the largest divisor of C that is a whole number of 32-byte blocks and fits.

* a run over a *dynamic* number of rows (``pl.Tensor[[M, C], ...]``, ``M = pl.dynamic("M")``)
  has no static tile at all, so it is always chunked: blocks of ``rc`` rows (the largest
  power of two up to 256 whose block fits) over ``range(0, M, rc)``, the last block valid
  only over ``min(M - ci, rc)`` rows (its slices carry that ``valid_shape``, so loads read,
  ops compute and stores write only the rows that exist). PyPTO refuses such a program
  (InitMemRef: a tile needs a static shape); one compile then serves every M.
* a column reduction (``col_sum/max/min/prod``) of a tensor with a dynamic row count is
  reduced in such blocks too: the first block's result starts a carried value, each later
  block's result is combined into it (``_COMBINE``); sums and products round per block.
  ``col_argmax/argmin`` carry the extreme and its index: a later block's index (its own
  plus the block's first row) replaces the carried one where the block's extreme is
  strictly better, decided by the arg reduction itself over the two extremes stacked as
  two rows (the carried one first, so a tie keeps the earlier row, as the whole-tensor op
  does), ``index += pick * (block_index - index)`` in INT32.
* in a kernel that uses the cube, only runs of whole-tensor matmuls over a dynamic number
  of lhs rows are chunked (``a: [M, K]``, ``b`` static): blocks of 128, 64, 32 or 16 rows,
  the largest whose lhs block and whole rhs fit Mat and result fits Acc, tails as above.

The choice is recorded as a ``tensor_chunking`` decision (``report/decisions.md``). A run
that cannot be chunked (a value used after it, rows that differ, one row that alone
overflows Vec in a run that is not column-wise, or full-height column blocks that do not
fit) is left as written; memory allocation then reports the overflow as PyPTO does.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.ir.nodes import replace
from ptoc.backend.targets import align_up
from ptoc.dtypes import DataType, ForKind, MemorySpace
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, EvalStmt, Expr, ForStmt, Function, IfStmt, IterArg,
    ListExpr, SeqStmts, Stmt, UnaryOp, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.types import ScalarType, TensorType, TileType
from ptoc.ir.equality import structural_equal
from ptoc.ir.printer import format_node
from ptoc.ir.visitor import fold_constants
from ptoc.ops import get_op, has_op, make_call
from ptoc.passes.decisions import record_decision
from ptoc.passes.memref_rewrite import physical_bytes

PASS = "ConvertTensorToTileOps"


def chunk_tensor_runs(function: Function, target) -> Function:
    """``function`` with every run of tensor ops that overflows Vec chunked (module doc).

    A mixed kernel (cube and vector work in one scope) is left as written: its vector half
    runs on the AIVs, whose footprint depends on the split (each AIV holds half the rows
    under ``pl.split``) and on the cross-core ring, and LowerAutoVectorSplit splits whole
    tiles; AllocateMemoryAddr reports an overflow as PyPTO does. The exception is a run of
    whole-tensor matmuls over a *dynamic* number of lhs rows (module doc), which has no static
    tile to keep."""
    chunker = _Chunker(function, target, cube=_uses_cube(function))
    body = chunker.seq(function.body, ())
    return replace(function, body=body) if chunker.changed else function


@dataclass
class _Run:
    """A candidate run: its statements and what the analysis found about them."""

    stmts: list[AssignStmt]
    rows: int = 0
    inputs: tuple[Var, ...] = ()          # [R, x] tensors read by the run (sliced per block)
    roots: tuple[Var, ...] = ()           # output tensors the run assembles into
    finals: tuple[Var, ...] = ()          # the last assemble result per root


_CUBE_OPS = ("tensor.matmul", "tensor.matmul_acc", "tensor.matmul_bias", "tensor.gemv",
             "tensor.gemv_acc", "tensor.gemv_bias", "tile.matmul", "tile.matmul_acc",
             "tile.matmul_bias")


def _uses_cube(function: Function) -> bool:
    """True when ``function`` calls a matmul (its tensor runs then feed or follow the cube)."""
    from ptoc.ir.visitor import calls_in

    return bool(calls_in(function, lambda call: call.op in _CUBE_OPS))


def _is_call(stmt: Stmt, *names: str) -> Call | None:
    if isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call) \
            and not stmt.value.is_function and (not names or stmt.value.op in names):
        return stmt.value
    return None


def _row_blocked_matmul(call: Call) -> bool:
    """A ``tensor.matmul`` whose result row i needs row i of ``a`` and all of ``b``."""
    return call.op == "tensor.matmul" and not call.kwarg("a_trans")


def _chunkable(stmt: Stmt, cube: bool) -> bool:
    """Part of a run: slices and assembles, and the row-local tensor ops (in a kernel that
    uses the cube: the row-blocked matmuls only; its vector work is left as written)."""
    call = _is_call(stmt)
    if call is None or not has_op(call.op):
        return False
    if call.op in ("tensor.slice", "tensor.assemble"):
        return True
    if cube:
        return _row_blocked_matmul(call)
    op = get_op(call.op)
    return op.level == "tensor" and op.row_local


def _writes_earlier_value(stmt: Stmt, run: list) -> bool:
    """An assemble at the head of a run whose value no statement of the run computes: it
    stays before the run as written (``s[:] = pl.col_sum(a)`` followed by row ops)."""
    call = _is_call(stmt, "tensor.assemble")
    return call is not None and not any(s.var is call.args[1] for s in run)


def _vars_read(node, found: set) -> set:
    """Every Var read anywhere inside ``node`` (statements and expressions, nested bodies)."""
    if isinstance(node, Var):
        found.add(node)
        if isinstance(node, IterArg) and node.init is not None:
            _vars_read(node.init, found)
    elif isinstance(node, (list, tuple)):
        for item in node:
            _vars_read(item, found)
    elif isinstance(node, Call):
        _vars_read(node.args, found)
        _vars_read([v for _, v in node.kwargs], found)
    elif isinstance(node, BinOp):
        _vars_read((node.lhs, node.rhs), found)
    elif isinstance(node, UnaryOp):
        _vars_read(node.operand, found)
    elif isinstance(node, ListExpr):
        _vars_read(node.items, found)
    elif isinstance(node, AssignStmt):
        _vars_read(node.value, found)
    elif isinstance(node, EvalStmt):
        _vars_read(node.expr, found)
    elif isinstance(node, SeqStmts):
        _vars_read(node.stmts, found)
    elif isinstance(node, YieldStmt):
        _vars_read(node.values, found)
    elif isinstance(node, ForStmt):
        _vars_read((node.start, node.stop, node.step, node.iter_args, node.body), found)
    elif isinstance(node, WhileStmt):
        _vars_read((node.cond, node.iter_args, node.body), found)
    elif isinstance(node, IfStmt):
        _vars_read((node.cond, node.then_body, node.else_body), found)
    elif hasattr(node, "values"):
        _vars_read(node.values, found)
    return found


class _Chunker:
    def __init__(self, function: Function, target, *, cube: bool = False):
        self.function = function
        self.target = target
        self.cube = cube
        self.capacity = target.capacity(MemorySpace.Vec)
        self.changed = False

    # ---- walking ------------------------------------------------------------------------------
    def seq(self, seq: SeqStmts, after: tuple) -> SeqStmts:
        """``after``: statements that follow this body (their reads keep values alive)."""
        stmts = list(seq.stmts)
        out: list[Stmt] = []
        i = 0
        while i < len(stmts):
            stmt = stmts[i]
            if _chunkable(stmt, self.cube):
                j = i
                while j < len(stmts) and _chunkable(stmts[j], self.cube):
                    j += 1
                k = i    # assembles of values computed before the run (a column
                while k < j and _writes_earlier_value(stmts[k], stmts[k:j]):  # reduction's)
                    k += 1
                out.extend(stmts[i:k])
                out.extend(self.run(stmts[k:j], tuple(stmts[j:]) + after))
                i = j
                continue
            blocks = self.column_reduction(stmt)
            out.extend(blocks if blocks is not None else
                       [self.nested(stmt, tuple(stmts[i + 1:]) + after)])
            i += 1
        return replace(seq, stmts=tuple(out))

    def nested(self, stmt: Stmt, after: tuple) -> Stmt:
        if isinstance(stmt, (ForStmt, WhileStmt)):
            return replace(stmt, body=self.seq(stmt.body, after))
        if isinstance(stmt, IfStmt):
            else_body = self.seq(stmt.else_body, after) if stmt.else_body is not None else None
            return replace(stmt, then_body=self.seq(stmt.then_body, after), else_body=else_body)
        return stmt

    # ---- one run ------------------------------------------------------------------------------
    def run(self, stmts: list, after: tuple) -> list[Stmt]:
        run = self.analyse(stmts, after)
        if run is None:
            return stmts
        if self.cube:          # only dynamic row counts: static matmuls are PyPTO's to tile
            return stmts if isinstance(run.rows, int) else self.dynamic_matmul_run(run)
        if not isinstance(run.rows, int):
            return self.dynamic_run(run)
        whole = self.footprint(run, run.rows)
        if whole <= self.capacity:
            return stmts
        cols = None
        block, stages = self.block_rows(run)
        if block is None:                      # one row overflows: column blocks, if column-wise
            cols = self.column_width(run)
            block, stages = self.block_cols(run, cols) if cols else (None, 1)
        loc = stmts[0].loc
        facts = dict(pass_name=PASS, location=loc, kernel=self.function.name, rows=run.rows,
                     vec_bytes=whole, capacity=self.capacity)
        if block is None:
            record_decision(
                "tensor_chunking", f"{self.function.name}: the tensor ops at {loc} need "
                f"{whole} B of Vec ({self.capacity} B available) and even one row at a time "
                "does not fit (nor, when the ops are column-wise, full-height column blocks); "
                "left as written", chunked=False, **facts)
            return stmts
        self.changed = True
        each = self.footprint(run, block) if cols is None else \
            self.footprint(run, run.rows, (block, cols))
        what = (f"{run.rows // block} blocks of {block} rows" if cols is None else
                f"{cols // block} blocks of {block} columns (one row alone does not fit)")
        record_decision(
            "tensor_chunking", f"{self.function.name}: tensor ops at {loc} need {whole} B of Vec "
            f"({self.capacity} B available): computed in {what} ({each} B each)"
            + (", double-buffered (pl.pipeline stage=2)" if stages == 2 else ""),
            chunked=True, stages=stages, block_vec_bytes=each,
            **({"block_rows": block} if cols is None else {"block_cols": block}), **facts)
        return [self.loop(run, block, stages, cols)]

    def dynamic_run(self, run: _Run) -> list[Stmt]:
        """A run over a dynamic number of rows: blocks with a tail (module doc)."""
        loc, rows = run.stmts[0].loc, format_node(run.rows)
        block = next((b for b in _DYNAMIC_BLOCKS if self.footprint(run, b) <= self.capacity),
                     None)
        facts = dict(pass_name=PASS, location=loc, kernel=self.function.name,
                     rows=rows, capacity=self.capacity)
        partly_valid = any(s.value.op == "tensor.slice" and s.var.type.view is not None
                           for s in run.stmts)
        if block is None or partly_valid:
            why = "slice a partly valid window" if partly_valid else "one row alone overflows Vec"
            record_decision(
                "tensor_chunking", f"{self.function.name}: the tensor ops at {loc} run over "
                f"{rows} rows (dynamic) and {why}; left as written", chunked=False, **facts)
            return run.stmts
        self.changed = True
        record_decision(
            "tensor_chunking", f"{self.function.name}: tensor ops at {loc} run over {rows} "
            f"rows (dynamic): computed in blocks of {block} rows, the last one valid over "
            f"min({rows} - ci, {block}) rows ({self.footprint(run, block)} B each)",
            chunked=True, stages=1, block_rows=block,
            block_vec_bytes=self.footprint(run, block), **facts)
        return [self.loop(run, block, 1)]

    def dynamic_matmul_run(self, run: _Run) -> list[Stmt]:
        """Whole-tensor matmuls over a dynamic number of lhs rows: blocks of the largest
        cube-friendly row count whose lhs blocks, whole rhs (Mat) and result (Acc) fit; the
        tail block's slices are valid over its rows only, so the Acc tile and the store are
        too (AutoTileMatmulL0 tiles the block's K and N)."""
        loc, rows = run.stmts[0].loc, format_node(run.rows)
        block = next((b for b in _DYNAMIC_CUBE_BLOCKS if self.cube_fits(run, b)), None)
        facts = dict(pass_name=PASS, location=loc, kernel=self.function.name, rows=rows)
        if block is None:
            record_decision(
                "tensor_chunking", f"{self.function.name}: the matmuls at {loc} run over "
                f"{rows} rows (dynamic) and even {_DYNAMIC_CUBE_BLOCKS[-1]}-row blocks with the "
                "whole rhs do not fit Mat/Acc; left as written", chunked=False, **facts)
            return run.stmts
        self.changed = True
        record_decision(
            "tensor_chunking", f"{self.function.name}: matmuls at {loc} run over {rows} rows "
            f"(dynamic): computed in blocks of {block} lhs rows, the last one valid over "
            f"min({rows} - ci, {block}) rows", chunked=True, stages=1, block_rows=block, **facts)
        return [self.loop(run, block, 1)]

    def cube_fits(self, run: _Run, rows: int) -> bool:
        """Every matmul's lhs block plus its whole rhs fit Mat, and its result block Acc."""
        mat = self.target.capacity(MemorySpace.Mat)
        acc = self.target.capacity(MemorySpace.Acc)
        need = 0
        for stmt in run.stmts:
            if stmt.value.op != "tensor.matmul":
                continue
            lhs, rhs = stmt.value.args[:2]
            need += self.tile_bytes(lhs.type, rows, run.rows, space=MemorySpace.Mat) \
                + self.tile_bytes(rhs.type, rows, run.rows, space=MemorySpace.Mat)
            if self.tile_bytes(stmt.var.type, rows, run.rows, space=MemorySpace.Acc) > acc:
                return False
        return need <= mat

    def column_reduction(self, stmt: Stmt) -> list[Stmt] | None:
        """A column reduction of a tensor with a dynamic row count, in blocks (module doc):
        the first block's reduction starts the carried value, each later block's is combined
        into it; every block is valid over the rows it holds. None: not such a statement."""
        call = _is_call(stmt, *_COMBINE, *_ARG_COMBINE)
        x = call.args[0] if call is not None else None
        if self.cube or not isinstance(x, Var) or isinstance(leading_rows(x.type), (int, type(None))):
            return None
        rows, cols = x.type.shape
        arg = call.op in _ARG_COMBINE
        part = max(self.tile_bytes(stmt.var.type, 1, 1), self.tile_bytes(x.type, 1, 1))
        blocks, parts = _ARG_LIVE if arg else _REDUCE_LIVE
        block = next((b for b in _DYNAMIC_BLOCKS if self.tile_bytes(x.type, b, rows) * blocks
                      + parts * part <= self.capacity), None)
        facts = dict(pass_name=PASS, location=stmt.loc, kernel=self.function.name,
                     rows=format_node(rows), capacity=self.capacity)
        if block is None:
            record_decision("tensor_chunking", f"{self.function.name}: the column reduction at "
                            f"{stmt.loc}: even one row overflows Vec; left as written",
                            chunked=False, **facts)
            return None
        self.changed = True
        how = (f"each block's {_ARG_COMBINE[call.op][0]} compared with the carried one (the "
               "earlier block wins a tie), its index offset by the block's first row") if arg \
            else f"combined with {_COMBINE[call.op]}"
        record_decision(
            "tensor_chunking", f"{self.function.name}: {call.op} at {stmt.loc} over "
            f"{format_node(rows)} rows (dynamic): reduced in blocks of {block} rows, {how}",
            chunked=True, stages=1, block_rows=block, **facts)
        loc, name = stmt.loc, stmt.var.name

        def let(body: list, var_name: str, value: Call) -> Var:
            var = Var(var_name, value.type, loc)
            body.append(AssignStmt(var, value, loc=loc))
            return var

        def window(body: list, offset: Expr, suffix: str) -> Var:
            left = fold_constants(BinOp("-", rows, offset)) \
                if not (isinstance(offset, ConstInt) and offset.value == 0) else rows
            valid = let(body, f"{name}_rows{suffix}", make_call("tile.min", (left, block), loc=loc))
            return let(body, f"{x.name}_blk{suffix}", make_call(
                "tensor.slice", (x, [block, cols], [offset, 0], [valid, cols]), loc=loc))

        def reduce(body: list, op: str, blk: Var, var_name: str) -> Var:
            return let(body, var_name, make_call(op, (blk,), dict(call.kwargs), loc=call.loc))

        first: list[Stmt] = []
        blk = window(first, ConstInt(0), "_first")
        ci = Var("ci", ScalarType(DataType.INDEX), loc)
        body: list[Stmt] = []
        block_blk = window(body, ci, "_blk")
        if not arg:
            init = reduce(first, call.op, blk, f"{name}_first")
            carry = IterArg(f"{name}_iter", init.type, loc, init=init)
            value = reduce(body, call.op, block_blk, f"{name}_blk")
            step = let(body, f"{name}_next", make_call(_COMBINE[call.op], (carry, value), loc=loc))
            carries, yields, results = (carry,), (step,), (stmt.var,)
        else:
            extreme, combine = _ARG_COMBINE[call.op]
            v_init = reduce(first, extreme, blk, f"{name}_value_first")
            i_init = reduce(first, call.op, blk, f"{name}_first")
            v_carry = IterArg(f"{name}_value_iter", v_init.type, loc, init=v_init)
            i_carry = IterArg(f"{name}_iter", i_init.type, loc, init=i_init)
            value = reduce(body, extreme, block_blk, f"{name}_value_blk")
            local = reduce(body, call.op, block_blk, f"{name}_local")
            index = let(body, f"{name}_blk", make_call("tensor.adds", (local, ci), loc=loc))
            # which of [carried; block] extremes wins, per column: 0 (carried, ties too) or 1
            pair = let(body, f"{name}_pair", make_call("tensor.reshape", (
                let(body, f"{name}_both", make_call("tensor.concat", (v_carry, value), loc=loc)),
                [2, cols]), loc=loc))
            pick = reduce(body, call.op, pair, f"{name}_pick")
            delta = let(body, f"{name}_delta", make_call("tensor.sub", (index, i_carry), loc=loc))
            moved = let(body, f"{name}_moved", make_call("tensor.mul", (pick, delta), loc=loc))
            step = let(body, f"{name}_next", make_call("tensor.add", (i_carry, moved), loc=loc))
            v_step = let(body, f"{name}_value_next", make_call(combine, (v_carry, value), loc=loc))
            carries, yields = (v_carry, i_carry), (v_step, step)
            results = (Var(f"{name}_value", v_init.type, loc), stmt.var)
        body.append(YieldStmt(yields, loc=loc))
        return first + [ForStmt(ci, ConstInt(block), rows, ConstInt(block), carries,
                                SeqStmts(tuple(body)), results, ForKind.Sequential, {}, loc=loc)]

    def analyse(self, stmts: list, after: tuple) -> _Run | None:
        """The run's row count, inputs and outputs; None when it cannot be chunked."""
        defined = {s.var for s in stmts}
        if not any(_is_call(s, "tensor.assemble") is None and _is_call(s, "tensor.slice") is None
                   for s in stmts):
            return None
        rows = None
        inputs: list[Var] = []
        roots: list[Var] = []
        latest: dict[Var, Var] = {}              # root -> its latest assemble result
        for stmt in stmts:
            call = stmt.value
            if call.op == "tensor.assemble":
                target, value = call.args[0], call.args[1]
                root = next((r for r, last in latest.items() if last is target), target)
                if root not in latest:
                    if target in defined or not isinstance(target, Var):
                        return None
                    roots.append(root)
                latest[root] = stmt.var
                if not isinstance(value, Var) or value not in defined:
                    return None
                continue
            shape = leading_rows(stmt.var.type)
            if shape is None:
                return None
            rows = shape if rows is None else rows
            if not same_dim(shape, rows):
                return None
            whole = call.args[1:2] if _row_blocked_matmul(call) else ()   # the rhs
            for arg in call.args:
                if any(arg is w for w in whole):
                    if leading_rows(arg.type) is None or not isinstance(arg.type.shape[0], int):
                        return None
                    continue
                if isinstance(arg, Var) and arg not in defined and isinstance(arg.type, TensorType):
                    arg_rows = leading_rows(arg.type)
                    if call.op == "tensor.slice":
                        continue
                    if same_dim(arg_rows, rows):
                        if arg not in inputs:
                            inputs.append(arg)
                    elif not same_dim(arg_rows, 1):
                        return None
        if rows is None:
            return None
        finals = set(latest.values())
        used_later = _vars_read(list(after), set())
        if any(v in used_later for v in defined - finals):
            return None
        return _Run(list(stmts), rows, tuple(inputs), tuple(roots),
                    tuple(latest[r] for r in roots))

    # ---- column blocks -------------------------------------------------------------------------
    def column_width(self, run: _Run) -> int | None:
        """C when every op of the run is element-wise across its C columns (module doc)."""
        width = None
        for stmt in run.stmts:
            if stmt.value.op in ("tensor.slice", "tensor.assemble"):
                continue
            shape = stmt.var.type.shape
            width = shape[1] if width is None else width
            if shape[1] != width or width == 1:
                return None
            for arg in stmt.value.args:
                if isinstance(arg, Var) and isinstance(arg.type, TensorType) and \
                        (len(arg.type.shape) != 2 or arg.type.shape[1] not in (width, 1)):
                    return None
        for stmt in run.stmts:     # user slices and assembles must span the whole width
            if stmt.value.op == "tensor.slice" and stmt.var.type.shape[1] != width:
                return None
            if stmt.value.op == "tensor.assemble" and \
                    stmt.value.args[1].type.shape[1] != width:
                return None
        return width

    def block_cols(self, run: _Run, cols: int) -> tuple[int | None, int]:
        """(columns per block, stages): the largest divisor of C, a whole number of 32-byte
        blocks of every dtype in the run, whose all-row blocks fit twice, else once."""
        step = max(1, 32 // min(v.type.dtype.nbytes for s in run.stmts for v in (s.var,)
                                if isinstance(v.type, TensorType)))
        divisors = [d for d in range(cols - step, 0, -step) if cols % d == 0]
        for stages in (2, 1):
            for d in divisors:
                if stages * self.footprint(run, run.rows, (d, cols)) <= self.capacity \
                        and cols // d >= stages:
                    return d, stages
        return None, 1

    # ---- the Vec footprint model --------------------------------------------------------------
    def tile_bytes(self, ty, rows: int, full_rows: int, cols: tuple | None = None,
                   space: MemorySpace = MemorySpace.Vec) -> int:
        """Bytes of the tile (in ``space``) holding a value of type ``ty`` when [R, x] values
        have ``rows`` (and, with ``cols`` = (block, C), [x, C] values ``block`` columns)."""
        shape = list(ty.shape)
        if shape and same_dim(shape[0], full_rows):
            shape[0] = rows
        if cols is not None and len(shape) == 2 and shape[1] == cols[1]:
            shape[1] = cols[0]
        size = physical_bytes(TileType(tuple(shape), ty.dtype, space), self.target)
        return align_up(size or 0, self.target.address_alignment)

    def footprint(self, run: _Run, rows: int, cols: tuple | None = None) -> int:
        """Peak Vec bytes of the run converted with [R, x] values of ``rows`` rows (and
        ``cols``, see tile_bytes): every operand of a compute op (loaded, or computed
        earlier) and every computed value has one tile, live from its first appearance to
        its last use; assemble results are DDR."""
        first: dict[Var, int] = {}
        last: dict[Var, int] = {}
        ddr = set(run.roots) | {s.var for s in run.stmts if s.value.op == "tensor.assemble"}
        for i, stmt in enumerate(run.stmts):
            if stmt.value.op in ("tensor.assemble", "tensor.slice"):
                continue
            for v in [a for a in stmt.value.args if isinstance(a, Var)] + [stmt.var]:
                if isinstance(v.type, TensorType) and v not in ddr:
                    first.setdefault(v, i)
                    last[v] = i
        for i, stmt in enumerate(run.stmts):       # a value stored by an assemble lives to it
            if stmt.value.op == "tensor.assemble" and stmt.value.args[1] in last:
                last[stmt.value.args[1]] = max(last[stmt.value.args[1]], i)
        peak = 0
        for i, stmt in enumerate(run.stmts):
            live = sum(self.tile_bytes(v.type, rows, run.rows, cols) for v in first
                       if first[v] <= i <= last[v])
            op = get_op(stmt.value.op)
            if op.tile_form is not None and op.tile_form.scratch:
                src = next(a for a in stmt.value.args if isinstance(a, Var))
                live += len(op.tile_form.scratch) * self.tile_bytes(src.type, rows, run.rows,
                                                                    cols)
            peak = max(peak, live)
        return peak

    def block_rows(self, run: _Run) -> tuple[int | None, int]:
        """(rows per block, pipeline stages): the largest divisor of R whose blocks fit twice
        (double buffering), else once; (None, 1) when no block fits."""
        divisors = [d for d in range(run.rows - 1, 0, -1) if run.rows % d == 0]
        for stages in (2, 1):
            for d in divisors:
                if stages * self.footprint(run, d) <= self.capacity and run.rows // d >= stages:
                    return d, stages
        return None, 1

    # ---- the rewrite --------------------------------------------------------------------------
    def loop(self, run: _Run, block: int, stages: int, cols: int | None = None) -> ForStmt:
        """The run as a loop over blocks of ``block`` rows, or (``cols`` = C) of ``block``
        columns of all rows."""
        loc = run.stmts[0].loc
        ci = Var("ci" if cols is None else "cj", ScalarType(DataType.INDEX), loc)
        axis = 0 if cols is None else 1

        body: list[Stmt] = []
        tail = None               # the block's valid row count when the row count is dynamic
        if not isinstance(run.rows, int):
            left = make_call("tile.min", (fold_constants(BinOp("-", run.rows, ci)), block),
                             loc=loc)
            tail = Var("rows", left.type, loc)
            body.append(AssignStmt(tail, left, loc=loc))

        def window(shape: list, offsets: list) -> tuple:
            shape, offsets = list(shape), list(offsets)
            shape[axis] = block
            offsets[axis] = _add(offsets[axis], ci)
            return (shape, offsets) if tail is None else (shape, offsets, [tail, *shape[1:]])

        mapping: dict[Var, Expr] = {}
        carried: dict[Var, Expr] = {}   # what an assemble writes into (a root that is also
        iter_args = []                  # an operand, z[:] = z + x, is read through its block)
        for root in run.roots:
            ia = IterArg(f"{root.name}_iter", root.type, loc, init=root)
            iter_args.append(ia)
            mapping[root] = carried[root] = ia
        for x in self.sliced_operands(run, cols):
            chunk = make_call("tensor.slice", (x, *window(x.type.shape, [0] * len(x.type.shape))),
                              loc=loc)
            var = Var(f"{x.name}_blk", chunk.type, loc)
            body.append(AssignStmt(var, chunk, loc=loc))
            mapping[x] = var
        for stmt in run.stmts:
            call = stmt.value
            if call.op == "tensor.slice":
                new = make_call("tensor.slice", (call.args[0], *window(call.args[1].items,
                                                                       call.args[2].items)),
                                loc=call.loc)
            elif call.op == "tensor.assemble":
                offsets = window(call.args[1].type.shape, call.args[2].items)[1]
                new = make_call("tensor.assemble", (carried[call.args[0]],
                                                    mapping[call.args[1]], offsets),
                                dict(call.kwargs), loc=call.loc)
            else:
                args = tuple(mapping.get(a, a) if isinstance(a, Var) else a for a in call.args)
                new = make_call(call.op, args, dict(call.kwargs), loc=call.loc)
            var = Var(stmt.var.name, new.type, stmt.var.loc)
            body.append(AssignStmt(var, new, loc=stmt.loc))
            mapping[stmt.var] = var
            if call.op == "tensor.assemble":
                carried[stmt.var] = var
        body.append(YieldStmt(tuple(carried.get(f, mapping[f]) for f in run.finals), loc=loc))
        kind = ForKind.Pipeline if stages > 1 else ForKind.Sequential
        attrs = {"pipeline_stages": stages} if stages > 1 else {}
        stop = run.rows if cols is None else cols
        return ForStmt(ci, ConstInt(0), ConstInt(stop) if isinstance(stop, int) else stop,
                       ConstInt(block), tuple(iter_args),
                       SeqStmts(tuple(body)), tuple(run.finals), kind, attrs, loc=loc)

    @staticmethod
    def sliced_operands(run: _Run, cols: int | None) -> list[Var]:
        """Operands cut per block: the [R, x] inputs for row blocks; for column blocks every
        [x, C] tensor the run reads ([x, 1] ones stay whole)."""
        if cols is None:
            return list(run.inputs)
        defined = {s.var for s in run.stmts}
        found: list[Var] = []
        for stmt in run.stmts:
            if stmt.value.op in ("tensor.slice", "tensor.assemble"):
                continue
            for arg in stmt.value.args:
                if isinstance(arg, Var) and arg not in defined and arg not in found \
                        and isinstance(arg.type, TensorType) and arg.type.shape[-1] == cols:
                    found.append(arg)
        return found


#: row counts tried, largest first, for a block of a run over a dynamic number of rows
_DYNAMIC_BLOCKS = (256, 128, 64, 32, 16, 8, 4, 2, 1)
#: column reductions a dynamic row count is reduced in blocks for, and how blocks combine
_COMBINE = {"tensor.col_sum": "tensor.add", "tensor.col_max": "tensor.maximum",
            "tensor.col_min": "tensor.minimum", "tensor.col_prod": "tensor.mul"}
#: column arg reductions reduced in such blocks: op -> (the block's extreme, how extremes combine)
_ARG_COMBINE = {"tensor.col_argmax": ("tensor.col_max", "tensor.maximum"),
                "tensor.col_argmin": ("tensor.col_min", "tensor.minimum")}
#: what a blocked column reduction holds in Vec at once: (block tiles, one-row tiles). A plain
#: reduction: the block; the carried value, the block's result, their combination. An arg
#: reduction: the block read by two reductions; the carried extreme and index, the block's
#: extreme, local and offset index, the stacked pair (two rows), the pick, the index delta,
#: the moved delta, the next index and the next extreme
_REDUCE_LIVE = (1, 3)
_ARG_LIVE = (2, 12)
#: ... of matmul lhs rows (whole 16-row cube fractals; 128 is the cube's usual M tile)
_DYNAMIC_CUBE_BLOCKS = (128, 64, 32, 16)


def leading_rows(ty):
    """The row count (first dim: an int, or the expression of a dynamic one) of a 2-D tensor
    whose other dim is static, else None."""
    if not isinstance(ty, TensorType) or len(ty.shape) != 2 or not isinstance(ty.shape[1], int):
        return None
    return ty.shape[0]


def same_dim(a, b) -> bool:
    """Two dims are the same: equal numbers, or the same dynamic expression."""
    if isinstance(a, int) or isinstance(b, int):
        return a == b
    return a is b or (a is not None and b is not None and structural_equal(a, b))


def _add(a, b):
    if isinstance(a, int):
        a = ConstInt(a)
    if isinstance(a, ConstInt) and a.value == 0:
        return b
    return fold_constants(BinOp("+", a, b))


__all__ = ["chunk_tensor_runs"]
