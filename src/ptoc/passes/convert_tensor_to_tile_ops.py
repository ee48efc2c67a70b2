"""ConvertTensorToTileOps: whole-tensor ops inside a kernel become loads, tile ops and stores.

A kernel may be written on DDR tensors (``c = pl.matmul(a, b)``, ``d = pl.add(c, x)``,
``out[:] = d``). This pass gives every such value a tile: tensor operands are loaded where
they are used — into Mat for matmul operands (the cube reads L1; AutoTileMatmulL0 then
extracts L0 tiles), into Vec for vector ops — each tensor op becomes its ``tile.*`` op, and
``tensor.assemble(out, value, offset)`` (what ``out[:] = value`` parses to) becomes a
``tile.store``. ``tensor.slice`` of a tensor is a view: loads read the sliced window of the
base tensor directly. Orchestration functions are not touched.

Each op's registry entry says how: ``OpDef.tile_form`` names the tile op and the scratch tiles
to allocate, ``compiler_scratch`` the scratch a tile op leaves to the compiler, and
``composite`` expands an op with no instruction (``sin``) into primitives. A loop or branch
that carries a value computed on chip carries its tile. A kernel that returns a value
computed on chip stores it into an ``Out`` parameter added for it (``ret<i>_out``), which
wrappers forward and hosts allocate (``ptoc.passes.added_outputs``), as PyPTO does. First, though, a run of tensor ops
whose tiles would overflow Vec is rewritten into a loop over row blocks
(``ptoc.passes.tensor_chunking``, a ptoc extension; PyPTO rejects such programs).

As in PyPTO, a tensor parameter declared ``In`` that the kernel writes (a store or assemble
destination) is lifted to ``Out``, or ``InOut`` when the kernel also reads it: the write
happens on the device whatever the declaration says, so the caller must receive it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.ir.nodes import replace
from ptoc.dtypes import Direction, FunctionType, MemorySpace
from ptoc.errors import PassError, UnwrittenOutputError
from ptoc.ir.aliases import tensor_aliases
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, EvalStmt, Expr, ForStmt, Function, IfStmt, IterArg, WhileStmt,
    ListExpr, Param, Program, ReturnStmt, SeqStmts, Stmt, UnaryOp, Var, YieldStmt,
)
from ptoc.ir.types import TensorType, TileType, static_shape
from ptoc.ir.visitor import IRVisitor, fold_constants
from ptoc.ir.printer import format_node
from ptoc.ops import get_op, has_op, make_call
from ptoc.ops.registry import to_expr
from ptoc.ops.cast import is_accumulator_cast
from ptoc.passes.added_outputs import HOSTS, thread_added_outputs, with_wrappers
from ptoc.passes.base import program_pass, with_functions
from ptoc.passes.memref_rewrite import last_yield
from ptoc.passes.tensor_chunking import chunk_tensor_runs
from ptoc.passes.manager import register_default_pass

Mem = MemorySpace
KERNEL_TYPES = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
#: where the DDR tensor and the offsets sit in the tile ops that address a tensor window
_TENSOR_SLOT = {"tile.load": 0, "tile.store": 2}
_OFFSETS_SLOT = {"tile.load": 1, "tile.store": 1}


@program_pass(name="ConvertTensorToTileOps", required=("SSAForm",), produced=("TileOpsOnly",),
              handles_while_loops=True)
def convert_tensor_to_tile_ops(program: Program, ctx) -> Program:
    """Lower the tensor-level ops of every kernel (see the module docstring); the Out
    parameters added for returned on-chip values reach the kernels from the host."""
    functions, added = [], {}
    for fn in program.functions:
        if fn.func_type in KERNEL_TYPES:
            fn, outputs = _convert_kernel(fn, ctx)
            if outputs:
                added[fn.name] = outputs
        functions.append(fn)
    if all(a is b for a, b in zip(functions, program.functions)):
        return program
    program = with_functions(program, functions)
    added = with_wrappers(program, added)
    for fn in functions:
        if fn.func_type in HOSTS:
            _check_no_rebound_outputs(fn, added)
    return thread_added_outputs(program, added)


def _check_no_rebound_outputs(host: Function, added: dict) -> None:
    """``out = pl.add(a, b)`` on an Out parameter rebinds the name: the value lands in a
    tensor the host allocates and the parameter is never written. PyPTO compiles this and
    leaves the caller's buffer as it was; ptoc refuses it (a silent wrong result otherwise)."""
    used: set[Var] = set()

    class _Uses(IRVisitor):
        def visit_var(self, var: Var) -> None:
            used.add(var)

    _Uses().visit(host.body)
    outputs = {p.var.name: p.var for p in host.params
               if p.direction is not Direction.In and p.var not in used}

    class _Rebinds(IRVisitor):
        def visit_assign_stmt(self, stmt: AssignStmt) -> None:
            call = stmt.value
            if isinstance(call, Call) and call.is_function and call.op in added \
                    and stmt.var.name in outputs:
                name = stmt.var.name
                raise UnwrittenOutputError(
                    f"'{name} = ...' rebinds the name of the output parameter '{name}' of "
                    f"'{host.name}' to a value computed in '{call.op}': nothing writes the "
                    "parameter, the caller's tensor would keep its old contents", stmt.loc,
                    hint=f"write the output with {name}[:] = ... (or pl.assemble / pl.store)")
            super().visit_assign_stmt(stmt)

    _Rebinds().visit(host.body)


