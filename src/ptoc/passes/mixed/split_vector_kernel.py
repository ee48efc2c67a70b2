"""SplitVectorKernel (PyPTO pass 23): the dispatch attributes of the vector half of a mixed
kernel.

A ``split_aiv`` AIV function (LowerAutoVectorSplit already halved its vector work and
ExpandMixedKernel folded the boundaries into split-stamped pipe ops) is stamped
``dual_aiv_dispatch``: both AIV lanes run it, each on its part. Its body is not touched
(re-halving would halve twice). A ``split_aiv`` function without a split mode is an internal
error (the split mode and ``split_aiv`` travel together).

A mixed kernel without a split (``pl.split`` absent or NONE) keeps one AIV body that does all
the vector work (ExpandMixedKernel tags it ``dual_aiv_dispatch``; a hand-written AIV function
with pipe ops is treated alike); both lanes are dispatched, and lane 1 replays only the
cross-core handshakes
(its pops and frees, so the cube's pushes stay balanced) while lane 0 does the work: the body
becomes ``if subblock_idx == 0: <body> else: <handshakes>``, with the pipe setup before the
branch on both lanes.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import DataType, FunctionType, SplitMode
from ptoc.errors import PassError
from ptoc.ir.nodes import (
    AssignStmt, BinOp, Call, ConstInt, EvalStmt, ForStmt, Function, IfStmt, Program, ReturnStmt,
    SeqStmts, Stmt, Var, WhileStmt, YieldStmt,
)
from ptoc.ir.types import ScalarType
from ptoc.ir.visitor import clone_with_fresh_vars
from ptoc.ops import make_call
from ptoc.passes.base import program_pass
from ptoc.passes.manager import register_default_pass
from ptoc.passes.mixed.prune import Repair, dce, tensor_parents

HANDSHAKES = frozenset({"tile.tpop_from_aic", "system.tfree_to_aic", "tile.tpush_to_aic"})
SETUP = frozenset({"system.reserve_buffer", "system.import_peer_buffer",
                   "system.aiv_initialize_pipe", "tile.get_subblock_idx"})


@program_pass(name="SplitVectorKernel", required=("SSAForm",),
              handles_while_loops=True)
def split_vector_kernel(program: Program, ctx) -> Program:
    """Stamp dual dispatch on split AIV functions; give unsplit mixed AIV functions the
    lane-1 handshake replay (module docstring)."""
    functions, changed = [], False
    for fn in program.functions:
        new = _process(fn)
        changed |= new is not fn
        functions.append(new)
    return replace(program, functions=tuple(functions)) if changed else program


register_default_pass(split_vector_kernel)


def _process(fn: Function) -> Function:
    if fn.func_type not in (FunctionType.AIV, FunctionType.AIC):
        return fn
    mode = fn.attrs.get("split")
    if fn.attrs.get("split_aiv"):
        if not isinstance(mode, SplitMode) or mode is SplitMode.NONE:
            raise PassError(f"SplitVectorKernel: '{fn.name}' is split_aiv without a split mode",
                            fn.loc, hint="LowerAutoVectorSplit stamps split and split_aiv together")
        if fn.func_type is FunctionType.AIV and not fn.attrs.get("dual_aiv_dispatch"):
            return replace(fn, attrs={**fn.attrs, "dual_aiv_dispatch": True})
        return fn
    if fn.func_type is FunctionType.AIV and (fn.attrs.get("dual_aiv_dispatch")
                                             or _has_pipe(fn.body)) and not _replayed(fn):
        return _replay(fn)
    return fn


def _replayed(fn: Function) -> bool:
    """True when the body already branches on ``subblock_idx == 0`` (this pass ran)."""
    lanes = {s.var for s in fn.body.stmts if isinstance(s, AssignStmt)
             and isinstance(s.value, Call) and s.value.op == "tile.get_subblock_idx"}
    return any(isinstance(s, IfStmt) and isinstance(s.cond, BinOp) and s.cond.op == "=="
               and s.cond.lhs in lanes and isinstance(s.cond.rhs, ConstInt)
               and s.cond.rhs.value == 0 for s in fn.body.stmts)


def _has_pipe(seq: SeqStmts) -> bool:
    return any(isinstance(c, Call) and c.op in HANDSHAKES for c in _calls(seq))


def _calls(seq: SeqStmts):
    for s in seq.stmts:
        if isinstance(s, (AssignStmt, EvalStmt)):
            yield s.value if isinstance(s, AssignStmt) else s.expr
        elif isinstance(s, (ForStmt, WhileStmt)):
            yield from _calls(s.body)
        elif isinstance(s, IfStmt):
            yield from _calls(s.then_body)
            if s.else_body is not None:
                yield from _calls(s.else_body)


def _replay(fn: Function) -> Function:
    stmts = list(fn.body.stmts)
    ret = stmts.pop() if stmts and isinstance(stmts[-1], ReturnStmt) else None
    lead = []
    while stmts and _is_setup(stmts[0]):
        lead.append(stmts.pop(0))
    sb = next((s.var for s in lead if isinstance(s, AssignStmt)
               and s.value.op == "tile.get_subblock_idx"), None)
    if sb is None:
        sb = Var("subblock_idx", ScalarType(DataType.INDEX), fn.loc)
        lead.insert(0, AssignStmt(sb, make_call("tile.get_subblock_idx", loc=fn.loc), fn.loc))
    work = SeqStmts(tuple(stmts), fn.body.loc)
    repair = Repair(fn.name, "vector", fn.params, {})
    repair.defined.update(s.var for s in lead if isinstance(s, AssignStmt))
    replay = clone_with_fresh_vars(dce(repair.seq(_handshakes_only(work)), set()))
    cond = BinOp("==", sb, ConstInt(0))
    branch = IfStmt(cond, work, replay, (), fn.loc)
    if ret is not None:               # lane 0 writes the outputs: return the parameters
        ret = replace(ret, values=tuple(_param_of(fn, v) for v in ret.values))
    body = tuple(lead) + (branch,) + ((ret,) if ret is not None else ())
    return replace(fn, body=SeqStmts(body, fn.body.loc),
                   attrs={**fn.attrs, "dual_aiv_dispatch": True})


def _param_of(fn: Function, value):
    """The output parameter a returned tensor is a version of."""
    params = {p.var for p in fn.params}
    parents = tensor_parents(fn.body)
    v = value
    while isinstance(v, Var) and v not in params and v in parents:
        v = parents[v]
    if v not in params:
        raise PassError(f"SplitVectorKernel: '{fn.name}' returns '{getattr(value, 'name', value)}',"
                        " which is not one of its output parameters", fn.loc,
                        hint="write kernel outputs into pl.Out parameters")
    return v


def _is_setup(s: Stmt) -> bool:
    call = s.value if isinstance(s, AssignStmt) else getattr(s, "expr", None)
    return isinstance(call, Call) and call.op in SETUP


def _handshakes_only(seq: SeqStmts) -> SeqStmts:
    """The control flow, scalar math, pops and frees of ``seq``; vector work and stores
    dropped. A push to the cube cannot be replayed without its data, so an unsplit kernel that
    sends tiles back to the cube is refused."""
    out: list[Stmt] = []
    for s in seq.stmts:
        if isinstance(s, (ForStmt, WhileStmt)):
            out.append(replace(s, body=_handshakes_only(s.body)))
        elif isinstance(s, IfStmt):
            out.append(replace(s, then_body=_handshakes_only(s.then_body),
                               else_body=None if s.else_body is None
                               else _handshakes_only(s.else_body)))
        elif isinstance(s, YieldStmt) or _scalar(s):
            out.append(s)
        else:
            call = s.value if isinstance(s, AssignStmt) else getattr(s, "expr", None)
            if isinstance(call, Call) and call.op == "tile.tpush_to_aic":
                raise PassError(
                    "SplitVectorKernel: an unsplit mixed kernel sends a tile back to the cube; "
                    "the second AIV lane cannot replay that push", s.loc,
                    hint="add optimizations=[pl.split(pl.SplitMode.UP_DOWN)] (or LEFT_RIGHT) "
                         "to the pl.at scope")
            if isinstance(call, Call) and call.op in HANDSHAKES:
                out.append(s)
    return replace(seq, stmts=tuple(out))


def _scalar(s: Stmt) -> bool:
    return isinstance(s, AssignStmt) and isinstance(s.var.type, ScalarType)
