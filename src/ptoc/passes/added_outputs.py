"""Out parameters a pass appends to kernels reach them from the host.

Two passes give kernels parameters the user never wrote: ConvertTensorToTileOps (a kernel
that returns a value computed on chip stores it into a new ``ret<i>_out``) and
InjectGMPipeBuffer (the GM ring of a core group). In both, as in PyPTO, a Spmd or Group
wrapper mirrors the parameters and forwards them to its inner call, and an Orchestration or
Opaque caller allocates one tensor per parameter (``pl.tensor.create``) just before each call.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import Direction, FunctionType
from ptoc.ir.nodes import (
    AssignStmt, Call, EvalStmt, ForStmt, Function, IfStmt, Param, Program, SeqStmts, Var,
    WhileStmt,
)
from ptoc.ir.visitor import IRMutator, IRVisitor
from ptoc.ops import make_call

HOSTS = (FunctionType.Orchestration, FunctionType.Opaque)
WRAPPERS = (FunctionType.Spmd, FunctionType.Group)


def with_wrappers(program: Program, added: dict[str, tuple[Var, ...]]
                  ) -> dict[str, tuple[Var, ...]]:
    """``added`` plus, for each Spmd/Group wrapper calling such a function, fresh copies of
    the parameters it will forward (a wrapper may call a wrapper)."""
    added = dict(added)
    changed = True
    while changed:
        changed = False
        for fn in program.functions:
            if fn.func_type in WRAPPERS and fn.name not in added:
                extra = tuple(v for name in dict.fromkeys(callees(fn)) if name in added
                              for v in added[name])
                if extra:
                    added[fn.name] = tuple(Var(v.name, v.type, fn.loc) for v in extra)
                    changed = True
    return added


def thread_added_outputs(program: Program, added: dict[str, tuple[Var, ...]]) -> Program:
    """``added`` maps a function name to the Out parameters already appended to it (wrappers
    included, see ``with_wrappers``); wrappers forward theirs, hosts allocate them at each
    call."""
    functions = []
    for fn in program.functions:
        if fn.func_type in WRAPPERS and fn.name in added:
            fn = _forward(fn, added)
        elif fn.func_type in HOSTS and set(callees(fn)) & set(added):
            fn = allocate_at_calls(fn, added)
        functions.append(fn)
    return replace(program, functions=tuple(functions))


def callees(fn: Function) -> list[str]:
    """Names of the program functions ``fn`` calls, in order."""
    names: list[str] = []

    class _Calls(IRVisitor):
        def visit_call(self, call: Call) -> None:
            if call.is_function:
                names.append(call.op)
            super().visit_call(call)

    _Calls().visit(fn.body)
    return names


class AppendArgs(IRMutator):
    """Appends ``added[callee]`` to the arguments of every call of such a callee."""

    def __init__(self, added: dict[str, tuple[Var, ...]]):
        super().__init__()
        self.added = added

    def mutate_call(self, node: Call):
        node = super().mutate_call(node)
        if node.is_function and node.op in self.added:
            return replace(node, args=node.args + tuple(self.added[node.op]))
        return node


def _forward(fn: Function, added: dict[str, tuple[Var, ...]]) -> Function:
    """A wrapper takes fresh copies of its callees' added parameters and passes them on."""
    mine = added[fn.name]
    taken = iter(mine)
    inner = {name: tuple(next(taken) for _ in added[name])
             for name in dict.fromkeys(callees(fn)) if name in added}
    body = AppendArgs(inner).mutate(fn.body)
    return replace(fn, params=fn.params + tuple(Param(v, Direction.Out) for v in mine), body=body)


def allocate_at_calls(fn: Function, added: dict[str, tuple[Var, ...]]) -> Function:
    """Before each call of a function in ``added``: one fresh tensor per added parameter."""

    def rewrite(seq: SeqStmts) -> SeqStmts:
        out = []
        for s in seq.stmts:
            if isinstance(s, (ForStmt, WhileStmt)):
                s = replace(s, body=rewrite(s.body))
            elif isinstance(s, IfStmt):
                s = replace(s, then_body=rewrite(s.then_body), else_body=None if
                            s.else_body is None else rewrite(s.else_body))
            call = s.value if isinstance(s, AssignStmt) else getattr(s, "expr", None)
            if isinstance(call, Call) and call.is_function and call.op in added:
                fresh = []
                for param in added[call.op]:
                    var = Var(param.name, param.type, s.loc)
                    out.append(AssignStmt(var, make_call(
                        "tensor.create", (list(param.type.shape),), {"dtype": param.type.dtype},
                        loc=s.loc), s.loc))
                    fresh.append(var)
                call = replace(call, args=call.args + tuple(fresh))
                s = replace(s, value=call) if isinstance(s, AssignStmt) else EvalStmt(call, s.loc)
            out.append(s)
        return replace(seq, stmts=tuple(out))

    return replace(fn, body=rewrite(fn.body))