def _convert_kernel(function: Function, ctx) -> tuple[Function, tuple[Var, ...]]:
    function = chunk_tensor_runs(function, ctx.get_backend())
    conv = _Converter(function)
    body = conv.seq(function.body, {})
    if conv.changed:
        function = replace(function, body=_drop_dead_views(body), params=function.params + tuple(
            Param(v, Direction.Out) for v in conv.outputs))
    return _lift_written_params(function), conv.outputs


def _lift_written_params(function: Function) -> Function:
    """``In`` tensor parameters the body writes become ``Out`` (``InOut`` if also read)."""
    aliases = tensor_aliases(function.body, {p.var: i for i, p in enumerate(function.params)})
    params = list(function.params)
    for i, param in enumerate(params):
        if param.direction is Direction.In and i in aliases.written:
            params[i] = replace(param, direction=Direction.InOut if i in aliases.read
                                else Direction.Out)
    if params == list(function.params):
        return function
    return replace(function, params=tuple(params))


register_default_pass(convert_tensor_to_tile_ops)


@dataclass(frozen=True)
class _View:
    """A window of a DDR tensor: ``base[offsets : offsets + shape]``, holding data over its
    leading ``valid`` extents (None: all of it; a slice's ``valid_shape=``, e.g. the tail
    rows of a dynamic dimension)."""

    base: Var
    offsets: tuple
    shape: tuple[int, ...]
    valid: tuple | None = None


def _add(a, b):
    if isinstance(a, ConstInt) and a.value == 0:
        return b
    if isinstance(b, ConstInt) and b.value == 0:
        return a
    return fold_constants(BinOp("+", a, b))


