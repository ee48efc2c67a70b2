"""InferTileMemorySpace: every tile gets a memory space; cube operands reach L0 (§0, pypto-dsl §1.4).

A kernel author may leave spaces out. A load always has one (``pl.load`` without
``target_memory`` is a Vec load, as in PyPTO: the op fills the default in), so a load
feeding the cube is written with ``target_memory=pl.Mem.Mat``. This pass fills the rest in,
in program order:

- ``tile.create`` makes an Acc tile when it seeds a ``matmul_acc`` accumulator (directly
  or as a loop carry), otherwise a Vec tile;
- a move/extract without a target stays in its source's space; every other op's result
  follows from its operands (matmul results are Acc), and anything still open is Vec;
- loop carries take their init's space, loop results their carry's, if-results the
  space of what the then-branch yields.

Then every operand is brought into a space its op reads from (PyPTO's input constraints):
a matmul-family operand still in Mat gets a ``tile.move`` into Left (lhs), Right (rhs) or
Bias (bias) just before the call, and a stored tile that is neither Vec nor Acc (a Mat
load) gets a ``tile.move`` into Vec before the store -- the load itself stays in Mat (in an
InCore kernel ExpandMixedKernel makes that move a cube -> vector pipe, on targets whose
pipe can read L1: a2a3). In the
default pipeline AutoTileMatmulL0 runs first and already extracts L0 panels for every
matmul it tiles, so what is left in Mat here is a matmul that fits L0 as written, or one
AutoTile declined with a PH-AT hint; moving the latter too means an operand that cannot
fit L0 fails allocation with the byte counts, instead of reaching codegen still in Mat.
Every move, extract and inserted move is checked against the target's data paths
(``Target.can_move``): e.g. Vec -> Left does not exist on a2a3, and the error says which
destinations do. A move between cube memory and Vec in an InCore kernel that the target's
cross-core pipes can carry (``ClusterModel.can_push``) is a cube <-> vector boundary instead:
ExpandMixedKernel turns it into a cross-core pipe.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.backend.cross_core import DIR_C2V, DIR_V2C, cluster_model
from ptoc.dtypes import FunctionType, MemorySpace
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, Expr, ForStmt, Function, IfStmt, IterArg, ReturnStmt, SeqStmts,
    WhileStmt, Stmt, Var, YieldStmt,
)
from ptoc.ir.types import TileType
from ptoc.ir.visitor import IRMutator, substitute
from ptoc.ops import get_op, make_call
from ptoc.ops.registry import has_op
from ptoc.passes.base import function_pass
from ptoc.passes.manager import register_default_pass
from ptoc.passes.memref_rewrite import last_yield, walk_stmts
from ptoc.passes.mixed.affinity import crosses_cores

Mem = MemorySpace

#: the spaces each operand position of an op may be read from; an operand elsewhere is moved
#: into the first one (PyPTO's op input constraints)
OPERAND_SPACES: dict[str, dict[int, tuple[MemorySpace, ...]]] = {
    "tile.matmul": {0: (Mem.Left,), 1: (Mem.Right,)},
    "tile.matmul_acc": {1: (Mem.Left,), 2: (Mem.Right,)},
    "tile.matmul_bias": {0: (Mem.Left,), 1: (Mem.Right,), 2: (Mem.Bias,)},
    "tile.gemv": {0: (Mem.Left,), 1: (Mem.Right,)},
    "tile.gemv_acc": {1: (Mem.Left,), 2: (Mem.Right,)},
    "tile.gemv_bias": {0: (Mem.Left,), 1: (Mem.Right,), 2: (Mem.Bias,)},
    "tile.store": {0: (Mem.Vec, Mem.Acc)},
}
COPY_OPS = ("tile.move", "tile.extract")


@function_pass(name="InferTileMemorySpace", produced={"MemoryInferred"}, func_types=None,
               handles_while_loops=True)
def infer_tile_memory_space(fn: Function, ctx) -> Function:
    """Fill unspecified memory spaces and move Mat operands of the cube into L0.

    Every function is visited; one without tiles (orchestration) comes back unchanged.
    """
    return _SpaceInference(fn, ctx.get_backend()).run()


class _SpaceInference:
    def __init__(self, fn: Function, target):
        self.fn = fn
        self.target = target
        self.var_map: dict[Var, Expr] = {}
        self.changed = False
        self.uses: dict[Var, list[tuple[Call, int]]] = {}
        self.carried_into: dict[Var, list[IterArg]] = {}
        for s in walk_stmts(fn.body):
            if isinstance(s, AssignStmt) and isinstance(s.value, Call):
                for i, a in enumerate(s.value.args):
                    if isinstance(a, Var):
                        self.uses.setdefault(a, []).append((s.value, i))
            elif isinstance(s, (ForStmt, WhileStmt)):
                for ia in s.iter_args:
                    if isinstance(ia.init, Var):
                        self.carried_into.setdefault(ia.init, []).append(ia)
        # a loop carry's uses are its init value's uses (an Acc seed)
        for init, carries in self.carried_into.items():
            for ia in carries:
                self.uses.setdefault(init, []).extend(self.uses.get(ia, ()))

    def run(self) -> Function:
        body = self.block(self.fn.body)
        if not self.changed:
            return self.fn
        return replace(self.fn, body=body)

    # ---- statements ----------------------------------------------------------------
    def block(self, body: SeqStmts | None) -> SeqStmts | None:
        if body is None:
            return None
        out: list[Stmt] = []
        for s in body.stmts:
            out.extend(self.stmt(s))
        return replace(body, stmts=tuple(out))

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, SeqStmts):
            return [self.block(s)]
        if isinstance(s, AssignStmt):
            return self.assign(s)
        if isinstance(s, EvalStmt):
            before: list[Stmt] = []
            expr = self.sub(s.expr)
            if isinstance(expr, Call) and not expr.is_function:
                expr = self.move_operands(expr, before, s)
            return before + [replace(s, expr=expr)]
        if isinstance(s, (YieldStmt, ReturnStmt)):
            return [replace(s, values=tuple(self.sub(v) for v in s.values))]
        if isinstance(s, (ForStmt, WhileStmt)):
            iter_args = []
            for ia in s.iter_args:
                init = self.sub(ia.init) if ia.init is not None else None
                iter_args.append(self.retype(ia, _space_of(init), init=init))
            body = self.block(s.body)
            rvs = tuple(self.retype(rv, _space_of(ia)) for ia, rv in zip(iter_args, s.return_vars))
            if isinstance(s, WhileStmt):   # the condition reads the (retyped) iter args
                return [replace(s, cond=self.sub(s.cond), iter_args=tuple(iter_args), body=body,
                                return_vars=rvs)]
            return [replace(s, start=self.sub(s.start), stop=self.sub(s.stop), step=self.sub(s.step),
                            iter_args=tuple(iter_args), body=body, return_vars=rvs)]
        if isinstance(s, IfStmt):
            then_b, else_b = self.block(s.then_body), self.block(s.else_body)
            y = last_yield(then_b) or last_yield(else_b)
            rvs = tuple(self.retype(rv, _space_of(y.values[i]) if y and i < len(y.values) else None)
                        for i, rv in enumerate(s.return_vars))
            return [replace(s, cond=self.sub(s.cond), then_body=then_b, else_body=else_b,
                            return_vars=rvs)]
        return [s]

    def assign(self, s: AssignStmt) -> list[Stmt]:
        value = self.sub(s.value)
        if not (isinstance(value, Call) and not value.is_function and has_op(value.op)):
            space = _space_of(value) if isinstance(s.var.type, TileType) else None
            return [replace(s, value=value, var=self.retype(s.var, space))]
        before: list[Stmt] = []
        value = self.move_operands(value, before, s)
        if isinstance(s.var.type, TileType) and s.var.type.memory_space is None:
            value = self.decide(s.var, value)
        self.check_move(value, s)
        ty = value.type if isinstance(value.type, TileType) else None
        var = self.retype(s.var, ty.memory_space if ty is not None else None)
        if isinstance(var.type, TileType) and value.type is not var.type:
            value = replace(value, type=var.type)
        return before + [replace(s, value=value, var=var)]

    # ---- deciding spaces -----------------------------------------------------------
    def decide(self, var: Var, call: Call) -> Call:
        """The call re-made so that its result has a space (see the module docstring)."""
        op = call.op
        if op == "tile.create":
            return self.remake(call, target_memory=Mem.Acc if self.seeds_acc(var) else Mem.Vec)
        if op in COPY_OPS and call.kwarg("target_memory") is None:
            src = _space_of(call.args[0]) or Mem.Vec
            return self.remake(call, target_memory=src)
        inferred = get_op(op).infer_type(call.args, call.kwargs, call.loc)
        if isinstance(inferred, TileType):
            space = inferred.memory_space or Mem.Vec
            base = call.type if isinstance(call.type, TileType) else inferred
            return replace(call, type=replace(base, memory_space=space))
        return call

    def remake(self, call: Call, **kwargs) -> Call:
        merged = dict(call.kwargs)
        merged.update(kwargs)
        new = make_call(call.op, call.args, merged, loc=call.loc, attrs=call.attrs)
        if isinstance(call.type, TileType) and isinstance(new.type, TileType):
            new = replace(new, type=replace(call.type, memory_space=new.type.memory_space))
        return new

    def seeds_acc(self, var: Var) -> bool:
        return any(call.op in ("tile.matmul_acc", "tile.gemv_acc") and i == 0
                   for call, i in self.uses.get(var, ()))

    def retype(self, var: Var, space: MemorySpace | None, **fields) -> Var:
        ty = var.type
        if isinstance(ty, TileType) and ty.memory_space is None:
            ty = replace(ty, memory_space=space or Mem.Vec)
        if self.var_map:
            ty = IRMutator(self.var_map).mutate_type(ty)  # dynamic dims naming retyped vars
        if ty is var.type and not any(fields[k] is not getattr(var, k) for k in fields):
            return var
        new = replace(var, type=ty, **fields)
        self.var_map[var] = new
        self.changed = True
        return new

    def sub(self, e: Expr | None) -> Expr | None:
        """``e`` with uses of retyped variables replaced."""
        if e is None or not self.var_map:
            return e
        return substitute(e, self.var_map)

    # ---- cube operands and legal moves ---------------------------------------------
    def move_operands(self, call: Call, before: list[Stmt], s: Stmt) -> Call:
        """Move every operand not in a space its op reads from into the first such space."""
        wanted = OPERAND_SPACES.get(call.op)
        if not wanted:
            return call
        args = list(call.args)
        for i, spaces in wanted.items():
            if i >= len(args) or not isinstance(args[i], Var):
                continue
            src, space = _space_of(args[i]), spaces[0]
            if src is None or src in spaces:
                continue
            # a cube tile stored to GM crosses to the vector core (PyPTO); a Vec matmul
            # operand must be loaded into Mat instead (the error says how)
            if not (space is Mem.Vec and self._crosses_to_other_core(src, space)):
                self._require_path(src, space, args[i].name, call.op, s)
            move = make_call("tile.move", (args[i],), {"target_memory": space}, loc=call.loc)
            tmp = Var(f"{args[i].name}_{space.lower}", move.type, s.loc)
            before.append(AssignStmt(tmp, move, s.loc))
            args[i] = tmp
            self.changed = True
        if tuple(args) == call.args:
            return call
        return replace(call, args=tuple(args))

    def check_move(self, call: Call, s: AssignStmt) -> None:
        if call.op not in COPY_OPS or not call.args:
            return
        src, dst = _space_of(call.args[0]), call.kwarg("target_memory")
        if src is None or dst is None or src is dst:
            return
        if call.op == "tile.move" and self._crosses_to_other_core(src, dst):
            return
        name = call.args[0].name if isinstance(call.args[0], Var) else "operand"
        self._require_path(src, dst, name, call.op, s)

    def _crosses_to_other_core(self, src: MemorySpace, dst: MemorySpace) -> bool:
        """A move between the cube's and the vector core's memories in an InCore function
        that the target's pipes can carry: ExpandMixedKernel makes it a cross-core pipe."""
        if not crosses_cores(src, dst) or self.fn.func_type is not FunctionType.InCore:
            return False
        direction = DIR_C2V if dst is Mem.Vec else DIR_V2C
        return cluster_model(self.target).can_push(src, direction)

    def _require_path(self, src: MemorySpace, dst: MemorySpace, name: str, op: str,
                      s: Stmt) -> None:
        if self.target.can_move(src, dst):
            return
        legal = sorted(d.value for (a, d) in self.target.data_paths if a is src)
        where = f" (for '{s.var.name}')" if isinstance(s, AssignStmt) else ""
        if (src, dst) != (Mem.Mat, Mem.Vec):
            fix = "load the data into pl.Mem.Mat first and move or extract it from there"
        elif self.fn.func_type is FunctionType.InCore:   # the cube -> vector pipe cannot
            fix = (f"load the data with target_memory=pl.Mem.Vec to store or compute on it "
                   f"(on {self.target.name} a cube -> vector pipe carries Acc tiles only: its "
                   "ring is in the vector core's UB)")
        else:
            fix = ("load the data with target_memory=pl.Mem.Vec to store or compute on it, or "
                   "write the kernel as an InCore function: a Mat -> Vec move there crosses "
                   "from the cube to the vector core (a mixed kernel)")
        raise PassError(
            f"pl.{op}: tile '{name}' is in pl.Mem.{src.value}, but target {self.target.name} has "
            f"no data path {src.value} -> {dst.value}{where}", s.loc,
            hint=(f"from {src.value} the target can move to {', '.join(legal)}; "
                  if legal else f"{src.value} is not a source of any move; ") + fix)


def _space_of(e) -> MemorySpace | None:
    ty = getattr(e, "type", None)
    return ty.memory_space if isinstance(ty, TileType) else None


register_default_pass(infer_tile_memory_space)

__all__ = ["infer_tile_memory_space"]
