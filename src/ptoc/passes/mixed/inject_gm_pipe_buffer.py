"""InjectGMPipeBuffer (PyPTO pass 22): on targets whose cross-core rings live in GM (a2a3),
give every kernel that sets up a pipe a ``__gm_pipe_buffer`` Out-tensor parameter and pass it
down from the host.

* Seeds: AIC/AIV functions whose body calls ``system.{aic,aiv}_initialize_pipe``; each gets
  the parameter, and its ``initialize_pipe`` calls take it as ``gm_slot_buffer``.
* Callers that are themselves kernels or Groups get the parameter too and forward it; an
  Orchestration or Opaque caller allocates it instead (``pl.tensor.create``) just before the
  call.
* The buffer holds every pipe's rings: ``slot_num * slot_size`` bytes per direction, the
  vector -> cube ring after the cube -> vector one (``ptoc.backend.cross_core``). PyPTO leaves
  a placeholder that its codegen sizes; ptoc sizes it here (FP32 elements), so the host run
  allocates exactly what the kernels use.

A no-op on targets whose rings are in the consumer's memory (a5).
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.backend.cross_core import DIR_C2V, DIR_V2C, cluster_model
from ptoc.dtypes import DataType, Direction, FunctionType
from ptoc.errors import PassError
from ptoc.ir.nodes import Call, Function, Param, Program, Var
from ptoc.ir.types import TensorType
from ptoc.ir.visitor import IRMutator, calls_in
from ptoc.passes.added_outputs import HOSTS, allocate_at_calls, callees
from ptoc.passes.base import program_pass
from ptoc.passes.manager import register_default_pass

PARAM = "__gm_pipe_buffer"
INIT_OPS = ("system.aic_initialize_pipe", "system.aiv_initialize_pipe")


@program_pass(name="InjectGMPipeBuffer", required=("SSAForm",),
              handles_while_loops=True)
def inject_gm_pipe_buffer(program: Program, ctx) -> Program:
    """Thread the GM pipe buffer from the host to every pipe-using kernel (module docstring)."""
    if not cluster_model(ctx.get_backend()).ring_in_gm:
        return program
    sizes = {fn.name: _ring_bytes(fn) for fn in program.functions}
    seeds = [name for name, size in sizes.items() if size]
    if not seeds:
        return program
    needs: dict[str, int] = {}
    work = list(seeds)
    for name in seeds:
        needs[name] = sizes[name]
    while work:
        name = work.pop()
        for caller in program.functions:
            if caller.func_type in HOSTS or name not in callees(caller):
                continue
            size = max(needs.get(caller.name, 0), needs[name])
            if needs.get(caller.name) != size:
                needs[caller.name] = size
                work.append(caller.name)
    functions = []
    for fn in program.functions:
        if fn.name in needs:
            fn = _with_param(fn, needs[fn.name], set(needs))
        elif fn.func_type in HOSTS and set(callees(fn)) & set(needs):
            fn = allocate_at_calls(fn, {name: (Var(PARAM, _buffer_type(size), fn.loc),)
                                        for name, size in needs.items()})
        functions.append(fn)
    return replace(program, functions=tuple(functions))


register_default_pass(inject_gm_pipe_buffer)


def _ring_bytes(fn: Function) -> int:
    """Bytes of GM the function's pipes need (0 when it sets none up)."""
    total = 0
    if fn.func_type in (FunctionType.AIC, FunctionType.AIV):
        for call in calls_in(fn.body, lambda call: call.op in INIT_OPS):
            directions = bin(call.kwarg("dir_mask") & (DIR_C2V | DIR_V2C)).count("1")
            ring = call.kwarg("slot_size") * call.kwarg("slot_num")
            total = max(total, ring * directions)
    return total


def _buffer_type(nbytes: int) -> TensorType:
    return TensorType((-(-nbytes // DataType.FP32.nbytes),), DataType.FP32)


class _Forward(IRMutator):
    """Adds the buffer to pipe setups and to calls of functions that now take it."""

    def __init__(self, buffer: Var, takes: set[str]):
        super().__init__()
        self.buffer = buffer
        self.takes = takes

    def mutate_call(self, node: Call):
        node = super().mutate_call(node)
        if node.op in INIT_OPS and node.kwarg("gm_slot_buffer") is None:
            return replace(node, kwargs=node.kwargs + (("gm_slot_buffer", self.buffer),))
        if node.is_function and node.op in self.takes:
            return replace(node, args=node.args + (self.buffer,))
        return node


def _with_param(fn: Function, nbytes: int, takes: set[str]) -> Function:
    if any(p.var.name == PARAM for p in fn.params):
        raise PassError(f"InjectGMPipeBuffer: '{fn.name}' already has a parameter named {PARAM}",
                        fn.loc, hint=f"rename that parameter; {PARAM} is reserved")
    buffer = Var(PARAM, _buffer_type(nbytes), fn.loc)
    body = _Forward(buffer, takes).mutate(fn.body)
    return replace(fn, params=fn.params + (Param(buffer, Direction.Out),), body=body)