class _Converter:
    """Walks one kernel. ``env`` maps a tensor-typed Var to its tile (a Var) or to a view."""

    def __init__(self, function: Function):
        self.function = function
        self.changed = False
        self.outputs: tuple[Var, ...] = ()  # Out params added for returned on-chip values
        self.created: set[Var] = set()      # kernel-local ``tensor.create`` results (no contents)

    def fail(self, message: str, stmt: Stmt | None, hint: str) -> PassError:
        return PassError(f"ConvertTensorToTileOps in '{self.function.name}': {message}",
                         getattr(stmt, "loc", None), hint=hint)

    # ---- structure ---------------------------------------------------------------------------
    def seq(self, seq: SeqStmts, env: dict) -> SeqStmts:
        env = dict(env)          # values defined in a nested body stay in that body
        cache: dict = {}         # (tensor, offsets, space) -> loaded tile, per body
        out: list[Stmt] = []
        for stmt in seq.stmts:
            out.extend(self.stmt(stmt, env, cache))
        return replace(seq, stmts=tuple(out))

    def stmt(self, stmt: Stmt, env: dict, cache: dict) -> list[Stmt]:
        if isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call) \
                and stmt.value.op.startswith("tensor.") and not stmt.value.is_function:
            converted = self.tensor_op(stmt, env, cache)
            if converted is not None:
                self.changed = True
                return converted
        rewritten = self.through_views(stmt, env)
        if rewritten is not None:
            return rewritten
        if isinstance(stmt, AssignStmt) and isinstance(stmt.value, Call) \
                and not stmt.value.is_function and has_op(stmt.value.op):
            op = get_op(stmt.value.op)
            if op.compiler_scratch:
                return self.with_scratch(stmt)
            if op.composite is not None:
                return self.expand_composite(stmt)
        if isinstance(stmt, (ForStmt, WhileStmt)):
            return self.loop(stmt, env, cache)
        if isinstance(stmt, YieldStmt):
            return [replace(stmt, values=tuple(self.carried(v, env) for v in stmt.values))]
        if isinstance(stmt, ReturnStmt):
            return self.exit_stores(stmt, env)
        self.check_no_tile_values(stmt, env)
        if isinstance(stmt, IfStmt):
            return self.branch(stmt, env, cache)
        return [stmt]

    # ---- values carried by loops and branches -----------------------------------------------
    def carried(self, value: Expr, env: dict) -> Expr:
        """What a yield passes on: the tile of a converted tensor value, else the value."""
        mapped = env.get(value) if isinstance(value, Var) else None
        return mapped if isinstance(mapped, Var) else value

    def loop(self, stmt: ForStmt | WhileStmt, env: dict, cache: dict) -> list[Stmt]:
        """A loop whose carried tensor values live on chip carries their tiles instead: the
        iter arg becomes a tile (its init the tile, or a load of the DDR init when only the
        body makes it a tile) and so does the loop's result."""
        scalars = (stmt.start, stmt.stop, stmt.step) if isinstance(stmt, ForStmt) else (stmt.cond,)
        for value in scalars:
            self.check_no_tile_values(EvalStmt(value, loc=stmt.loc), env)
        tiles = {i for i, ia in enumerate(stmt.iter_args) if self.is_tile(ia.init, env)}
        accumulators = {i for i, ia in enumerate(stmt.iter_args)
                        if ia.init in self.created and _accumulates_into(stmt.body, ia)}
        tiles |= accumulators
        while True:
            out: list[Stmt] = []
            body_env = dict(env)
            iter_args = []
            for i, ia in enumerate(stmt.iter_args):
                if i in accumulators:
                    init = self.empty_accumulator(ia.init, out, stmt)
                    new = IterArg(ia.name, init.type, ia.loc, init=init)
                    body_env[ia] = new
                    iter_args.append(new)
                elif i in tiles:
                    init = self.carried(ia.init, env)
                    if not self.is_tile(ia.init, env):
                        init = self.operand(ia.init, Mem.Vec, out, env, cache, stmt)
                    new = IterArg(ia.name, init.type, ia.loc, init=init)
                    body_env[ia] = new
                    iter_args.append(new)
                else:
                    iter_args.append(ia)
            body = self.seq(stmt.body, body_env)
            yielded = last_yield(body)
            grown = {i for i, v in enumerate(yielded.values if yielded else ())
                     if isinstance(getattr(v, "type", None), TileType)
                     and isinstance(stmt.iter_args[i].type, TensorType)} - tiles
            if not grown:
                break
            tiles |= grown
        self.changed = self.changed or bool(tiles)
        return out + [replace(stmt, iter_args=tuple(iter_args), body=body,
                              return_vars=self.results(stmt.return_vars, iter_args, tiles, env))]

    def branch(self, stmt: IfStmt, env: dict, cache: dict) -> list[Stmt]:
        """An if whose arms yield converted tensor values yields their tiles."""
        then_body = self.seq(stmt.then_body, env)
        else_body = self.seq(stmt.else_body, env) if stmt.else_body is not None else None
        arms = [y for y in (last_yield(then_body), last_yield(else_body)) if y is not None]
        tiles = {i for y in arms for i, v in enumerate(y.values)
                 if isinstance(getattr(v, "type", None), TileType)
                 and isinstance(stmt.return_vars[i].type, TensorType)}
        if tiles and any(not isinstance(getattr(y.values[i], "type", None), TileType)
                         for y in arms for i in tiles):
            raise self.fail("one arm of this if yields a value computed on chip and the other a "
                            "DDR tensor", stmt, hint="compute the value in tensor ops in both "
                                                      "arms (or in neither)")
        self.changed = self.changed or bool(tiles)
        carried = [arms[0].values[i] if i in tiles else None for i in range(len(stmt.return_vars))]
        return [replace(stmt, then_body=then_body, else_body=else_body,
                        return_vars=self.results(stmt.return_vars, carried, tiles, env))]

    @staticmethod
    def results(return_vars, sources, tiles: set, env: dict) -> tuple:
        """Tile-typed results for the carried slots (``env`` maps the tensor result to them)."""
        out = []
        for i, rv in enumerate(return_vars):
            if i in tiles:
                new = Var(rv.name, sources[i].type, rv.loc)
                env[rv] = new
                out.append(new)
            else:
                out.append(rv)
        return tuple(out)

    def exit_stores(self, stmt: ReturnStmt, env: dict) -> list[Stmt]:
        """A returned value computed on chip is stored into a new Out parameter
        ``ret<i>_out`` (the caller allocates it), and the store's result is returned."""
        out: list[Stmt] = []
        values = list(stmt.values)
        taken = {p.var.name for p in self.function.params}
        for i, value in enumerate(values):
            if not self.is_tile(value, env):
                continue
            name = f"ret{i}_out"
            while name in taken:
                name += "_"
            param = Var(name, value.type, stmt.loc)
            stored = Var(f"ret{i}_store", value.type, stmt.loc)
            zeros = [ConstInt(0) for _ in value.type.shape]
            out.append(AssignStmt(stored, make_call("tile.store", (env[value], zeros, param),
                                                    loc=stmt.loc), loc=stmt.loc))
            self.outputs += (param,)
            values[i] = stored
        if not out:
            self.check_no_tile_values(stmt, env)
            return [stmt]
        self.changed = True
        return out + [replace(stmt, values=tuple(values))]

    @staticmethod
    def is_tile(value: Expr, env: dict) -> bool:
        return isinstance(value, Var) and isinstance(env.get(value), Var)

    def check_no_tile_values(self, stmt: Stmt, env: dict) -> None:
        """A converted value lives in a tile now; only tensor ops (rewritten here) may read it."""
        for var in _reads(stmt):
            if isinstance(env.get(var), Var):
                raise self.fail(
                    f"the tensor value '{var.name}' is computed on chip and cannot be used by "
                    f"this statement directly", stmt,
                    hint=f"write it to an output tensor first (out[:] = {var.name}) or keep it "
                         "in tensor ops")

    def through_views(self, stmt: Stmt, env: dict) -> list[Stmt] | None:
        """``pl.load``/``pl.store`` on a slice view address the sliced tensor itself.

        The window's offsets are added to the op's own, so the write lands in the base
        tensor's bytes (and the base is what the caller sees written). A store's result
        names the updated window again: ``v = pl.store(t, o, v)`` becomes a store into the
        base followed by ``v = tensor.slice(<stored base>, ...)``.
        """
        call = stmt.value if isinstance(stmt, AssignStmt) else (
            stmt.expr if isinstance(stmt, EvalStmt) else None)
        slot = _TENSOR_SLOT.get(getattr(call, "op", None))
        if slot is None or call.is_function:
            return None
        view = env.get(call.args[slot]) if isinstance(call.args[slot], Var) else None
        if not isinstance(view, _View):
            return None
        self.changed = True
        offsets = call.args[_OFFSETS_SLOT[call.op]]
        args = list(call.args)
        args[slot] = view.base
        args[_OFFSETS_SLOT[call.op]] = ListExpr(tuple(
            _add(a, b) for a, b in zip(view.offsets, offsets.items)))
        if call.op == "tile.load":
            return [replace(stmt, value=replace(call, args=tuple(args)))]
        store = replace(call, args=tuple(args), type=view.base.type)
        if isinstance(stmt, EvalStmt):
            return [replace(stmt, expr=store)]
        stored = Var(f"{view.base.name}__store", view.base.type, loc=stmt.var.loc)
        valid = (list(view.valid),) if view.valid is not None else ()
        window = make_call("tensor.slice", (stored, list(view.shape), list(view.offsets), *valid),
                           loc=stmt.loc)
        env[stmt.var] = view
        return [AssignStmt(stored, store, loc=stmt.loc),
                replace(stmt, value=replace(window, type=stmt.var.type))]

    # ---- operands ----------------------------------------------------------------------------
    def view_of(self, x: Expr, env: dict) -> _View | None:
        value = env.get(x) if isinstance(x, Var) else None
        if isinstance(value, _View):
            return value
        if isinstance(x, Var) and value is None and isinstance(x.type, TensorType):
            dims = static_shape(tuple(x.type.shape))
            if dims is None:
                return None
            return _View(x, tuple(ConstInt(0) for _ in dims), dims)
        return None

    def slice_view(self, stmt: AssignStmt, env: dict) -> _View | None:
        """The view a ``tensor.slice`` with a static window makes: of a static tensor, of
        another view, or of a tensor with a dynamic shape (PyPTO's way of working on one:
        static tiles over it, the tail's extent in ``valid_shape=``). Its valid extents are
        those of the slice's type: the requested ``valid_shape`` narrowed to what a partly
        valid source holds under the window (a slice of a tail view is a tail); a window
        past the bound tensor fails in the simulator, naming it."""
        call: Call = stmt.value
        src = call.args[0]
        shape = static_shape(tuple(stmt.var.type.shape))
        view = self.view_of(src, env)
        if view is None and isinstance(src, Var) and src not in env \
                and isinstance(src.type, TensorType):
            view = _View(src, tuple(ConstInt(0) for _ in src.type.shape), tuple(src.type.shape))
        if view is None or shape is None:
            return None
        valid = stmt.var.type.view.valid_shape if stmt.var.type.view is not None else None
        offs = tuple(_add(a, b) for a, b in zip(view.offsets, call.args[2].items))
        return _View(view.base, offs, shape, tuple(valid) if valid is not None else None)

    def operand(self, x: Expr, space: MemorySpace, out: list[Stmt], env: dict, cache: dict,
                stmt: Stmt) -> Expr:
        """The tile holding tensor ``x`` in ``space``: a load (cached per body) or a move."""
        value = env.get(x) if isinstance(x, Var) else None
        if isinstance(value, Var):
            have = value.type.memory_space
            if have is None or have is space or is_accumulator_cast(value.type):
                return value  # a cast accumulator is placed by AutoTileMatmulL0's cast fold
            moved = Var(f"{value.name}_{space.value.lower()}", TileType(
                value.type.shape, value.type.dtype, space))
            out.append(AssignStmt(moved, make_call("tile.move", (value,), {"target_memory": space}),
                                  loc=stmt.loc))
            return moved
        view = self.view_of(x, env)
        if view is None:
            if isinstance(x, Var) and isinstance(x.type, TensorType):
                raise self.fail(
                    f"tensor '{x.name}' has a dynamic shape {_shape_text(x.type.shape)} and a "
                    "tile needs a static one (ptoc computes tensor ops over a dynamic row "
                    "count in blocks only when every op is row-local, or a matmul whose "
                    "whole rhs fits Mat, and each result is written to an output, "
                    "out[:] = ...)", stmt,
                    hint="work on static windows: pl.slice(x, [T, C], [i, 0], valid_shape="
                         "[pl.min(M - i, T), C]) in a loop over range(0, M, T), or "
                         "pl.load(...) with a static tile shape")
            return x  # scalars pass through
        valid = (list(view.valid),) if view.valid is not None else ()
        key = (view.base, tuple(_key(o) for o in (*view.offsets, *(view.valid or ()))),
               view.shape, space)
        if key in cache:
            return cache[key]
        name = f"{x.name if isinstance(x, Var) else view.base.name}_{space.value.lower()}"
        call = make_call("tile.load", (view.base, list(view.offsets), list(view.shape), *valid),
                         {"target_memory": space}, loc=stmt.loc)
        var = Var(name, call.type)
        out.append(AssignStmt(var, call, loc=stmt.loc))
        cache[key] = var
        return var

    # ---- the tensor ops ------------------------------------------------------------------------
    def tensor_op(self, stmt: AssignStmt, env: dict, cache: dict) -> list[Stmt] | None:
        call: Call = stmt.value
        short = call.op.split(".", 1)[1]
        out: list[Stmt] = []
        result: Expr
        if short == "slice":
            src = call.args[0]
            view = self.slice_view(stmt, env)
            if view is not None:
                env[stmt.var] = view
                return [stmt]  # kept for non-tensor users; dropped later when dead
            tile = self.operand(src, Mem.Vec, out, env, cache, stmt)
            result = self.let(out, stmt, make_call("tile.slice", (tile, call.args[1], call.args[2])))
        elif short in ("matmul", "matmul_acc"):
            a, b = (call.args[0], call.args[1]) if short == "matmul" else call.args[1:3]
            lhs = self.operand(a, Mem.Mat, out, env, cache, stmt)
            rhs = self.operand(b, Mem.Mat, out, env, cache, stmt)
            # a_trans / b_trans: the operand stays as stored in L1 and is read through its
            # transposed view (the L1 bytes of an NZ [K, M] tile are the ZN [M, K] tile).
            if call.kwarg("a_trans"):
                lhs = self.let(out, stmt, make_call("tile.transpose_view", (lhs,), loc=call.loc),
                               suffix="_lhs_t")
            if call.kwarg("b_trans"):
                rhs = self.let(out, stmt, make_call("tile.transpose_view", (rhs,), loc=call.loc),
                               suffix="_rhs_t")
            if short == "matmul":
                mm = make_call("tile.matmul", (lhs, rhs), loc=call.loc)
            else:
                acc = env.get(call.args[0])
                if call.args[0] in self.created:
                    acc = self.empty_accumulator(call.args[0], out, stmt)
                if not (isinstance(acc, Var) and acc.type.memory_space is Mem.Acc):
                    raise self.fail(
                        f"tensor.matmul_acc '{stmt.var.name}' accumulates into "
                        f"'{getattr(call.args[0], 'name', call.args[0])}', which is not the result "
                        "of a matmul in this kernel", stmt,
                        hint="start the accumulation with c = pl.matmul(a, b), then "
                             "c = pl.matmul_acc(c, a2, b2)")
                kwargs = {"init_cond": call.kwarg("init_cond")} if call.kwarg("init_cond") is not None else {}
                mm = make_call("tile.matmul_acc", (acc, lhs, rhs), kwargs, loc=call.loc)
            result = self.let(out, stmt, mm)
            want = stmt.var.type.dtype
            if short == "matmul" and want is not mm.type.dtype:
                # The accumulator is FP32/INT32; a narrower out_dtype is a rint conversion,
                # which FIXPIPE performs on the drain (typed as any cast of an accumulator).
                cast = make_call("tile.cast", (result, want), {"mode": "rint"}, loc=call.loc)
                result = self.let(out, stmt, cast, suffix="_cast")
        elif short == "cast":
            src = env.get(call.args[0])
            if not isinstance(src, Var):
                src = self.operand(call.args[0], Mem.Vec, out, env, cache, stmt)
            cast = make_call("tile.cast", (src, call.args[1]), dict(call.kwargs), loc=call.loc)
            result = self.let(out, stmt, cast)
        elif get_op(call.op).tile_form is not None:
            result = self.let(out, stmt, self.tile_form_call(call, out, env, cache, stmt))
            last = out.pop()
            tile_op = get_op(last.value.op)
            out += self.expand_composite(last) if tile_op.composite is not None else \
                self.with_scratch(last)
        elif short == "assemble":
            target, source, offset = call.args[0], call.args[1], call.args[2]
            if isinstance(env.get(target), Var):
                raise self.fail(f"tensor.assemble '{stmt.var.name}' writes into a value computed "
                                "on chip", stmt, hint="assemble into an output tensor parameter")
            src = env.get(source) if isinstance(env.get(source), Var) else \
                self.operand(source, Mem.Vec, out, env, cache, stmt)
            kwargs = {"atomic": call.kwarg("atomic")} if call.kwarg("atomic") is not None else {}
            store = make_call("tile.store", (src, offset, target), kwargs, loc=call.loc)
            out.append(AssignStmt(stmt.var, store, loc=stmt.loc))
            return out
        else:
            if short == "create":
                self.created.add(stmt.var)  # stays a DDR tensor unless it seeds an accumulator
            return None  # tensor.create and friends stay
        env[stmt.var] = result
        return out

    def empty_accumulator(self, created: Var, out: list[Stmt], stmt: Stmt) -> Var:
        """The Acc tile a ``pl.create_tensor`` result stands for when a ``matmul_acc`` (or a
        loop carrying it into one) accumulates into it, as in PyPTO (``tile.create``, whose
        space InferTileMemorySpace takes from the accumulating loop). Its contents are
        undefined: an accumulation that reads them before a matmul wrote them is reported
        by the simulator, never silently computed."""
        ty = created.type
        var = Var(created.name, TileType(ty.shape, ty.dtype, Mem.Acc), loc=created.loc)
        out.append(AssignStmt(var, make_call(
            "tile.create", (list(ty.shape),), {"dtype": ty.dtype, "target_memory": Mem.Acc},
            loc=stmt.loc), loc=stmt.loc))
        self.changed = True
        return var

    def with_scratch(self, stmt: AssignStmt) -> list[Stmt]:
        """A tile op whose scratch PyPTO allocates in the compiler (``tile.transpose``): a
        fresh Vec tile of the first operand's shape fills each scratch left out."""
        call: Call = stmt.value
        op = get_op(call.op)
        bound = op.bind(tuple(call.args), dict(call.kwargs), call.loc)
        missing = [name for name in op.compiler_scratch if bound[name] is None]
        if not missing:
            return [stmt]
        first = call.args[0]
        out: list[Stmt] = []
        for name in missing:
            bound[name] = self.scratch_tile(first, f"{stmt.var.name}_{name}", out, stmt)
        args, kwargs = op.split(bound)
        self.changed = True
        out.append(replace(stmt, value=make_call(call.op, args, dict(kwargs), loc=call.loc,
                                                 result_type=call.type)))
        return out

    def expand_composite(self, stmt: AssignStmt) -> list[Stmt]:
        """An op without an instruction (``tile.sin``) becomes the ops its entry lists."""
        out: list[Stmt] = []

        def let(hint: str, call: Call) -> Var:
            var = Var(f"{stmt.var.name}_{hint}", call.type, loc=stmt.loc)
            out.append(AssignStmt(var, call, loc=stmt.loc))
            return var

        get_op(stmt.value.op).composite(stmt.value, let)
        out[-1] = AssignStmt(stmt.var, out[-1].value, loc=stmt.loc)  # the last op is the result
        self.changed = True
        return out

    @staticmethod
    def scratch_tile(like: Expr, name: str, out: list[Stmt], stmt: Stmt) -> Var:
        """A fresh Vec tile with ``like``'s shape and dtype (scratch for one op)."""
        ty = like.type
        var = Var(name, TileType(ty.shape, ty.dtype, Mem.Vec), loc=stmt.loc)
        out.append(AssignStmt(var, make_call(
            "tile.create", (list(ty.shape),), {"dtype": ty.dtype, "target_memory": Mem.Vec},
            loc=stmt.loc), loc=stmt.loc))
        return var

    def tile_form_call(self, call: Call, out: list[Stmt], env: dict, cache: dict,
                       stmt: AssignStmt) -> Call:
        """The tile op of a tensor op (``OpDef.tile_form``): tensor operands loaded into Vec,
        scalars as they are, then one fresh Vec scratch tile per scratch operand."""
        form = get_op(call.op).tile_form
        args = [self.operand(a, Mem.Vec, out, env, cache, stmt) for a in call.args]
        for name in form.scratch:
            first = next(a for a in args if isinstance(getattr(a, "type", None), TileType))
            args.append(self.scratch_tile(first, f"{stmt.var.name}_{name}", out, stmt))
        tile_op = get_op(form.op)
        kwargs = {k: v for k, v in call.kwargs if tile_op.param(k) is not None}
        return make_call(form.op, tuple(args), kwargs, loc=call.loc)

    @staticmethod
    def let(out: list[Stmt], stmt: AssignStmt, call: Call, suffix: str = "") -> Var:
        var = Var(f"{stmt.var.name}{suffix}" if suffix else stmt.var.name, call.type, loc=stmt.var.loc)
        out.append(AssignStmt(var, call, loc=stmt.loc))
        return var


def _shape_text(shape) -> str:
    return format_node(ListExpr(tuple(to_expr(d, "dim") for d in shape)))


def _key(e):
    if isinstance(e, int):
        return ("c", e)
    return ("c", e.value) if isinstance(e, ConstInt) else ("e", id(e))


def _accumulates_into(body: SeqStmts, carried: IterArg) -> bool:
    """Whether a ``tensor.matmul_acc`` in ``body`` (at any depth) accumulates into ``carried``."""
    found = False

    class _Find(IRVisitor):
        def visit_call(self, call: Call) -> None:
            nonlocal found
            found = found or (call.op == "tensor.matmul_acc" and call.args[0] is carried)
            super().visit_call(call)

    _Find().visit(body)
    return found


def _reads(stmt: Stmt) -> list[Var]:
    """Vars read directly by one statement (not inside nested bodies)."""
    found: list[Var] = []

    def expr(e):
        if isinstance(e, Var):
            found.append(e)
        elif isinstance(e, Call):
            for a in e.args:
                expr(a)
            for _, v in e.kwargs:
                expr(v)
        elif isinstance(e, BinOp):
            expr(e.lhs)
            expr(e.rhs)
        elif isinstance(e, UnaryOp):
            expr(e.operand)
        elif isinstance(e, ListExpr):
            for i in e.items:
                expr(i)

    if isinstance(stmt, AssignStmt):
        expr(stmt.value)
    elif isinstance(stmt, EvalStmt):
        expr(stmt.expr)
    elif isinstance(stmt, (YieldStmt, ReturnStmt)):
        for v in stmt.values:
            expr(v)
    elif isinstance(stmt, ForStmt):
        for e in (stmt.start, stmt.stop, stmt.step, *(ia.init for ia in stmt.iter_args)):
            expr(e)
    elif isinstance(stmt, WhileStmt):
        for e in (stmt.cond, *(ia.init for ia in stmt.iter_args)):
            expr(e)
    elif isinstance(stmt, IfStmt):
        expr(stmt.cond)
    return found


def _drop_dead_views(body: SeqStmts) -> SeqStmts:
    """Remove ``tensor.slice`` views and ``tensor.create`` tensors no statement reads any more
    (an accumulator's tile replaced the create), until none is left: a view only a dropped
    view read (a slice of a slice) goes too."""
    used: set[Var] = set()
    dropped = False

    def collect(s: Stmt) -> None:
        used.update(_reads(s))
        if isinstance(s, SeqStmts):
            for x in s.stmts:
                collect(x)
        elif isinstance(s, (ForStmt, WhileStmt)):
            collect(s.body)
        elif isinstance(s, IfStmt):
            collect(s.then_body)
            if s.else_body is not None:
                collect(s.else_body)

    collect(body)

    def prune(seq: SeqStmts) -> SeqStmts:
        nonlocal dropped
        out = []
        for s in seq.stmts:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) \
                    and s.value.op in ("tensor.slice", "tensor.create") and s.var not in used:
                dropped = True
                continue
            if isinstance(s, (ForStmt, WhileStmt)):
                s = replace(s, body=prune(s.body))
            elif isinstance(s, IfStmt):
                s = replace(s, then_body=prune(s.then_body),
                            else_body=prune(s.else_body) if s.else_body is not None else None)
            out.append(s)
        return replace(seq, stmts=tuple(out))

    body = prune(body)
    return _drop_dead_views(body) if dropped else body
